"""Synchronous multi-process training: one full runner (sampler, agent, algorithm) per rank.

Gradients are averaged over the ranks by ``torch.nn.parallel.DistributedDataParallel`` during each
backward pass, so every rank takes the same optimiser step and the parameters stay identical. See
docs/sync_rl.md for the two ways to start ranks (forked from an affinity list, or ``torchrun``), batch
sizes, logging, failures and checkpoints.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

import torch.distributed as dist

from rlrun.algos.base import OptInfoTuple
from rlrun.envs.traj_info import TrajInfo
from rlrun.runners import checkpoint as ckpt
from rlrun.runners.contracts import AgentT, AlgorithmContract, SamplerContract
from rlrun.runners.distributed import (
    choose_backend,
    init_group,
    launch_env,
    launched_by_torchrun,
    leave_group,
    open_store,
)
from rlrun.runners.master_affinity import check_affinity
from rlrun.runners.minibatch_rl import MinibatchRl, MinibatchRlEval, check_log_traj_window
from rlrun.runners.minibatch_rl_base import MinibatchRlBase
from rlrun.runners.rank_processes import RankEnd, RankProcessError, RankProcesses
from rlrun.samplers.parallel.protocol import die_with_parent
from rlrun.utils.logging import logger
from rlrun.utils.seed import derive_seed, make_seed, set_seed

__all__ = ["SyncRl", "SyncRlEval", "SyncRlMixin", "RankProcessError", "DEFAULT_COLLECTIVE_TIMEOUT_S"]

DEFAULT_COLLECTIVE_TIMEOUT_S = 600.0
RANK_SEED_DOMAIN = 0x5EED_0002  # keys the ranks' global RNGs apart (env seeds follow global env ranks)
FINISH_TIMEOUT_S = 60.0  # how long rank 0 waits for the other ranks to shut down after the last iteration
FAILURE_WAIT_S = 3.0  # how long rank 0 waits, after a collective failed, for the rank that caused it to show


class SyncRlMixin(MinibatchRlBase[AgentT]):
    """Makes a minibatch runner one rank of a synchronous data-parallel run (see the module docstring).

    - ``affinity``: a list with one affinity dict per rank (rlpyt's form; e.g. ``make_affinity(...,
      gpu_per_run=2)``); its length is the number of ranks when the script starts them itself. A dict
      or None is one rank, or, under ``torchrun``, the same settings for every rank.
    - ``n_steps`` and ``log_interval_steps`` count env steps over all ranks; the sampler's and the
      algorithm's batch sizes are per rank (weak scaling: an iteration is ``world_size`` batches).
    - ``seed``: rank 0's, shared by all so that env ``r`` of the global batch is seeded ``seed + 1 + r``
      on whichever rank holds it; each rank's global RNGs get their own seed derived from it.
    - ``start_method``: how rank 0 starts the others, "fork" or "spawn" (default: spawn when any rank
      uses CUDA, which cannot be forked, else fork).
    - ``collective_timeout`` (s): the most any rank waits for the others in a collective (rendezvous,
      gradient average, gathering trajectory infos); it must exceed rank 0's longest evaluation.
    - ``backend``: "gloo" or "nccl"; default NCCL when the ranks have ``cuda_idx``, else gloo.

    Rank 0 alone logs, evaluates (``SyncRlEval``) and writes checkpoints; with ``resume`` every rank
    continues from rank 0's checkpoint.
    """

    def __init__(
        self,
        algo: AlgorithmContract[AgentT],
        agent: AgentT,
        sampler: SamplerContract,
        n_steps: int | float,
        seed: int | None = None,
        affinity: Sequence[Mapping[str, Any]] | Mapping[str, Any] | None = None,
        log_interval_steps: int | float = 1e5,
        checkpoint: ckpt.CheckpointPolicy | bool | None = None,
        resume: bool | str | os.PathLike[str] = False,
        start_method: str | None = None,
        collective_timeout: float = DEFAULT_COLLECTIVE_TIMEOUT_S,
        backend: str | None = None,
        *,
        progress_bar: bool | None = None,
        video_every: int | None = None,
        video_max_steps: int = 1000,
    ) -> None:
        name = type(self).__name__
        if affinity is None or isinstance(affinity, Mapping):
            affinities = [dict(affinity or {})]
        elif isinstance(affinity, Sequence) and affinity and all(isinstance(a, Mapping) for a in affinity):
            affinities = [dict(a) for a in affinity]
        else:
            raise TypeError(
                f"{name} takes a list with one affinity dict per rank (or one dict, or None), got {affinity!r}."
            )
        # MinibatchRlBase's own: SyncRl's log_traj_window is set by SyncRl, as MinibatchRl sets its own.
        MinibatchRlBase.__init__(
            self,
            algo=algo,
            agent=agent,
            sampler=sampler,
            n_steps=n_steps,
            seed=seed,
            affinity=affinities[0],
            log_interval_steps=log_interval_steps,
            checkpoint=checkpoint,
            resume=resume,
            progress_bar=progress_bar,
            video_every=video_every,
            video_max_steps=video_max_steps,
        )
        if start_method not in (None, "fork", "spawn", "forkserver"):
            raise ValueError(f"{name}: start_method must be 'fork', 'spawn' or 'forkserver', got {start_method!r}.")
        if not collective_timeout > 0:
            raise ValueError(
                f"{name}: collective_timeout must be a positive number of seconds, got {collective_timeout!r}."
            )
        self.affinities = affinities
        self.mode = "env" if launched_by_torchrun() else "fork"
        self.backend = choose_backend(
            [a.get("cuda_idx") for a in affinities],
            backend,
            gpu_per_local_rank=self.mode == "env" and len(affinities) == 1,
        )
        if start_method is None:
            start_method = "spawn" if self.backend == "nccl" else "fork"
        self.start_method = start_method
        self.collective_timeout = float(collective_timeout)
        self._ranks: RankProcesses | None = None  # rank 0 of forked ranks: the others
        self._rank_end: RankEnd | None = None  # a forked rank: its line to rank 0
        self._store: dist.TCPStore | None = None
        self._store_port: int | None = None
        self._group_initialized = False

    # ---- launching ----

    def train(self) -> dict[str, Any]:
        """Run this rank's share of training (starting the other ranks first, in forked mode); return
        rank 0's last logged row (an empty dict on other ranks).

        A rank that raises, dies or gets stuck becomes one :class:`RankProcessError` in rank 0 (forked
        ranks), naming it, with its traceback or stack; every rank process is then stopped.
        """
        if self._rank_end is not None:  # a forked rank, inside its process
            return super().train()
        if self.mode == "env":
            env = launch_env()
            self._set_rank(env.rank, env.world_size, self._affinity_of_local_rank(env.local_rank, env.local_world_size))
            if env.rank != 0:
                self.checkpoint_policy = None
                logger.push_state()
                logger.disable()  # rank 0 alone logs
            try:
                return super().train()
            except RuntimeError as e:
                if "timed out" in str(e).lower() or "connection" in str(e).lower():
                    raise RuntimeError(
                        f"SyncRl rank {self.rank} of {self.world_size}: a collective with the other ranks failed "
                        f"({e}). Another rank failed, was killed or is stuck (a collective waits at most "
                        f"collective_timeout={self.collective_timeout:g} s); the launcher's output names it."
                    ) from e
                raise
            finally:
                self._leave_group()
                if env.rank != 0:
                    logger.pop_state()
        self.world_size = len(self.affinities)
        if self.world_size == 1:
            return super().train()
        if self.seed is None:
            self.seed = make_seed()  # one seed for all ranks, drawn before they start
        self._store = open_store(self.world_size, self.collective_timeout)
        self._store_port = self._store.port
        ctx = multiprocessing.get_context(self.start_method)
        self._ranks = ranks = RankProcesses(ctx, self.world_size)
        try:
            try:
                ranks.start(_run_rank, lambda rank, end: (self, rank, end))
            except (pickle.PicklingError, AttributeError, TypeError) as e:
                if self.start_method == "fork":
                    raise
                raise TypeError(
                    f"{type(self).__name__} with start_method={self.start_method!r} sends the runner, algorithm, "
                    f"agent and sampler to each rank by pickling, which failed: {e}. Define env classes and "
                    "functions at module level (no lambdas or local classes), or use start_method='fork' on CPUs."
                ) from e
            ranks.wait_started(timeout=max(60.0, self.collective_timeout))
            ranks.start_watch()
            row = super().train()
            error = ranks.join(FINISH_TIMEOUT_S)
            if error is not None:
                raise error
            return row
        except BaseException as e:
            error = self._rank_error(e)
            if error is not None:
                raise error from e
            raise
        finally:
            ranks.stop()
            self._leave_group()
            self._store = None

    def _rank_error(self, cause: BaseException) -> RankProcessError | None:
        """The other ranks' failure behind ``cause`` (rank 0's error), or None when rank 0 failed first."""
        assert self._ranks is not None
        if isinstance(cause, RankProcessError) or not isinstance(cause, Exception):
            return None  # already explained, or a stop (Ctrl-C, SIGTERM) that rank 0 handled itself
        error = self._ranks.failure(wait_s=FAILURE_WAIT_S if isinstance(cause, RuntimeError) else 0.0)
        if error is None and "timed out" in str(cause).lower():
            error = self._ranks.stuck_error(self.diagnostics.itrs_done, self.collective_timeout, cause)
        return error

    def _affinity_of_local_rank(self, local_rank: int, local_world_size: int) -> dict[str, Any]:
        if len(self.affinities) == 1:
            affinity = dict(self.affinities[0])
            if self.backend == "nccl" and "cuda_idx" not in affinity:
                affinity["cuda_idx"] = local_rank
            return affinity
        if len(self.affinities) != local_world_size:
            raise ValueError(
                f"{type(self).__name__} got {len(self.affinities)} affinity dicts, but torchrun started "
                f"{local_world_size} ranks on this machine (LOCAL_WORLD_SIZE). Give one dict per local rank, "
                "or one dict for all."
            )
        return dict(self.affinities[local_rank])

    def _set_rank(self, rank: int, world_size: int, affinity: dict[str, Any]) -> None:
        self.rank, self.world_size = rank, world_size
        self.affinity = check_affinity(affinity, type(self).__name__)
        self._affinity_arg = affinity
        # Only rank 0 writes checkpoints and logs; the others take their settings from it.
        self.handles_stop_signals = rank == 0 or self.mode == "env"

    def _leave_group(self) -> None:
        self.agent.leave_data_parallel()
        if self._group_initialized:
            leave_group()  # destroys the group if it still exists, then lets gloo's workers settle
        self._group_initialized = False

    # ---- startup ----

    def startup(self) -> int:
        """Join the process group, agree on rank 0's seed, then the usual startup (whose DDP wrapping
        copies rank 0's weights to every rank); each rank reseeds its own global RNGs after it."""
        if self.world_size > 1:
            store = self._store if self.rank == 0 else None
            if self.mode == "fork" and self.rank != 0:
                store = open_store(self.world_size, self.collective_timeout, port=self._store_port)
            init_group(
                self.backend,
                self.rank,
                self.world_size,
                self.collective_timeout,
                store=store if self.mode == "fork" else None,
                cuda_idx=self.affinity.get("cuda_idx"),
            )
            self._group_initialized = True
            seed = [self.seed if self.seed is not None else make_seed()]
            dist.broadcast_object_list(seed, src=0)
            self.seed = seed[0]
            logger.log(f"SyncRl rank {self.rank} of {self.world_size} joined ({self.backend}, {self.mode} launch).")
        n_itr = super().startup()
        if self.rank != 0 and self.resumed_from is None:
            set_seed(derive_seed(self.seed or 0, RANK_SEED_DOMAIN, self.rank))
        return n_itr

    # ---- per iteration ----

    def store_diagnostics(self, itr: int, traj_infos: Sequence[TrajInfo], opt_info: OptInfoTuple | None) -> None:
        """Gather every rank's completed trajectories at rank 0 (one small collective per iteration,
        which also keeps the ranks in step), then keep them as the single-process runner does."""
        if self.world_size > 1:
            if self._rank_end is not None:
                self._rank_end.iteration_done(itr)
            if self._ranks is not None:
                error = self._ranks.failure()
                if error is not None:
                    raise error
            gathered: list[Any] | None = [None] * self.world_size if self.rank == 0 else None
            dist.gather_object(list(traj_infos), gathered, dst=0)
            if self.rank == 0:
                assert gathered is not None
                traj_infos = [info for infos in gathered for info in infos]
        super().store_diagnostics(itr, traj_infos, opt_info)

    def on_log_interval(self, itr: int) -> None:
        if self.rank == 0:
            super().on_log_interval(itr)

    def save_checkpoint(self, itr: int) -> ckpt.CheckpointInfo | None:
        if self.rank == 0:
            return super().save_checkpoint(itr)
        return None

    def __getstate__(self) -> dict[str, Any]:
        # What a spawned rank receives: the run's settings, not rank 0's processes or store.
        state = dict(self.__dict__)
        state.update(_ranks=None, _store=None)
        return state

    # ---- resuming ----

    def load_checkpoint(self) -> None:
        """Rank 0 finds the checkpoint and tells the others which; all load its agent and algorithm
        (optimiser, counters, replay). Rank 0 also restores its sampler and RNGs; the others keep fresh
        envs and reseed, so that they do not repeat rank 0's samples."""
        if self.world_size == 1:
            return super().load_checkpoint()
        if self.rank == 0:
            super().load_checkpoint()
        box = [self.resumed_from]
        dist.broadcast_object_list(box, src=0)
        info = box[0]
        if self.rank == 0 or info is None:
            return
        try:
            state = self.checkpointer.load(info)
        except (OSError, ckpt.CheckpointError) as e:
            raise ckpt.CheckpointError(
                f"SyncRl rank {self.rank} cannot read rank 0's checkpoint {info.path}: {e}. Ranks on other "
                "machines need the run folder on a file system they share with rank 0."
            ) from e
        self.agent.load_state_dict(state["agent"])
        self.agent.sync_shared_memory()
        self.algo.load_state_dict(state["algo"])
        self._resumed_at(info)
        self.diagnostics.itrs_done = self._start_itr
        set_seed(derive_seed(self.seed or 0, RANK_SEED_DOMAIN, self.rank, self._start_itr))


