"""The synchronous minibatch runners' loop: startup; per iteration sample, optimise, keep diagnostics, log and
checkpoint when due; shutdown. It composes :class:`~rlrun.runners.diagnostics.Diagnostics` (log rows),
:class:`~rlrun.runners.checkpointer.Checkpointer` (checkpoints and snapshots, in the run folder it is given)
and :class:`~rlrun.runners.console.Console` (progress bar). rlpyt's methods stay the steps, so a subclass's
override of one is called. ``MinibatchRl`` and ``MinibatchRlEval`` are in :mod:`rlrun.runners.minibatch_rl`.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic

import torch

from rlrun.algos.base import OptInfoTuple
from rlrun.envs.traj_info import TrajInfo
from rlrun.runners.base import BaseRunner
from rlrun.runners.checkpoint import (
    CheckpointInfo,
    CheckpointPolicy,
    CheckpointState,
    NothingToResumeError,
    checkpoint_dir,
)
from rlrun.runners.checkpointer import Checkpointer
from rlrun.runners.console import Console
from rlrun.runners.contracts import AgentT, AlgorithmContract, RestartsWorkers, SamplerContract
from rlrun.runners.diagnostics import Diagnostics, traj_info_keys
from rlrun.runners.interrupt import StopSignals, TrainingInterrupted, interrupted_error
from rlrun.runners.master_affinity import apply_master_affinity, check_affinity, fit_master_threads_to_workers
from rlrun.runners.run_record import AGENT_FILE, RunRecord, qualified_name, resume_advice, write_run_record
from rlrun.runners.videos import add_video_to_tensorboard, record_eval_video
from rlrun.utils.logging import logger
from rlrun.utils.logging.progress import progress_bar_wanted
from rlrun.utils.seed import make_seed, set_seed

__all__ = ["MinibatchRlBase"]


class MinibatchRlBase(BaseRunner, Generic[AgentT]):
    """The loop, startup and shutdown shared by the minibatch runners; rlpyt's arguments and methods.

    ``n_steps`` counts env steps over all envs: ``n_itr = ceil(n_steps / batch_size)`` iterations. A row is
    logged every ``log_interval_itrs = max(1, log_interval_steps // batch_size)`` iterations and after the
    last. ``affinity``: an rlpyt affinity dict (``master_cpus``, ``master_torch_threads``, ``cuda_idx``,
    ``set_affinity``, the sampler's keys) or None (no pinning, the CPU; beside a parallel sampler's
    workers, the torch threads they leave free). ``seed=None`` draws one; the sampler gets ``seed + 1``.

    rlrun's keywords: ``checkpoint`` (a :class:`CheckpointPolicy`, or True for the default) and ``resume``
    (True: the newest checkpoint of the log folder; or a run folder or checkpoint file), see
    docs/checkpoints.md; ``progress_bar`` (None: on a terminal, or as ``RLRUN_PROGRESS`` says), see
    docs/runners_and_logging.md. SIGINT and SIGTERM stop the run after the iteration in progress with a
    checkpoint, then raise :class:`~rlrun.runners.interrupt.TrainingInterrupted`.

    Subclasses change one step: :meth:`on_training_start`, :meth:`on_log_interval`,
    :meth:`extra_diagnostics` (columns), the console settings below, or any of rlpyt's methods.
    """

    _eval = False  # rlpyt's flag: the runner reports evaluation trajectories (the sampler must run them)
    # How many completed training trajectories the log rows' statistics cover; None: the runner reports
    # evaluation trajectories instead (MinibatchRl sets it).
    log_traj_window: int | None = None
    # The console table of a log row (progress.csv gets every column): these runner columns, these
    # statistics of the episodes' fields, and the Average of each optimiser loss and the entropy.
    console_columns: tuple[str, ...] = ("Iteration", "CumTime (s)", "CumSteps", "StepsPerSecond")
    console_traj_stats: dict[str, tuple[str, ...]] = {
        "Return": ("Average", "Min", "Max"),
        "Length": ("Average",),
        "GameScore": ("Average",),  # Atari's unclipped score
    }
    # Seconds of training after which the speed is measured and the run's duration estimated once.
    speed_report_after_s: float = 10.0
    # SIGINT/SIGTERM finish the iteration and checkpoint; a SyncRl rank started by its master leaves that to it.
    handles_stop_signals: bool = True

    def __init__(
        self,
        algo: AlgorithmContract[AgentT],
        agent: AgentT,
        sampler: SamplerContract,
        n_steps: int | float,
        seed: int | None = None,
        affinity: dict[str, Any] | None = None,
        log_interval_steps: int | float = 1e5,
        *,
        checkpoint: CheckpointPolicy | bool | None = None,
        resume: bool | str | os.PathLike[str] = False,
        progress_bar: bool | None = None,
        video_every: int | None = None,
        video_max_steps: int = 1000,
    ) -> None:
        name = type(self).__name__
        for key, value, what in (
            ("n_steps", n_steps, "to train for"),
            ("log_interval_steps", log_interval_steps, "between log rows"),
        ):
            if not value >= 1:
                raise ValueError(f"{name}: {key} is the number of env steps {what} and must be >= 1, got {value!r}.")
        if self._eval and sampler.eval_n_envs == 0:
            raise ValueError(
                f"{name} evaluates the agent, but the sampler has eval_n_envs=0. Build the sampler with "
                "eval_n_envs > 0 and eval_max_steps, or use MinibatchRl to report training episodes instead."
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
        self.checkpoint_policy = CheckpointPolicy.from_arg(checkpoint, resume, name)
        self.resume = resume
        self._start_itr = 0  # after a resume: the iteration after the checkpoint's
        self.resumed_from: CheckpointInfo | None = None
        self.progress_bar = progress_bar
        if video_every is not None and (
            isinstance(video_every, bool) or int(video_every) != video_every or video_every < 1
        ):
            raise ValueError(f"{name}: video_every is a number of log rows (>= 1) between videos, got {video_every!r}.")
        self.video_every = video_every
        self.video_max_steps = int(video_max_steps)
        self._log_rows = 0
        # The parts; startup() builds the real ones.
        self.diagnostics = Diagnostics()
        self.checkpointer = Checkpointer(None)
        self.console = Console(0, 0, 0, show_bar=False, speed_report_after_s=0.0)
        self._row_itr = 0  # the iteration of the row log_diagnostics is writing

    # ---- the loop ----

    def train(self) -> dict[str, Any]:
        """Start up (resuming if asked), run the iterations left of ``n_itr``, shut down; return the last row.

        The sampler is shut down also when a step raises; the original error propagates. A first SIGINT or
        SIGTERM finishes the iteration, checkpoints it (when checkpoints are on) and raises
        :class:`~rlrun.runners.interrupt.TrainingInterrupted`; a second one abandons the iteration at once.
        """
        with StopSignals(enabled=self.handles_stop_signals) as stop:
            try:
                n_itr = self.startup()
                self._stop_if_requested(stop, self._start_itr - 1 if self._start_itr else None)
                if self.resumed_from is None:
                    self.on_training_start()
                self.console = console = self.make_console()
                for itr in range(self._start_itr, n_itr):
                    logger.set_iteration(itr)
                    with logger.prefix(f"itr #{itr} "):
                        self.train_iteration(itr)
                        log_due = (itr + 1) % self.log_interval_itrs == 0 or itr == n_itr - 1
                        console.iteration_done(itr, log_due, self.diagnostics.latest_return)
                        if log_due:
                            self.on_log_interval(itr)
                            self._log_rows += 1
                            if self.video_every and self._log_rows % self.video_every == 0:
                                self.record_video(itr)
                        if self.checkpointer.due(itr, self.log_interval_itrs, n_itr - 1):
                            self.save_checkpoint(itr)
                    self._stop_if_requested(stop, itr)
            except BaseException as e:
                self.console.close()
                self._shutdown_after_error()
                if isinstance(e, TrainingInterrupted):
                    advice = resume_advice(self.checkpointer.run_dir, self.checkpoint_policy is not None)
                    logger.log(f"{e} The sampler is shut down. {advice}")
                raise
        self.console.close()
        logger.log("Training complete.")
        self.shutdown()
        return dict(self.diagnostics.last_row)

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
            if self.checkpointer.last_saved_itr != itr:
                self.save_checkpoint(itr)
            path = str(self.checkpointer.path(itr))
        raise interrupted_error(stop.requested, itr=itr, checkpoint=path)

    def on_training_start(self) -> None:
        """Called after startup, before the first iteration."""

    def on_log_interval(self, itr: int) -> None:
        """Called after iteration ``itr`` when diagnostics are due."""
        raise NotImplementedError

    def record_video(self, itr: int) -> Path | None:
        """Record one evaluation episode of the agent at ``itr`` into ``<run folder>/videos`` and give it to
        the trackers (W&B); see :mod:`rlrun.runners.videos`. None without a run folder or on ranks but 0."""
        run_dir = self.checkpointer.run_dir
        if run_dir is None or self.rank != 0:
            return None
        path, frames, episode_return = record_eval_video(
            self.agent, self.sampler, itr, run_dir / "videos", max_steps=self.video_max_steps
        )
        logger.log(f"Video of iteration {itr}: {path} ({frames} frames, return {episode_return:g}).", console=False)
        for tracker in logger.get_trackers():
            tracker.log_video(str(path), itr)
        writer = logger.get_tf_summary_writer()
        if writer is not None:
            add_video_to_tensorboard(writer, path, itr)
        return path

    # ---- the console ----

    def make_console(self) -> Console:
        """The loop's progress bar and speed line. One bar per run: only rank 0 draws it, and not while the
        logger is silenced."""
        show_bar = self.rank == 0 and not logger.is_disabled() and progress_bar_wanted(self.progress_bar)
        return Console(self.n_itr, self.itr_batch_size, self._start_itr, show_bar, self.speed_report_after_s)

    # ---- startup and shutdown ----

    def startup(self) -> int:
        """Pin the process, seed, initialise sampler (and with it the agent), fit the torch threads to its
        workers, agent device, algorithm, checkpointer and logging, in that order. Returns ``n_itr``."""
        self.checkpointer = self.make_checkpointer()
        affinity = self.affinity
        self._restore_master_affinity = apply_master_affinity(
            affinity.get("master_cpus"), affinity.get("master_torch_threads"), bool(affinity.get("set_affinity", True))
        )
        self._seed_process()
        examples = self.sampler.initialize(
            agent=self.agent,
            affinity=self._affinity_arg,
            seed=self._sampler_seed(),
            bootstrap_value=self.algo.bootstrap_value,
            traj_info_kwargs=self.get_traj_info_kwargs(),
            rank=self.rank,
            world_size=self.world_size,
        )
        # A parallel sampler's workers (rlpyt's ``n_worker``; serial samplers have none) each keep a CPU busy.
        fit_master_threads_to_workers(affinity.get("master_torch_threads"), self.sampler.n_worker)
        self.itr_batch_size = self.sampler.batch_spec.size * self.world_size
        n_itr = self.get_n_itr()
        self.agent.to_device(affinity.get("cuda_idx", None))
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
        if self.min_itr_learn >= n_itr:
            message = (
                f"{type(self.algo).__name__} starts learning at iteration {self.min_itr_learn} "
                f"(min_steps_learn={self.algo.min_steps_learn:,} env steps), but this run has {n_itr} iterations "
                f"({self.n_steps:,} steps): it will end without one gradient step. Raise n_steps, or lower the "
                "algorithm's min_steps_learn."
            )
            warnings.warn(message, UserWarning, stacklevel=2)
            logger.log(f"WARNING: {message}")
        self.initialize_logging()
        if self.resume is not False:
            self.load_checkpoint()
        self.write_run_record(n_itr)
        logger.mark_run_started()
        return n_itr

    def write_run_record(self, n_itr: int) -> None:
        """Describe the run in its folder's ``run.json`` (see :mod:`rlrun.runners.run_record`), for ``rlrun info``."""
        run_dir = self.checkpointer.run_dir
        if run_dir is None or self.rank != 0:
            return
        record = RunRecord(
            runner=qualified_name(self),
            algo=qualified_name(self.algo),
            agent=qualified_name(self.agent),
            sampler=qualified_name(self.sampler),
            env=qualified_name(self.sampler.EnvCls),
            env_kwargs=dict(self.sampler.env_kwargs),
            n_steps=self.n_steps,
            n_itr=n_itr,
            itr_batch_size=self.itr_batch_size,
            log_interval_steps=self.log_interval_steps,
            checkpoints=self.checkpoint_policy is not None,
        )
        write_run_record(run_dir, record)
        if self.checkpointer.snapshot_mode != "none":  # with the params.pkl snapshots, `rlrun play` rebuilds it
            torch.save(self.agent, run_dir / AGENT_FILE)

    def make_checkpointer(self) -> Checkpointer:
        """The run's checkpointer, given the folder ``logger_context`` opened and its snapshot settings.
        Override to keep checkpoints and snapshots elsewhere."""
        run_dir = logger.get_snapshot_dir()
        if self.checkpoint_policy is not None and run_dir is None:
            raise ValueError(
                f"{type(self).__name__}: checkpoints and resume need a log folder to keep the checkpoints in; "
                "call train() inside logger_context(...) (with resume=True to continue a run in its folder)."
            )
        return Checkpointer(run_dir, self.checkpoint_policy, logger.get_snapshot_mode(), logger.get_snapshot_gap())

    def _seed_process(self) -> None:
        """Seed this process's generators with the run's seed (drawn when None)."""
        if self.seed is None:
            self.seed = make_seed()
        set_seed(self.seed)
        logger.log(f"Runner seed: {self.seed} (sampler gets {self._sampler_seed()}).")

    def _sampler_seed(self) -> int:
        assert self.seed is not None
        return self.seed + 1

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

    # ---- snapshots and checkpoints ----

    def get_itr_snapshot(self, itr: int) -> dict[str, Any]:
        """What rlpyt's snapshot of iteration ``itr`` holds: counters, agent and optimiser state."""
        return dict(
            itr=itr,
            cum_steps=self.diagnostics.cum_steps,
            agent_state_dict=self.agent.state_dict(),
            optimizer_state_dict=self.algo.optim_state_dict(),
        )

    def save_itr_snapshot(self, itr: int) -> None:
        """Save the snapshot of iteration ``itr`` when the snapshot mode wants one."""
        if not self.checkpointer.wants_snapshot(itr):
            return  # skip copying the state dicts
        paths = self.checkpointer.save_snapshot(itr, self.get_itr_snapshot(itr))
        logger.log(f"Saved snapshot {', '.join(map(str, paths))}", console=False)

    def checkpoint_state(self, itr: int) -> CheckpointState:
        """Everything a resumed run needs to continue after iteration ``itr`` (see :meth:`Checkpointer.run_state`)."""
        parts, runner, log_files = (
            (self.agent, self.algo, self.sampler),
            self.diagnostics.state_dict(),
            logger.tabular_outputs_state(),
        )
        return self.checkpointer.run_state(
            itr, self.diagnostics.cum_steps, self.itr_batch_size, parts, runner, log_files
        )

    def save_checkpoint(self, itr: int) -> CheckpointInfo | None:
        """Write the checkpoint of iteration ``itr`` (older ones beyond the policy's ``keep_last`` go)."""
        return self.checkpointer.save(itr, self.checkpoint_state(itr), self.diagnostics.cum_steps)

    def load_checkpoint(self) -> None:
        """Continue from the newest usable checkpoint of ``resume``; called at the end of startup.

        Without one, a fresh folder starts at iteration 0. A folder that holds an earlier attempt (checkpoint
        files, all unusable, or logged rows) raises :class:`NothingToResumeError` and is left as it is: nothing
        an earlier attempt recorded is cut.
        """
        source = None if isinstance(self.resume, bool) else self.resume  # True: this run's folder
        found = self.checkpointer.restore(source, self.itr_batch_size, (self.agent, self.algo, self.sampler))
        if found is None:
            where = source or self.checkpointer.run_dir
            history = self._earlier_attempt(where)
            if history:
                raise NothingToResumeError(
                    f"Nothing to resume from in {where}: {'; '.join(history)}. Those files are kept as they are. "
                    "Check why the checkpoints cannot be read (debug.log), or start over in a new folder: run "
                    "without resume (rlrun train without --resume; resume=False in a script), which leaves this "
                    "folder and its logs alone."
                )
            logger.log(f"No checkpoint in {where}: starting at iteration 0.")
            return
        info, state = found
        self.diagnostics.load_state_dict(state["runner"])
        logger.rewind_tabular_outputs(state["logger"])
        self._resumed_at(info)
        envs = "with its envs mid-episode" if self.sampler.restores_env_state else "with fresh envs"
        logger.log(
            f"Resumed from {info.path}: {info.cum_steps} steps done, continuing at iteration {self._start_itr} "
            f"of {self.n_itr} {envs}."
        )

    @staticmethod
    def _earlier_attempt(where: str | os.PathLike[str] | None) -> list[str]:
        """What an earlier attempt left in the run folder: checkpoint files, and rows in the CSV outputs."""
        found = []
        if where is not None:
            folder = checkpoint_dir(where)
            files = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
            if files:
                found.append(f"{len(files)} checkpoint file(s) in {folder}, none usable ({', '.join(files[:6])})")
        for name, state in logger.tabular_outputs_state().items():
            if state.get("rows"):
                found.append(f"{name} has {state['rows']} logged row(s)")
        return found

    def _resumed_at(self, info: CheckpointInfo) -> None:
        self._start_itr = info.itr + 1
        self.checkpointer.last_saved_itr = info.itr
        self.resumed_from = info

    # ---- diagnostics ----

    def initialize_logging(self) -> None:
        """Start the counters and buffers diagnostics are computed from; called at the end of startup."""
        self.diagnostics = Diagnostics(
            self.algo.opt_info_fields,
            traj_info_keys(self.sampler.TrajInfoCls, self.get_traj_info_kwargs()),
            traj_window=self.log_traj_window,
            itr_batch_size=self.itr_batch_size,
            world_size=self.world_size,
        )

    def store_diagnostics(self, itr: int, traj_infos: Sequence[TrajInfo], opt_info: OptInfoTuple | None) -> None:
        """Keep what iteration ``itr`` produced until the next log row."""
        self.diagnostics.itr_done(itr)
        self.diagnostics.add_trajs(traj_infos)
        self.diagnostics.add_opt_info(opt_info)

    def log_diagnostics(
        self,
        itr: int,
        traj_infos: Sequence[TrajInfo] | None = None,
        eval_time: float = 0.0,
        prefix: str = "Diagnostics/",
    ) -> dict[str, Any]:
        """Save a snapshot and write one row of diagnostics; return the row.

        The runner's own columns get ``prefix`` before their names. ``traj_infos``: the trajectories
        the row reports (None: the trajectory window). ``eval_time`` (s) is left out of the training speed.
        """
        if itr >= self.min_itr_learn - 1:
            self.save_itr_snapshot(itr)
        columns = self.diagnostics.own_columns(itr, self.algo.update_counter, self.algo.batch_size, eval_time)
        columns.update(self.extra_diagnostics(traj_infos))
        columns.update(self.worker_restart_columns())
        self._row_itr = itr
        self.diagnostics.record_columns(itr, columns, prefix, self.console_columns)
        self._log_infos(traj_infos)
        return self.diagnostics.write_row(self.algo.update_counter)

    def extra_diagnostics(self, traj_infos: Sequence[TrajInfo] | None) -> dict[str, float]:
        """Runner-specific values for the row, recorded after the common ones (under the same prefix)."""
        return self.diagnostics.window_columns() if self.diagnostics.traj_window is not None else {}

    def worker_restart_columns(self) -> dict[str, float]:
        """``WorkerRestarts``: the sampler's worker restarts so far, for a sampler with ``worker_restarts > 0``."""
        count = self.worker_restart_count()
        return {} if count is None else {"WorkerRestarts": count}

    def worker_restart_count(self) -> int | None:
        sampler = self.sampler
        return sampler.worker_restart_count if isinstance(sampler, RestartsWorkers) else None

    def _log_infos(self, traj_infos: Sequence[TrajInfo] | None = None) -> None:
        """Statistics of each trajectory field (None: the trajectory window) and of each optimiser field."""
        if traj_infos is None:
            traj_infos = list(self.diagnostics.traj_window or ())
        note = None if traj_infos else self.no_episode_note(self._row_itr)
        if note:
            logger.log(note)
        self.diagnostics.record_infos(traj_infos, self.console_traj_stats)

    def no_episode_note(self, itr: int) -> str | None:
        """The console line for log row ``itr`` when it has no episodes (so no return to show), or None."""
        return "No episode has finished yet, so this row has no return."

    # ---- rlpyt's names for the diagnostics' buffers, which subclasses written for rlpyt read ----

    @property
    def _traj_infos(self) -> Sequence[TrajInfo]:
        return self.diagnostics.traj_window if self.diagnostics.traj_window is not None else ()

    @property
    def _opt_infos(self) -> dict[str, list[float]]:
        return self.diagnostics.opt_infos

    @_opt_infos.setter
    def _opt_infos(self, value: dict[str, list[float]]) -> None:
        self.diagnostics.opt_infos = value

    @property
    def _new_completed_trajs(self) -> int:
        return self.diagnostics.new_completed_trajs
