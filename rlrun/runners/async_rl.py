"""Asynchronous training: the sampler runs in its own process while this one optimises without pause.

``AsyncRl`` reports the training trajectories (the last ``log_traj_window``); ``AsyncRlEval`` reports
evaluation episodes, which the sampler process runs before the first batch and every log interval.
How the processes meet is in :mod:`rlrun.runners.async_processes`; docs/async_rl.md tells the story.

The optimiser trains as much as ``replay_ratio`` allows against the batches copied into the replay:
it waits until ``1 + min_steps_learn // sampler_batch`` batches are in, then each ``optimize_agent``
call (``updates_per_sync`` gradient steps of ``batch_size``) moves its throttle on by
``batch_size * updates_per_sync / (sampler_batch * replay_ratio)`` batches. rlpyt throttled only
the optimiser, so a slower optimiser let the ratio fall; here the sampler also stays within
``max_sampler_lead_itrs`` batches of the optimiser's throttle (None: rlpyt's behaviour).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection, Pipe
from typing import Any

import torch.multiprocessing as torch_mp

from rlrun.envs.traj_info import TrajInfo
from rlrun.runners.async_checkpoint import AsyncResumePoint, async_checkpoint_state, find_async_resume_point
from rlrun.runners.async_processes import (
    COPIER,
    SAMPLER,
    AsyncControl,
    AsyncProcessError,
    AsyncProcesses,
    SamplerSchedule,
    run_async_sampler,
    run_copier,
)
from rlrun.runners.checkpoint import CheckpointState, NothingToResumeError, restore_rng_state
from rlrun.runners.contracts import AgentT, AsyncAlgorithmContract
from rlrun.runners.interrupt import StopSignals, TrainingInterrupted
from rlrun.runners.master_affinity import apply_master_affinity
from rlrun.runners.minibatch_rl import MinibatchRl, MinibatchRlBase, MinibatchRlEval
from rlrun.runners.run_record import resume_advice
from rlrun.samplers.async_.alternating_sampler import AsyncAlternatingSampler
from rlrun.samplers.async_.base import AsyncSamplerBase
from rlrun.samplers.async_.parallel import AsyncParallelSamplerMixin
from rlrun.samplers.parallel.base import resolve_start_method
from rlrun.utils.logging import logger
from rlrun.utils.synchronize import lock_context

__all__ = ["AsyncRlBase", "AsyncRl", "AsyncRlEval", "AsyncProcessError"]

DEFAULT_PROCESS_TIMEOUT_S = 600.0
WAIT_S = 0.05


def split_async_affinity(affinity: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """``(sampler affinity or None, optimiser affinity)`` from an asynchronous affinity (``make_affinity(...,
    async_sample=True)``: ``sampler`` and ``optimizer`` keys) or None."""
    if affinity is None:
        return None, {}
    if not isinstance(affinity, Mapping) or "optimizer" not in affinity or "sampler" not in affinity:
        raise ValueError(
            "Asynchronous runners take an affinity with 'sampler' (a sampler's affinity dict) and 'optimizer' (a list "
            "with one dict of cpus, cuda_idx, torch_threads) keys, as make_affinity(..., async_sample=True) builds it, "
            f"or None; got {affinity!r}."
        )
    optimizer = affinity["optimizer"]
    if isinstance(optimizer, Mapping):
        optimizer = [optimizer]
    if len(optimizer) != 1:
        raise ValueError(
            f"affinity['optimizer'] lists {len(optimizer)} optimisers; rlrun's asynchronous runners train in one "
            "process (one GPU at most). Lay out the run with gpu_per_run=1."
        )
    sampler = affinity["sampler"]
    if isinstance(sampler, Sequence):
        if len(sampler) != 1:
            raise ValueError(
                f"affinity['sampler'] lists {len(sampler)} samplers (one per sampling GPU); rlrun's asynchronous "
                "samplers use one. Lay out the run with sample_gpu_per_run=1 at most."
            )
        sampler = sampler[0]
    return dict(sampler), dict(optimizer[0])


def default_sampler_affinity(sampler: AsyncSamplerBase) -> dict[str, Any] | None:
    """The sampler's affinity when the run names none: the optimiser keeps one of the usable cores to
    itself and a parallel sampler's workers take the others, unpinned (the layout of
    ``make_affinity(..., async_sample=True)``). None (one worker per core) on a single core, and for
    the alternating samplers, whose two worker groups want every core.

    Without it the optimiser shares its core with a worker and gets a fair share of it, so it falls
    behind and, held by ``max_sampler_lead_itrs``, the sampler then idles: on 2 cores (Pong, replay
    ratio 0.5) async DQN ran at 543-575 steps/s with a worker per core and 630 with this layout
    (``benchmarks/async_dqn_speed.py``).
    """
    cpus = sorted(os.sched_getaffinity(0))
    if (
        len(cpus) < 2
        or not isinstance(sampler, AsyncParallelSamplerMixin)
        or isinstance(sampler, AsyncAlternatingSampler)
    ):
        return None
    return dict(workers_cpus=tuple((cpu,) for cpu in cpus[1:]), set_affinity=False)


class AsyncRlBase(MinibatchRlBase[AgentT]):
    """The asynchronous loop, start-up and shutdown; the subclasses choose what a log row reports.

    ``sampler`` is an asynchronous sampler (:mod:`rlrun.samplers.async_`), ``algo`` one with
    ``async_initialize`` (DQN, CategoricalDQN). ``affinity``: ``make_affinity(..., async_sample=True)``'s
    dict or None (no pinning, one torch thread for the optimiser, one core kept for it:
    :func:`default_sampler_affinity`).
    ``process_timeout`` (seconds, None for none) is the longest the optimiser waits for the sampler to
    make progress (a batch reported or copied) before it reports the run stuck, with the stacks of the
    sampler process and the copier; a process that fails or dies is reported within a second.

    Diagnostics go through :meth:`store_diagnostics` as in the synchronous runners, keyed by the sampler
    iteration: each batch's trajectories when the sampler reports it, each optimiser step's ``opt_info``
    when it is taken (keyed by the latest batch reported).
    """

    # The asynchronous parts have more to them than the synchronous contracts (async_initialize, ...).
    algo: AsyncAlgorithmContract[AgentT]
    # An AsyncSamplerBase, whose initialize and obtain_samples take other arguments than SamplerContract's
    # (issue 31 item 2), so it cannot stand where the synchronous runner's sampler does.
    sampler: Any

    def __init__(
        self,
        algo: AsyncAlgorithmContract[AgentT],
        agent: AgentT,
        sampler: Any,
        n_steps: int | float,
        affinity: Mapping[str, Any] | None = None,
        seed: int | None = None,
        log_interval_steps: int | float = 1e5,
        max_sampler_lead_itrs: int | None = 4,
        process_timeout: float | None = DEFAULT_PROCESS_TIMEOUT_S,
        **kwargs: Any,
    ) -> None:
        if not hasattr(sampler, "async_initialize"):
            raise TypeError(
                f"{type(self).__name__} needs an asynchronous sampler (AsyncSerialSampler, AsyncCpuSampler, "
                f"AsyncGpuSampler or AsyncAlternatingSampler from rlrun.samplers.async_), got {type(sampler).__name__}."
            )
        if max_sampler_lead_itrs is not None and int(max_sampler_lead_itrs) < 1:
            raise ValueError(f"max_sampler_lead_itrs must be at least 1 or None, got {max_sampler_lead_itrs!r}.")
        if process_timeout is not None and not float(process_timeout) > 0:
            raise ValueError(f"process_timeout must be a positive number of seconds or None, got {process_timeout!r}.")
        self.sampler_affinity, self.optimizer_affinity = split_async_affinity(affinity)
        if affinity is None:
            self.sampler_affinity = default_sampler_affinity(sampler)
        # kwargs: AsyncRl's log_traj_window, checkpoint and resume (without the replay: rlrun.runners.async_checkpoint).
        super().__init__(
            algo=algo,
            agent=agent,
            sampler=sampler,
            n_steps=n_steps,
            seed=seed,
            affinity=None,
            log_interval_steps=log_interval_steps,
            **kwargs,
        )
        self.max_sampler_lead_itrs = None if max_sampler_lead_itrs is None else int(max_sampler_lead_itrs)
        self.process_timeout = None if process_timeout is None else float(process_timeout)
        self.processes: AsyncProcesses | None = None
        self.ctrl: AsyncControl | None = None
        self._reports: Connection | None = None
        self._sampler_done = False
        self._sampler_itrs = 0  # batches the sampler reported
        self._worker_restarts: int | None = None  # its workers' restarts, as it last reported them
        self._last_progress = time.monotonic()
        self.throttle_itr = 0.0
        self.delta_throttle_itr = 0.0
        self._opt_itr = 0  # optimize_agent calls so far
        self._resume_point: AsyncResumePoint | None = None

    # ---- the loop ----

    def train(self) -> dict[str, Any]:
        """Start the sampler and copier processes, optimise until the sampler has run ``n_steps`` and the
        optimiser has caught up with its throttle, shut everything down; return the last logged row.

        Any error here or in another process stops every process before it propagates. A first SIGINT or
        SIGTERM checkpoints the last batch reported (when checkpoints are on) and raises
        :class:`~rlrun.runners.interrupt.TrainingInterrupted`, as the synchronous runners do."""
        with StopSignals(enabled=self.handles_stop_signals) as stop:
            try:
                self.startup()
                self._optimise_until_done(stop)
            except BaseException as e:
                self._shutdown_after_error()
                if isinstance(e, TrainingInterrupted):
                    advice = resume_advice(self.checkpointer.run_dir, self.checkpoint_policy is not None)
                    logger.log(f"{e} The sampler process is shut down. {advice}")
                raise
        logger.log("Training complete.")
        self.shutdown()
        return dict(self.diagnostics.last_row)

    def _optimise_until_done(self, stop: StopSignals) -> None:
        while True:
            self._stop_if_requested(stop, self._sampler_itrs - 1 if self._sampler_itrs else None)
            self._take_reports(timeout=0.0)
            ctrl = self._ctrl()
            copied = ctrl.copied_itrs
            if copied >= self.throttle_itr and copied > 0:
                logger.set_iteration(copied - 1)
                self.agent.train_mode(self._opt_itr)
                opt_info = self.algo.optimize_agent(self._opt_itr, sampler_itr=copied - 1)
                self.agent.send_shared_memory()
                self.throttle_itr += self.delta_throttle_itr
                ctrl.throttle[0] = self.throttle_itr
                # Keyed by the latest batch the sampler has reported, so keys never step back: the copier
                # can be ahead of the reports still in the pipe, and keying by it put a step's key (say 28)
                # before the reports of batches 26 and 27.
                self.store_diagnostics(max(self._sampler_itrs - 1, 0), [], opt_info)
                self._opt_itr += 1
            elif self._sampler_done and copied >= self.n_itr:
                break
            else:
                self._wait_for_progress()
        self._take_reports(timeout=0.0)
        if self._sampler_itrs > self._start_itr:  # a resumed finished run has no row left to log
            self.on_training_end()

    def _wait_for_progress(self) -> None:
        before = (self._sampler_itrs, self._ctrl().copied_itrs)
        self._take_reports(timeout=WAIT_S)
        if (self._sampler_itrs, self._ctrl().copied_itrs) != before:
            self._last_progress = time.monotonic()
        elif self.process_timeout is not None and time.monotonic() - self._last_progress > self.process_timeout:
            assert self.processes is not None
            raise AsyncProcessError(
                "sampler process",
                f"made no progress for process_timeout={self.process_timeout:g} s (no batch sampled or copied) "
                f"while the optimiser waited for batch {math.ceil(self.throttle_itr)}. Their stacks:\n"
                f"{self.processes.stacks()}\nIf its envs or evaluations are this slow, raise process_timeout.",
            )

    def _take_reports(self, timeout: float) -> None:
        """Read what the sampler reported (waiting up to ``timeout`` for the first message) and look at
        every process; log rows that are due."""
        assert self.processes is not None and self._reports is not None
        self.processes.check()
        conn = self._reports
        try:
            ready = conn.poll(timeout)
            while ready:
                self._on_report(conn.recv())
                ready = conn.poll(0)
        except (EOFError, OSError):
            self.processes.check()  # it died mid-message: its exit code says how
            if not self._sampler_done:
                raise AsyncProcessError("sampler process", "closed its report pipe before its last batch.") from None
        self.processes.check()

    def _on_report(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        self._last_progress = time.monotonic()
        if kind == "batch":
            itr, traj_infos, self._worker_restarts = message[1], message[2], message[3]
            self._sampler_itrs = itr + 1
            self.store_diagnostics(itr, traj_infos, None)  # before on_batch, which may log the row
            self.on_batch(itr, traj_infos)
        elif kind == "eval":
            self.on_evaluation(message[1], message[2], message[3])
        elif kind == "done":
            self._sampler_done = True

    def worker_restart_count(self) -> int | None:
        """The sampler process's worker restarts, from its batch reports (its sampler object lives there)."""
        return self._worker_restarts

    # What a row reports (subclasses).

    def on_batch(self, itr: int, traj_infos: list[TrajInfo]) -> None:
        """The sampler finished batch ``itr`` with these completed trajectories (already counted)."""

    def on_evaluation(self, itr: int, traj_infos: list[TrajInfo], eval_time: float) -> None:
        """The sampler evaluated the agent after batch ``itr`` (before any batch at ``itr=0``)."""

    def on_training_end(self) -> None:
        """The sampler is done and the optimiser caught up with it."""

    def _row(self, itr: int) -> None:
        """Set the counters a row reads to ``itr + 1`` sampler batches done."""
        self.diagnostics.itr_done(itr)

    # ---- startup and shutdown ----

    def startup(self) -> int:
        """Build the double buffer and the shared replay, start the sampler and copier processes, wait for the
        sampler to be ready, then prepare the optimiser (its affinity, a private model, the optimiser)."""
        self.checkpointer = self.make_checkpointer()
        self._seed_process()
        sampler: AsyncSamplerBase = self.sampler  # every asynchronous sampler has async_initialize, start_method
        algo, agent = self.algo, self.agent
        ctx = torch_mp.get_context(resolve_start_method(sampler.start_method))
        with lock_context(ctx):  # the agent's and the replay's locks: primitives of the start method in use
            double_buffer, examples = sampler.async_initialize(
                agent=agent,
                bootstrap_value=algo.bootstrap_value,
                traj_info_kwargs=self.get_traj_info_kwargs(),
                seed=self._sampler_seed(),
            )
            self.itr_batch_size = sampler.batch_spec.size
            n_itr = self.get_n_itr()
            replay = algo.async_initialize(
                agent=agent,
                sampler_n_itr=n_itr,
                batch_spec=sampler.batch_spec,
                mid_batch_reset=sampler.mid_batch_reset,
                examples=examples,
                world_size=1,
            )
        self.min_itr_learn = algo.min_itr_learn
        start_itr = self._find_resume_point()  # before any process starts: the sampler acts with its weights
        self.ctrl = ctrl = AsyncControl.build(ctx, start_itr)
        self.processes = processes = AsyncProcesses(ctx)
        reports_r, reports_w = Pipe(duplex=False)
        self._reports = reports_r
        schedule = SamplerSchedule(
            n_itr=n_itr,
            eval_itrs=self.log_interval_itrs if self._eval else None,
            lead_itrs=self.max_sampler_lead_itrs,
            start_itr=start_itr,
        )
        # A resumed run's replay starts empty (it is not checkpointed): min_steps_learn again before training.
        self.throttle_itr = start_itr + 1 + algo.min_steps_learn // self.itr_batch_size
        self.delta_throttle_itr = (
            algo.batch_size * algo.updates_per_optimize / (self.itr_batch_size * algo.replay_ratio)
        )
        ctrl.throttle[0] = self.throttle_itr
        try:
            processes.start(
                COPIER,
                run_copier,
                lambda stacks: (double_buffer, algo.samples_to_buffer, replay, ctrl, stacks, processes.errors),
            )
            processes.start(
                SAMPLER,
                run_async_sampler,
                lambda stacks: (sampler, self.sampler_affinity, ctrl, schedule, reports_w, stacks, processes.errors),
            )
        finally:
            reports_w.close()  # the sampler process holds the writing end alone
        self._wait_until_ready()
        optimizer = self.optimizer_affinity
        self._restore_master_affinity = apply_master_affinity(
            optimizer.get("cpus"), optimizer.get("torch_threads", 1), bool(optimizer.get("set_affinity", True))
        )
        agent.async_optimizer(optimizer.get("cuda_idx"))
        algo.optim_initialize(rank=0)
        self.initialize_logging()
        self._restore_optimiser()
        logger.log(
            f"Optimiser: from {self.throttle_itr:.0f} sampler batches on, {algo.updates_per_optimize} update(s) of "
            f"{algo.batch_size} every {self.delta_throttle_itr:.3g} batches (replay ratio {algo.replay_ratio})."
        )
        self.write_run_record(n_itr)
        logger.mark_run_started()
        return n_itr

    # ---- checkpoints (what they hold: rlrun.runners.async_checkpoint) ----

    def _find_resume_point(self) -> int:
        """With ``resume``: find the checkpoint and load the agent's weights (into the shared model, so the
        sampler acts with them from its first batch); return the first sampler batch to run (0: from scratch).
        An earlier attempt without a usable checkpoint raises NothingToResumeError, as in MinibatchRl."""
        if self.resume is False:
            return 0
        source = None if isinstance(self.resume, bool) else self.resume
        point = find_async_resume_point(self.checkpointer, source, self.itr_batch_size)
        if point is None:
            where = source or self.checkpointer.run_dir
            history = self._earlier_attempt(where)
            if history:
                raise NothingToResumeError(
                    f"Nothing to resume from in {where}: {'; '.join(history)}. Those files are kept as they are. "
                    "Check why the checkpoints cannot be read (debug.log), or start over: run without resume, "
                    "which leaves this folder and its logs alone."
                )
            logger.log(f"No checkpoint in {where}: starting at iteration 0.")
            return 0
        self.agent.load_state_dict(point.state["agent"])
        self._resume_point = point
        self._resumed_at(point.info)
        self._sampler_itrs = point.start_itr
        self._opt_itr = point.opt_itr
        return point.start_itr

    def _restore_optimiser(self) -> None:
        """Put the checkpoint's optimiser, counters, rows and random generators back (after optim_initialize)."""
        point = self._resume_point
        if point is None:
            return
        self.algo.load_state_dict(point.state["algo"])
        self.diagnostics.load_state_dict(point.state["runner"])
        logger.rewind_tabular_outputs(point.state["logger"])
        restore_rng_state(point.state["rng"])
        logger.log(
            f"Resumed from {point.info.path}: {point.info.cum_steps} steps done, continuing at sampler batch "
            f"{point.start_itr} of {self.n_itr} with fresh envs and an empty replay (training again once "
            f"{self.algo.min_steps_learn} steps are in it)."
        )

    def checkpoint_state(self, itr: int) -> CheckpointState:
        """What :mod:`rlrun.runners.async_checkpoint` keeps after sampler batch ``itr``."""
        self.diagnostics.itr_done(itr)
        return async_checkpoint_state(
            itr,
            self.diagnostics.cum_steps,
            self.itr_batch_size,
            self.agent,
            self.algo,
            self.diagnostics.state_dict(),
            logger.tabular_outputs_state(),
            self._opt_itr,
        )

    def _row_logged(self, row_itr: int) -> None:
        """After the row of ``row_itr``: a video when ``video_every`` rows are due (played by the optimiser's
        model, which waits meanwhile), then a checkpoint of the last batch reported when the policy wants one."""
        self._log_rows += 1
        if self.video_every and self._log_rows % self.video_every == 0:
            self.record_video(row_itr)
        if self.checkpointer.due(row_itr, self.log_interval_itrs, self.n_itr - 1):
            self.save_checkpoint(self._sampler_itrs - 1)

    def _wait_until_ready(self) -> None:
        """Until the sampler process built its envs (and workers), bounded by ``process_timeout``."""
        assert self._reports is not None and self.processes is not None
        start = time.monotonic()
        while not self._reports.poll(WAIT_S):
            self.processes.check()
            if self.process_timeout is not None and time.monotonic() - start > self.process_timeout:
                raise AsyncProcessError(
                    "sampler process",
                    f"did not finish its start-up within process_timeout={self.process_timeout:g} s; it is at:\n"
                    f"{self.processes.stacks()}",
                )
        try:
            message = self._reports.recv()
        except EOFError:
            self.processes.check()
            raise AsyncProcessError("sampler process", "ended during its start-up without a word.") from None
        if message[0] != "ready":
            raise AsyncProcessError("sampler process", f"sent {message[0]!r} before 'ready'.")
        self._last_progress = time.monotonic()

    def _ctrl(self) -> AsyncControl:
        assert self.ctrl is not None
        return self.ctrl

    def shutdown(self) -> None:
        """Stop the sampler process (which stops its workers) and the copier; undo the optimiser's pinning."""
        try:
            if self.processes is not None:
                self.processes.stop(self.ctrl)
        finally:
            if self._reports is not None:
                self._reports.close()
                self._reports = None
            self.processes = None
            self.ctrl = None  # its semaphores go once nothing holds them
            super().shutdown()