def _run_rank(runner: SyncRlMixin[Any], rank: int, end: RankEnd) -> None:
    """A forked rank's process: train as ``rank`` silently; on failure leave the traceback for rank 0."""
    die_with_parent()
    end.enable_stack_dumps()
    # Ctrl-C, and a SIGTERM sent to the whole process group (timeout, a batch system), reach every
    # process; rank 0 decides: it finishes the iteration (which needs this rank), then stops the ranks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    end.hello()
    code = 0
    try:
        logger.push_state()
        logger.disable()  # rank 0 alone logs
        runner._rank_end = end
        runner._ranks = runner._store = None  # rank 0's, copied by fork
        runner._set_rank(rank, len(runner.affinities), runner.affinities[rank])
        runner.checkpoint_policy = None
        runner.train()
    except BaseException:
        end.failed(traceback.format_exc())
        code = 1
    finally:
        end.close()
    sys.stdout.flush()
    os._exit(code)  # skip the parent's atexit handlers a forked child inherited


class SyncRl(SyncRlMixin[AgentT], MinibatchRl[AgentT]):
    """Multi-process training that reports the training trajectories of all ranks (rank 0 logs).

    As in rlpyt (and :class:`MinibatchRl`), ``log_traj_window`` is the one positional argument; the
    others are keywords (:class:`SyncRlMixin`'s), so a subclass may call
    ``super().__init__(log_traj_window, **kwargs)``.
    """

    def __init__(
        self,
        log_traj_window: int = 100,
        *,
        algo: AlgorithmContract[AgentT],
        agent: AgentT,
        sampler: SamplerContract,
        n_steps: int | float,
        seed: int | None = None,
        affinity: Sequence[Mapping[str, Any]] | Mapping[str, Any] | None = None,
        log_interval_steps: int | float = 1e5,
        checkpoint: ckpt.CheckpointPolicy | bool | None = None,
        resume: bool | str | os.PathLike[str] = False,
        start_method: str | None = None,
        collective_timeout: float = DEFAULT_COLLECTIVE_TIMEOUT_S,
        backend: str | None = None,
        progress_bar: bool | None = None,
        video_every: int | None = None,
        video_max_steps: int = 1000,
    ) -> None:
        self.log_traj_window = check_log_traj_window(log_traj_window, type(self).__name__)
        super().__init__(
            algo,
            agent,
            sampler,
            n_steps,
            seed,
            affinity,
            log_interval_steps,
            checkpoint,
            resume,
            start_method,
            collective_timeout,
            backend,
            progress_bar=progress_bar,
            video_every=video_every,
            video_max_steps=video_max_steps,
        )


class SyncRlEval(SyncRlMixin[AgentT], MinibatchRlEval[AgentT]):
    """Multi-process training that evaluates the agent on rank 0 alone, before training and at each
    log interval; the other ranks wait for it at their next collective (within ``collective_timeout``)."""

    def on_training_start(self) -> None:
        if self.rank == 0:
            super().on_training_start()
