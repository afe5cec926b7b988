"""What the synchronous minibatch runners share: startup, the loop, diagnostics, snapshots, shutdown.

The runners themselves, ``MinibatchRl`` and ``MinibatchRlEval``, are in
:mod:`rlrun.runners.minibatch_rl`.
"""

from __future__ import annotations

import math
import numbers
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rlrun.envs.traj_info import TrajInfo
from rlrun.runners import checkpoint as ckpt
from rlrun.runners.base import BaseRunner
from rlrun.runners.checkpoint import CheckpointInfo, CheckpointPolicy
from rlrun.runners.contracts import AgentContract, AlgorithmContract, SamplerContract
from rlrun.runners.interrupt import StopSignals, TrainingInterrupted, interrupted_error
from rlrun.runners.master_affinity import apply_master_affinity, check_affinity, fit_master_threads_to_workers
from rlrun.utils.logging import logger
from rlrun.utils.logging.progress import ProgressBar, progress_bar_wanted
from rlrun.utils.seed import make_seed, set_seed

__all__ = ["MinibatchRlBase"]


class MinibatchRlBase(BaseRunner):
    """Startup, the training loop, diagnostics and snapshots shared by the minibatch runners.

    ``n_steps`` counts environment steps over all envs; training runs
    ``n_itr = ceil(n_steps / batch_size)`` iterations of ``sampler.batch_size`` steps each. Diagnostics
    are logged every ``log_interval_itrs = max(1, log_interval_steps // batch_size)`` iterations and after
    the last one. ``affinity`` is an rlpyt affinity dict (``master_cpus``, ``master_torch_threads``,
    ``cuda_idx``, ``set_affinity``, plus the sampler's keys) or None for no pinning and the CPU.
    Without ``master_torch_threads``, a run with a parallel sampler trains with the torch threads its
    workers leave free (1 when they fill the CPUs, the default); a serial run keeps torch's count.
    ``seed=None`` draws a fresh seed; the sampler gets ``seed + 1``.

    Checkpoints (see docs/checkpoints.md): ``checkpoint`` (a :class:`CheckpointPolicy`, or True for the
    default one: after every log row, keeping 2) writes them into ``<log folder>/checkpoints``;
    ``resume=True`` continues from the newest one in the log folder (open it with
    ``logger_context(..., resume=True)``), ``resume=<run folder or checkpoint file>`` from another one.
    A run that resumes also writes checkpoints (the default policy unless ``checkpoint`` says otherwise).
    SIGINT and SIGTERM stop the run after the iteration in progress with a checkpoint, then raise
    :class:`~rlrun.runners.interrupt.TrainingInterrupted`.

    Console (see docs/runners_and_logging.md): ``progress_bar`` shows a bar of env steps, speed, time
    left and the latest average return (None: on a terminal, or as ``RLRUN_PROGRESS`` says). Once the
    speed is known (:attr:`speed_report_after_s`), one line says how long the whole run will take.
    Each log row shows the figures in :attr:`console_columns` and :attr:`console_traj_stats` and
    the losses on the console; ``progress.csv`` and TensorBoard get every column.

    Subclasses change one step: :meth:`on_training_start` (before the first iteration) and
    :meth:`on_log_interval` (when diagnostics are due).
    """

    _eval = False  # rlpyt's flag for "reports evaluation trajectories"; kept for code that reads it
    # Put before the runner's own columns (Iteration, CumSteps, ...), as rlpyt did, so plotting
    # scripts written for rlpyt's progress.csv find "Diagnostics/CumSteps".
    diagnostics_prefix: str = "Diagnostics/"
    # What the console table shows of a log row (progress.csv and TensorBoard get every column): the
    # runner's own columns named here, these statistics of the episodes' fields, and the Average of
    # each optimiser field that is a loss or the entropy.
    console_columns: tuple[str, ...] = ("Iteration", "CumTime (s)", "CumSteps", "StepsPerSecond")
    console_traj_stats: dict[str, tuple[str, ...]] = {
        "Return": ("Average", "Min", "Max"),
        "Length": ("Average",),
        "GameScore": ("Average",),  # Atari's unclipped score
    }
    # Seconds of training after which the speed is measured and the run's duration estimated once.
    speed_report_after_s: float = 10.0
    # SIGINT/SIGTERM finish the iteration and checkpoint (see train()); a SyncRl rank started by its
    # master leaves that to the master.
    handles_stop_signals: bool = True

    def __init__(
        self,
        algo: AlgorithmContract,
        agent: AgentContract,
        sampler: SamplerContract,
        n_steps: int | float,
        seed: int | None = None,
        affinity: dict[str, Any] | None = None,
        log_interval_steps: int | float = 1e5,
        checkpoint: CheckpointPolicy | bool | None = None,
        resume: bool | str | os.PathLike[str] = False,
        progress_bar: bool | None = None,
    ) -> None:
        name = type(self).__name__
        if not n_steps >= 1:
            raise ValueError(
                f"{name}: n_steps is the number of env steps to train for and must be >= 1, got {n_steps!r}."
            )
        if not log_interval_steps >= 1:
            raise ValueError(
                f"{name}: log_interval_steps is the number of env steps between log rows and must be >= 1, "
                f"got {log_interval_steps!r}."
            )
        self.algo = algo
        self.agent = agent
        self.sampler = sampler
        self.n_steps = int(n_steps)
        self.seed = None if seed is None else int(seed)
        self.affinity = check_affinity(affinity, name)
        self._affinity_arg = affinity  # what the sampler receives: the user's own value, None included
        self.log_interval_steps = int(log_interval_steps)
        self.min_itr_learn = algo.min_itr_learn
        # A distributed runner sets these before startup().
        self.rank = 0
        self.world_size = 1
        # Set by startup().
        self.n_itr = 0
        self.log_interval_itrs = 1
        self.itr_batch_size = 0
        self._restore_master_affinity: Callable[[], None] | None = None
        if not isinstance(checkpoint, (CheckpointPolicy, bool, type(None))):
            raise TypeError(f"{name}: checkpoint must be a CheckpointPolicy, True, False or None; got {checkpoint!r}.")
        if checkpoint is True or (checkpoint is None and resume is not False):
            checkpoint = CheckpointPolicy()
        self.checkpoint_policy: CheckpointPolicy | None = checkpoint or None
        self.resume = resume
        self._start_itr = 0  # after a resume: the iteration after the checkpoint's
        self._last_checkpoint_itr: int | None = None
        self.resumed_from: CheckpointInfo | None = None
        self.progress_bar = progress_bar
        self._progress: ProgressBar | None = None
        self._speed_reported = False
        # Diagnostics, set by initialize_logging().
        self._opt_infos: dict[str, list[float]] = {}
        self._last_diagnostics: dict[str, Any] = {}

    # ---- the loop ----

    def train(self) -> dict[str, Any]:
        """Start up (resuming from a checkpoint if asked), run the iterations left of ``n_itr``, shut down;
        return the last logged row (key -> value).

        The sampler is shut down also when any step raises; the original error propagates. A first
        SIGINT or SIGTERM lets the iteration in progress finish, writes a checkpoint (when checkpoints
        are on) and raises :class:`~rlrun.runners.interrupt.TrainingInterrupted`; a second one abandons
        the iteration at once.
        """
        with StopSignals(enabled=self.handles_stop_signals) as stop:
            try:
                n_itr = self.startup()
                self._stop_if_requested(stop, self._start_itr - 1 if self._start_itr else None)
                if self.resumed_from is None:
                    self.on_training_start()
                self._open_progress_bar()
                loop_start = time.perf_counter()
                for itr in range(self._start_itr, n_itr):
                    logger.set_iteration(itr)
                    with logger.prefix(f"itr #{itr} "):
                        self.train_iteration(itr)
                        if self._progress is not None:
                            self._progress.update(self.itr_batch_size, self.latest_return())
                        if not self._speed_reported:
                            self._report_speed(itr, time.perf_counter() - loop_start)
                        if (itr + 1) % self.log_interval_itrs == 0 or itr == n_itr - 1:
                            self.on_log_interval(itr)
                        policy = self.checkpoint_policy
                        if policy is not None and (policy.due(itr, self.log_interval_itrs) or itr == n_itr - 1):
                            self.save_checkpoint(itr)
                    self._stop_if_requested(stop, itr)
            except BaseException as e:
                self._close_progress_bar()
                self._shutdown_after_error()
                if isinstance(e, TrainingInterrupted):
                    logger.log(f"{e} The sampler is shut down; resume=True continues from the latest checkpoint.")
                raise
        self._close_progress_bar()
        logger.log("Training complete.")
        self.shutdown()
        return dict(self._last_diagnostics)

    def train_iteration(self, itr: int) -> None:
        """One iteration of :meth:`train`'s loop without its log rows, checkpoints or console: sample a batch,
        optimise on it, keep its diagnostics. Benchmarks time exactly this (``benchmarks/a2c_floor.py``)."""
        self.agent.sample_mode(itr)
        samples, traj_infos = self.sampler.obtain_samples(itr)
        self.agent.train_mode(itr)
        opt_info = self.algo.optimize_agent(itr, samples)
        self.store_diagnostics(itr, traj_infos, opt_info)

    def _stop_if_requested(self, stop: StopSignals, itr: int | None) -> None:
        """After a stop signal: the checkpoint of ``itr`` (the last finished iteration), then the exception."""
        if stop.requested is None:
            return
        path = None
        if itr is not None and self.checkpoint_policy is not None:
            if self._last_checkpoint_itr != itr:
                self.save_checkpoint(itr)
            path = str(ckpt.checkpoint_path(self._checkpoint_folder(), itr))
        raise interrupted_error(stop.requested, itr=itr, checkpoint=path)

    # ---- the console: progress bar and speed ----

    def _open_progress_bar(self) -> None:
        # One bar per run: only the first rank draws it, and not while the logger is silenced.
        if self.rank != 0 or logger.is_disabled() or not progress_bar_wanted(self.progress_bar):
            return
        total = self.n_itr * self.itr_batch_size
        self._progress = ProgressBar(total, initial=self._start_itr * self.itr_batch_size)

    def _close_progress_bar(self) -> None:
        if self._progress is not None:
            self._progress.close()
            self._progress = None

    def latest_return(self) -> float | None:
        """The average return the progress bar shows; None when no episode has been reported yet."""
        value = self._last_diagnostics.get("ReturnAverage")
        return None if value is None else float(value)

    def _report_speed(self, itr: int, elapsed: float) -> None:
        """Once, after :attr:`speed_report_after_s` seconds of training or at the first log row: the speed
        and how long the run will take at it, so a long run says early that it is long."""
        due = (itr + 1) % self.log_interval_itrs == 0 or itr == self.n_itr - 1
        if elapsed < self.speed_report_after_s and not due:
            return
        self._speed_reported = True
        done = itr + 1 - self._start_itr
        if elapsed <= 0 or done <= 0:
            return
        speed = done * self.itr_batch_size / elapsed
        left_s = (self.n_itr - itr - 1) * self.itr_batch_size / speed
        logger.log(
            f"Speed: {speed:,.0f} steps/s over the first {done * self.itr_batch_size:,} steps; the "
            f"{self.n_itr * self.itr_batch_size:,} steps of this run take about {format_duration(left_s)} more."
        )

    def on_training_start(self) -> None:
        """Called after startup, before the first iteration."""

    def on_log_interval(self, itr: int) -> None:
        """Called after iteration ``itr`` when diagnostics are due."""
        raise NotImplementedError

    # ---- startup and shutdown ----

    def startup(self) -> int:
        """Pin the process, seed, initialise sampler (and with it the agent), fit the torch threads to its
        workers, agent device, algorithm and logging, in that order. Returns ``n_itr``."""
        if self.checkpoint_policy is not None and logger.get_snapshot_dir() is None:
            raise ValueError(
                f"{type(self).__name__}: checkpoints and resume need a log folder to keep the checkpoints in; "
                "call train() inside logger_context(...) (with resume=True to continue a run in its folder)."
            )
        self._restore_master_affinity = apply_master_affinity(self.affinity)
        if self.seed is None:
            self.seed = make_seed()
        set_seed(self.seed)
        logger.log(f"Runner seed: {self.seed} (sampler gets {self.seed + 1}).")
        examples = self.sampler.initialize(
            agent=self.agent,
            affinity=self._affinity_arg,
            seed=self.seed + 1,
            bootstrap_value=self.algo.bootstrap_value,
            traj_info_kwargs=self.get_traj_info_kwargs(),
            rank=self.rank,
            world_size=self.world_size,
        )
        # A parallel sampler's workers (rlpyt's ``n_worker``; serial samplers have none) each keep a CPU busy.
        fit_master_threads_to_workers(self.affinity, self.sampler.n_worker)
        self.itr_batch_size = self.sampler.batch_spec.size * self.world_size
        n_itr = self.get_n_itr()
        self.agent.to_device(self.affinity.get("cuda_idx", None))
        if self.world_size > 1:
            self.agent.data_parallel()
        self.algo.initialize(
            agent=self.agent,
            n_itr=n_itr,
            batch_spec=self.sampler.batch_spec,
            mid_batch_reset=self.sampler.mid_batch_reset,
            examples=examples,
            world_size=self.world_size,
            rank=self.rank,
        )
        # Replay-based algorithms know when learning starts only once they know the batch size.
        self.min_itr_learn = self.algo.min_itr_learn
        self.initialize_logging()
        if self.resume is not False:
            self.load_checkpoint()
        logger.mark_run_started()
        return n_itr

    def get_traj_info_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for the sampler's TrajInfo: the algorithm's discount."""
        return dict(discount=self.algo.discount)

    def get_n_itr(self) -> int:
        """Set and return ``n_itr`` and ``log_interval_itrs`` from the step counts and the batch size."""
        self.log_interval_itrs = max(1, self.log_interval_steps // self.itr_batch_size)
        self.n_itr = math.ceil(self.n_steps / self.itr_batch_size)
        logger.log(
            f"Running {self.n_itr} iterations of {self.itr_batch_size} steps ({self.n_itr * self.itr_batch_size:,} "
            f"env steps), logging every {self.log_interval_itrs} iterations "
            f"({self.log_interval_itrs * self.itr_batch_size:,} steps)."
        )
        return self.n_itr

    def shutdown(self) -> None:
        """Shut the sampler down and undo the CPU pinning of startup."""
        try:
            self.sampler.shutdown()
        finally:
            if self._restore_master_affinity is not None:
                self._restore_master_affinity()
                self._restore_master_affinity = None

    def _shutdown_after_error(self) -> None:
        # An error here must not hide the one that stopped training.
        try:
            self.shutdown()
        except Exception as e:
            logger.log(f"WARNING: shutdown after a training error also failed: {type(e).__name__}: {e}")

    # ---- snapshots ----

    def get_itr_snapshot(self, itr: int) -> dict[str, Any]:
        """Everything a checkpoint of iteration ``itr`` holds: counters, agent and optimiser state."""
        return dict(
            itr=itr,
            cum_steps=self._itrs_done * self.itr_batch_size,
            agent_state_dict=self.agent.state_dict(),
            optimizer_state_dict=self.algo.optim_state_dict(),
        )

    def save_itr_snapshot(self, itr: int) -> None:
        """Hand the snapshot to the logger, which saves it or not according to its snapshot mode."""
        if logger.get_snapshot_dir() is None or logger.get_snapshot_mode() == "none":
            return  # skip copying the state dicts
        paths = logger.save_itr_params(itr, self.get_itr_snapshot(itr))
        if paths:
            logger.log(f"Saved snapshot {', '.join(paths)}", console=False)

    # ---- checkpoints ----

    def _checkpoint_folder(self) -> Path:
        snapshot_dir = logger.get_snapshot_dir()
        assert snapshot_dir is not None  # startup() checked
        return ckpt.checkpoint_dir(snapshot_dir)

    def checkpoint_state(self, itr: int) -> dict[str, Any]:
        """Everything a resumed run needs to continue after iteration ``itr``: the components' state
        (:func:`~rlrun.runners.checkpoint.training_state`), the runner's counters, where the log files
        stand, and the random generators (taken last, as they are when the next iteration starts)."""
        policy = self.checkpoint_policy
        return dict(
            format=ckpt.FORMAT_VERSION,
            itr=itr,
            cum_steps=self._itrs_done * self.itr_batch_size,
            batch_size=self.itr_batch_size,
            **ckpt.training_state(self.agent, self.algo, self.sampler, replay=policy is None or policy.replay),
            runner=self.diagnostics_state_dict(),
            logger=logger.tabular_outputs_state(),
            rng=ckpt.capture_rng_state(),
        )

    def save_checkpoint(self, itr: int) -> CheckpointInfo:
        """Write the checkpoint of iteration ``itr`` and delete those beyond the policy's ``keep_last``."""
        folder = self._checkpoint_folder()
        info = ckpt.write_checkpoint(folder, itr, self.checkpoint_state(itr), self._itrs_done * self.itr_batch_size)
        ckpt.prune_checkpoints(folder, self.checkpoint_policy.keep_last if self.checkpoint_policy else 1)
        self._last_checkpoint_itr = itr
        return info

    def _resume_source(self) -> Path:
        if self.resume is True:
            snapshot_dir = logger.get_snapshot_dir()
            assert snapshot_dir is not None  # startup() checked
            return Path(snapshot_dir)
        return Path(self.resume)  # type: ignore[arg-type]  # a path; False never gets here

    def load_checkpoint(self) -> None:
        """Continue from the newest usable checkpoint of ``resume``; called at the end of startup.

        Without one, the run starts at iteration 0 and the log rows an earlier attempt left are cut.
        """
        source = self._resume_source()
        found = ckpt.load_latest_checkpoint(source)
        if found is None:
            logger.log(f"No checkpoint in {source}: starting at iteration 0.")
            logger.rewind_tabular_outputs({})
            return
        info, state = found
        if state["batch_size"] != self.itr_batch_size:
            raise ckpt.CheckpointError(
                f"{info.path} was saved by a run of {state['batch_size']} steps per iteration, this one takes "
                f"{self.itr_batch_size}: resume with the same batch_T, batch_B and world size."
            )
        ckpt.load_training_state(state, self.agent, self.algo, self.sampler)
        self.load_diagnostics_state_dict(state["runner"])
        logger.rewind_tabular_outputs(state["logger"])
        ckpt.restore_rng_state(state["rng"])
        self._start_itr = int(state["itr"]) + 1
        self._last_checkpoint_itr = int(state["itr"])
        self.resumed_from = info
        envs = "with its envs mid-episode" if self.sampler.restores_env_state else "with fresh envs"
        logger.log(
            f"Resumed from {info.path}: {info.cum_steps} steps done, continuing at iteration {self._start_itr} "
            f"of {self.n_itr} {envs}."
        )

    def diagnostics_state_dict(self) -> dict[str, Any]:
        """The counters and values behind the next log rows (times as durations)."""
        now = time.perf_counter()
        return dict(
            cum_time=now - self._start_time,
            since_last_log=now - self._last_time,
            cum_completed_trajs=self._cum_completed_trajs,
            last_update_counter=self._last_update_counter,
            itrs_done=self._itrs_done,
            itrs_at_last_log=self._itrs_at_last_log,
            opt_infos=self._opt_infos,
            last_diagnostics=self._last_diagnostics,
        )

    def load_diagnostics_state_dict(self, state: dict[str, Any]) -> None:
        now = time.perf_counter()
        self._start_time = now - state["cum_time"]
        self._last_time = now - state["since_last_log"]
        self._cum_time = state["cum_time"]
        self._cum_completed_trajs = state["cum_completed_trajs"]
        self._last_update_counter = state["last_update_counter"]
        self._itrs_done = state["itrs_done"]
        self._itrs_at_last_log = state["itrs_at_last_log"]
        self._opt_infos = {k: list(v) for k, v in state["opt_infos"].items()}
        self._last_diagnostics = dict(state["last_diagnostics"])

    # ---- diagnostics ----

    def initialize_logging(self) -> None:
        """Reset the counters and buffers diagnostics are computed from; called at the end of startup."""
        self._opt_infos = {k: [] for k in self.algo.opt_info_fields}
        self._start_time = self._last_time = time.perf_counter()
        self._cum_time = 0.0
        self._cum_completed_trajs = 0
        self._last_update_counter = 0
        self._itrs_done = 0
        self._itrs_at_last_log = 0
        self._last_diagnostics = {}
        self._traj_info_keys = self._template_traj_info_keys()

    def _template_traj_info_keys(self) -> list[str]:
        # progress.csv fixes its columns at the first row, which may come before any trajectory has
        # finished; a fresh TrajInfo tells the statistics' names up front.
        try:
            template = self.sampler.TrajInfoCls(**self.get_traj_info_kwargs())
        except Exception:
            template = TrajInfo()
        return [k for k in template if not k.startswith("_")]

    def store_diagnostics(self, itr: int, traj_infos: Sequence[Any], opt_info: Any) -> None:
        """Keep what iteration ``itr`` produced until the next log row."""
        self._itrs_done = itr + 1
        self._cum_completed_trajs += len(traj_infos)
        for key, values in self._opt_infos.items():
            new = getattr(opt_info, key, [])
            values.extend(new if isinstance(new, (list, tuple)) else [new])

    def log_diagnostics(
        self, itr: int, traj_infos: Sequence[Any] | None = None, eval_time: float = 0.0, prefix: str | None = None
    ) -> dict[str, Any]:
        """Save a snapshot and write one row of diagnostics; return the row.

        The runner's own columns get ``prefix`` (default :attr:`diagnostics_prefix`) before their names.

        ``eval_time`` (s) is left out of the training speed. Rates are ``nan`` for a row with no new
        iterations (the evaluation before training).
        """
        if itr >= self.min_itr_learn - 1:
            self.save_itr_snapshot(itr)
        now = time.perf_counter()
        cum_time = now - self._start_time
        train_time = now - self._last_time - eval_time
        new_samples = (self._itrs_done - self._itrs_at_last_log) * self.itr_batch_size
        update_counter = self.algo.update_counter
        new_updates = update_counter - self._last_update_counter
        rates_valid = new_samples > 0 and train_time > 0
        cum_steps = self._itrs_done * self.itr_batch_size

        self._cum_time = cum_time
        logger.set_iteration(itr)
        shown = set(self.console_columns)

        def record(key: str, value: Any) -> None:
            logger.record_tabular(key, value, console=key in shown)

        with logger.tabular_prefix(self.diagnostics_prefix if prefix is None else prefix):
            record("Iteration", itr)
            record("CumTime (s)", cum_time)
            record("CumSteps", cum_steps)
            record("CumCompletedTrajs", self._cum_completed_trajs)
            record("CumUpdates", update_counter)
            record("StepsPerSecond", new_samples / train_time if rates_valid else math.nan)
            record("UpdatesPerSecond", new_updates / train_time if rates_valid else math.nan)
            algo_batch_size = self.algo.batch_size
            if isinstance(algo_batch_size, numbers.Integral) and not isinstance(algo_batch_size, bool):
                # Samples trained on per sample collected; world_size cancels in the cumulative ratio.
                replay_ratio = (
                    new_updates * algo_batch_size * self.world_size / new_samples if new_samples else math.nan
                )
                cum_replay_ratio = (
                    algo_batch_size * update_counter * self.world_size / cum_steps if cum_steps else math.nan
                )
                record("ReplayRatio", replay_ratio)
                record("CumReplayRatio", cum_replay_ratio)
            for key, value in self.extra_diagnostics(traj_infos).items():
                record(key, value)
        self._log_infos(traj_infos, itr)
        self._last_diagnostics = logger.dump_tabular(with_prefix=False)

        self._last_time = now
        self._last_update_counter = update_counter
        self._itrs_at_last_log = self._itrs_done
        return self._last_diagnostics

    def extra_diagnostics(self, traj_infos: Sequence[Any] | None) -> dict[str, Any]:
        """Runner-specific values for the row, recorded after the common ones (under the same prefix)."""
        return {}

    def _log_infos(self, traj_infos: Sequence[Any] | None, itr: int) -> None:
        """Statistics of each trajectory field (skipping ``_`` keys) and of each optimiser field; then
        clear the optimiser values."""
        traj_infos = list(traj_infos or [])
        keys = list(self._traj_info_keys)
        for info in traj_infos[:1]:
            keys += [k for k in info if not k.startswith("_") and k not in keys]
        note = None if traj_infos else self.no_episode_note(itr)
        if note:
            logger.log(note)
        for key in keys:
            values = [info[key] for info in traj_infos if key in info]
            logger.record_tabular_misc_stat(key, values, console=self.console_traj_stats.get(key, False))
        for key, values in self._opt_infos.items():
            logger.record_tabular_misc_stat(key, values, console=_console_opt_stats(key))
        self._opt_infos = {k: [] for k in self._opt_infos}

    def no_episode_note(self, itr: int) -> str | None:
        """The console line for log row ``itr`` when it has no episodes (so no return to show), or None."""
        return "No episode has finished yet, so this row has no return."


def _console_opt_stats(key: str) -> tuple[str, ...]:
    """The optimiser statistics a person reads on the console: the Average of losses and of the entropy."""
    name = key.lower()
    return ("Average",) if "loss" in name or name == "entropy" else ()


def format_duration(seconds: float) -> str:
    """``'42 s'``, ``'12 min'``, ``'3.4 h'`` or ``'2.1 days'``: a duration as a person reads it."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