class AsyncRl(AsyncRlBase[AgentT], MinibatchRl[AgentT]):
    """Asynchronous training that reports the training trajectories (the last ``log_traj_window``), one row
    every ``log_interval_steps`` sampled steps and one at the end."""

    def on_batch(self, itr: int, traj_infos: list[TrajInfo]) -> None:
        if (itr + 1) % self.log_interval_itrs == 0 and itr < self.n_itr - 1:
            self._row(itr)
            self.log_diagnostics(itr)
            self._row_logged(itr)

    def on_training_end(self) -> None:
        self._row(self.n_itr - 1)
        self.log_diagnostics(self.n_itr - 1)
        self._row_logged(self.n_itr - 1)


class AsyncRlEval(AsyncRlBase[AgentT], MinibatchRlEval[AgentT]):
    """Asynchronous training that reports evaluation episodes: the sampler process evaluates the agent before
    the first batch, every ``log_interval_steps`` and after the last batch, and each evaluation is one row."""

    _final_evaluation: tuple[list[TrajInfo], float] | None = None  # the last evaluation, until the optimiser caught up

    def on_evaluation(self, itr: int, traj_infos: list[TrajInfo], eval_time: float) -> None:
        if itr == self.n_itr - 1 and self._sampler_itrs == self.n_itr:
            self._final_evaluation = (traj_infos, eval_time)  # logged once the optimiser caught up
            return
        if itr == 0 and self._sampler_itrs == 0:
            self.diagnostics.itrs_done = 0  # before the first batch
            self.log_diagnostics(itr, traj_infos, eval_time)
            return
        self._row(itr)
        self.log_diagnostics(itr, traj_infos, eval_time)
        self._row_logged(itr)

    def on_training_end(self) -> None:
        final = self._final_evaluation
        if final is not None:
            self._row(self.n_itr - 1)
            self.log_diagnostics(self.n_itr - 1, *final)
            self._row_logged(self.n_itr - 1)
