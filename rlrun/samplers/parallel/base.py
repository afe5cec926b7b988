"""What the parallel samplers share: worker processes over column slices of one shared batch.

The master builds one env (to validate it and size the agent and the buffer), puts the ``[T, B]``
samples buffer in shared memory, and starts one process per worker through a
:class:`~rlrun.samplers.parallel.pool.WorkerPool`. Worker ``r`` owns envs ``slice_B`` of the batch
and writes straight into ``samples_np[:, slice_B]``. Each round is one command to every worker and
one report back from each (see :mod:`rlrun.samplers.parallel.protocol`); samplers whose master
serves the actions exchange step signals in between (:mod:`rlrun.samplers.parallel.gpu`).
"""

from __future__ import annotations

import dataclasses
import logging
import pickle
import sys
import types
from collections.abc import Callable, Mapping
from multiprocessing.process import BaseProcess
from multiprocessing.util import Finalize
from typing import Any, ClassVar

import numpy as np
import torch.multiprocessing as torch_mp  # its context pickles shared tensors by handle, for spawn

from rlrun.agents.base import BaseAgent
from rlrun.envs.traj_info import TrajInfo
from rlrun.envs.validation import validate_env
from rlrun.samplers.base import BaseSampler, report_unfinished_evaluation
from rlrun.samplers.batch_buffers import BatchBuffers
from rlrun.samplers.builder import eval_env_ranks_of
from rlrun.samplers.collectors import episode_quotas
from rlrun.samplers.parallel.gpu.serving import ActionServing
from rlrun.samplers.parallel.pool import DEFAULT_TIMEOUT_S, WorkerLabel, WorkerPool
from rlrun.samplers.parallel.protocol import Command, CommandKind, SamplerWorkerError
from rlrun.samplers.parallel.restarts import RestartLedger
from rlrun.samplers.parallel.worker import SamplerSpec, WorkerSettings, sampling_process
from rlrun.utils.collections import AttrDict, NamedArrayTuple
from rlrun.utils.data_model import SamplesBatch
from rlrun.utils.launching.affinity import affinity_for_sampler
from rlrun.utils.launching.main_guard import refuse_while_bootstrapping
from rlrun.utils.seed import derive_seed, make_seed

__all__ = ["ParallelSamplerBase", "SamplerWorkerError", "resolve_start_method"]

_log = logging.getLogger(__name__)

START_METHODS = ("fork", "spawn", "forkserver")
WORKER_SEED_DOMAIN = 0x5EED_0001  # keys the workers' global seeds apart from anything else
RESTART_SEED_DOMAIN = 0x5EED_0002  # keys the seeds of restarted workers' envs
EXIT_PRIORITY = 10  # multiprocessing runs finalizers with a priority >= 0 before it joins children at exit


def resolve_start_method(start_method: str | None) -> str:
    """``None`` -> fork on Linux (fast, no pickling), spawn elsewhere (fork is unsafe on macOS)."""
    if start_method is None:
        return "fork" if sys.platform.startswith("linux") else "spawn"
    if start_method not in START_METHODS:
        raise ValueError(f"start_method must be one of {START_METHODS} or None, got {start_method!r}.")
    return start_method


class ParallelSamplerBase(BaseSampler):
    """Runs collectors in worker processes; subclasses decide where the agent acts.

    ``start_method`` ("fork", "spawn", "forkserver"; None: fork on Linux, else spawn) chooses how
    workers start. Under spawn and forkserver everything a worker needs (EnvCls, env_kwargs,
    collectors, the agent's classes) must be importable by the child.

    ``worker_timeout`` (seconds; None for no limit) bounds the workers' start-up and every round. A
    worker still busy then becomes a :class:`SamplerWorkerError` that shows its Python stack; at half
    the time a warning logs the same stack. A worker that raises, dies or is stopped is reported
    within seconds whatever this is.

    ``worker_restarts`` (default 0: none) is how many such faults the run survives: the faulty worker
    is killed and replaced by a new one for the same env ranks, its envs seeded anew (no seed
    repeats), and the batch or evaluation being collected is dropped and collected again. Each
    restart is logged, and the fault after the last one ends the run with a
    :class:`SamplerWorkerError` that names them all. See docs/parallel_sampling.md.
    """

    # The parts, chosen by the public classes: where the agent acts (in the workers, or served by the
    # master: ``gpu``), and how the master serves (two alternating groups, with or without overlap).
    gpu: ClassVar[bool] = False
    alternating: ClassVar[bool] = False
    no_overlap: ClassVar[bool] = False

    def __init__(
        self,
        *args: Any,
        start_method: str | None = None,
        worker_timeout: float | None = DEFAULT_TIMEOUT_S,
        worker_restarts: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.restarts = RestartLedger(worker_restarts)  # validates it
        self.worker_restarts = worker_restarts
        self.start_method = resolve_start_method(start_method)
        if worker_timeout is not None and not float(worker_timeout) > 0:
            raise ValueError(f"worker_timeout must be a positive number of seconds or None, got {worker_timeout!r}.")
        self.worker_timeout = None if worker_timeout is None else float(worker_timeout)
        self._requested_eval_n_envs = self.eval_n_envs  # initialize rounds eval_n_envs to the workers
        self.eval_n_envs_per = 0  # evaluation envs per worker (initialize)
        self.eval_max_T = 0  # steps per evaluation env (initialize)
        self.n_worker = 0
        self.pool: WorkerPool | None = None
        self.buffers: BatchBuffers | None = None
        self.server: ActionServing | None = None
        self.world_size, self.rank = 1, 0
        self._target: Callable[..., None] = sampling_process  # the workers' target
        self._finalizer: Finalize | None = None
        self._n_unfinished = 0
        # Set by initialize (_launch).
        self.seed: int
        self.agent: BaseAgent
        self.samples_np: NamedArrayTuple
        self.samples_pyt: NamedArrayTuple
        self._spec: SamplerSpec
        self._settings: list[WorkerSettings]

    @property
    def worker_restart_count(self) -> int | None:
        """Worker restarts made since :meth:`initialize`; None when ``worker_restarts=0`` (the runners log
        this as the ``WorkerRestarts`` column)."""
        return self.restarts.count if self.worker_restarts else None

    @property
    def workers(self) -> list[BaseProcess]:
        """The worker processes (empty when not running)."""
        return list(self.pool.processes) if self.pool is not None else []

    # ---- API ----

    def initialize(
        self,
        agent: BaseAgent,
        affinity: Mapping[str, object] | None = None,
        seed: int | None = None,
        bootstrap_value: bool = False,
        traj_info_kwargs: Mapping[str, object] | None = None,
        rank: int = 0,
        world_size: int = 1,
        worker_process: Callable[..., None] | None = None,
    ) -> dict[str, Any]:
        """Start the workers and return the examples (one env step and agent step) for the algorithm.

        Returns once every worker has built and decorrelated its envs. ``affinity`` gives the
        workers (``workers_cpus``: one entry per worker) or None for one unpinned worker per usable CPU.
        ``worker_process`` replaces the workers' target, :func:`~rlrun.samplers.parallel.worker.sampling_process`;
        it is called with ``(SamplerSpec, WorkerSettings, WorkerEnd, WorkerErrors)``.
        """
        refuse_while_bootstrapping(f"{type(self).__name__}.initialize()")  # a script without its main guard
        self._target = sampling_process if worker_process is None else worker_process
        affinity, n_envs_list = self._plan(agent, affinity, rank, world_size)
        B = self.batch_spec.B
        env = self.EnvCls(**self.env_kwargs)
        try:
            validate_env(env)
            agent.initialize(
                env.spaces, share_memory=not self.gpu, global_B=B * world_size, env_ranks=self._env_ranks()
            )
            buffers = BatchBuffers.build(agent, env, self.batch_spec, bootstrap_value, shared=True)
        finally:
            env.close()
        self._launch(agent, buffers, affinity, n_envs_list, seed, traj_info_kwargs)
        return buffers.examples

    def start_with(
        self,
        agent: BaseAgent,
        buffers: BatchBuffers,
        affinity: Mapping[str, object] | None = None,
        seed: int | None = None,
        traj_info_kwargs: Mapping[str, object] | None = None,
        rank: int = 0,
        world_size: int = 1,
    ) -> None:
        """Start the workers on ``buffers`` built elsewhere, for an ``agent`` initialized elsewhere (an
        asynchronous sampler's double buffer and sampler model); the rest of :meth:`initialize`."""
        self._target = sampling_process
        affinity, n_envs_list = self._plan(agent, affinity, rank, world_size)
        self._launch(agent, buffers, affinity, n_envs_list, seed, traj_info_kwargs)

    def obtain_samples(self, itr: int) -> tuple[SamplesBatch, list[TrajInfo]]:
        """One batch from all workers; returns ``(samples, completed_traj_infos)``, samples as torch views."""
        traj_infos = self.collect_round(itr)
        return self.samples_pyt, traj_infos

    def collect_round(self, itr: int) -> list[TrajInfo]:
        """Batch ``itr`` into its buffer (half ``itr % 2`` of a double buffer); returns the completed
        trajectories. :meth:`obtain_samples` without the agent's weights sync."""
        assert self.buffers is not None, "initialize() first"
        self.samples_np, self.samples_pyt = self.buffers.np_of(itr), self.buffers.pyt_of(itr)
        return self._run_round(Command(CommandKind.COLLECT, itr))

    def evaluate_agent(self, itr: int) -> list[TrajInfo]:
        """Run the evaluation episodes in the workers; returns their TrajInfos."""
        return self.evaluation_round(itr)

    def evaluation_round(self, itr: int) -> list[TrajInfo]:
        """:meth:`evaluate_agent` without the agent's weights sync."""
        if self.eval_n_envs <= 0:
            raise RuntimeError("evaluate_agent needs eval_n_envs > 0 in the sampler.")
        traj_infos = self._run_round(Command(CommandKind.EVALUATE, itr))
        report_unfinished_evaluation(_log, itr, len(traj_infos), self._n_unfinished, self.eval_max_steps)
        return traj_infos

    def shutdown(self) -> None:
        """Stop every worker and release the pipes; safe to call more than once.

        Also runs at interpreter exit, and after any error in :meth:`obtain_samples` or
        :meth:`evaluate_agent` (a failed worker, Ctrl-C), before that error propagates.
        """
        if self._finalizer is not None:
            self._finalizer()  # runs pool.stop once, whoever calls first
        self.pool = None

    # ---- start-up ----

    def _env_ranks(self) -> list[int]:
        B = self.batch_spec.B
        return list(range(self.rank * B, (self.rank + 1) * B))

    def _plan(
        self, agent: BaseAgent, affinity: Mapping[str, object] | None, rank: int, world_size: int
    ) -> tuple[AttrDict, list[int]]:
        """Resolve the affinity, split the envs over the workers and the evaluation envs too, and refuse
        what a spawned worker could not import: all before anything is built."""
        if self._finalizer is not None and self._finalizer.still_active():
            raise RuntimeError(f"{type(self).__name__} is already running; call shutdown() before initializing again.")
        affinity = affinity_for_sampler(affinity, alternating=self.alternating)
        n_envs_list = self._get_n_envs_list(affinity=affinity)
        self.n_worker = n_worker = len(n_envs_list)
        self.world_size, self.rank = world_size, rank
        if self._requested_eval_n_envs > 0:
            self.eval_n_envs_per = max(1, self._requested_eval_n_envs // n_worker)
            self.eval_n_envs = self.eval_n_envs_per * n_worker
            assert self.eval_max_steps is not None  # BaseSampler requires it with eval_n_envs
            self.eval_max_T = max(1, self.eval_max_steps // self.eval_n_envs)
            _log.info("Parallel evaluation: %d envs, %d per worker.", self.eval_n_envs, self.eval_n_envs_per)
        if self.start_method != "fork":
            self._check_importable(agent, self._target)
        return affinity, n_envs_list

    def _launch(
        self,
        agent: BaseAgent,
        buffers: BatchBuffers,
        affinity: AttrDict,
        n_envs_list: list[int],
        seed: int | None,
        traj_info_kwargs: Mapping[str, object] | None,
    ) -> None:
        """Start the worker pool on ``buffers`` (and the action server where the master serves actions);
        returns once every worker has built and decorrelated its envs."""
        seed = make_seed() if seed is None else int(seed)
        self.seed = seed
        self.agent = agent
        self.buffers = buffers
        self.samples_np, self.samples_pyt = buffers.np_of(0), buffers.pyt_of(0)
        global_B = self.batch_spec.B * self.world_size
        self.server = None
        if self.gpu:
            self.server = ActionServing(
                agent,
                buffers.examples,
                self.batch_spec.B,
                self.eval_n_envs,
                alternating=self.alternating,
                no_overlap=self.no_overlap,
                mid_batch_reset=self.mid_batch_reset,
            )
        spec = self._sampler_spec(affinity, global_B, seed, traj_info_kwargs)
        settings = self._worker_settings(affinity, seed, n_envs_list)
        labels = [WorkerLabel(s.env_ranks, s.eval_env_ranks) for s in settings]
        self._spec, self._settings = spec, settings
        self.restarts = RestartLedger(self.worker_restarts)  # a budget per run of the workers
        self.pool = pool = WorkerPool(
            torch_mp.get_context(self.start_method),
            labels,
            self.worker_timeout,
            restarts=self.restarts if self.worker_restarts else None,
        )
        # Stops the workers when the sampler is collected or at interpreter exit. multiprocessing's
        # Finalize with an exit priority runs before multiprocessing joins its children at exit; a
        # weakref.finalize made later than some other one would run after that join, which never ends.
        self._finalizer = Finalize(self, pool.stop, exitpriority=EXIT_PRIORITY)
        try:
            try:
                pool.start(self._target, lambda r, end: (*self._worker_args(r), end, pool.errors))
            except (pickle.PicklingError, AttributeError, TypeError) as e:
                if self.start_method == "fork":
                    raise
                raise TypeError(
                    f"Cannot send the sampler's arguments to a {self.start_method} worker: {e}. Under spawn and "
                    "forkserver, EnvCls, env_kwargs, the collectors, TrajInfoCls and the agent must pickle by "
                    "reference (module-level classes and functions, no lambdas or local classes). Move them to an "
                    "importable module, or use start_method='fork'."
                ) from e
            pool.wait_started()  # every worker built its envs and decorrelated them
        except BaseException:
            self.shutdown()
            raise
        if self.server is not None:
            self.server.start(seed, self._env_ranks(), settings, global_B)
        _log.info(
            "%s started %d workers (%s), envs per worker %s.",
            type(self).__name__,
            len(n_envs_list),
            self.start_method,
            n_envs_list,
        )

    def _worker_args(self, rank: int) -> tuple[SamplerSpec, WorkerSettings]:
        """Worker ``rank``'s spec and settings; a restarted worker's envs, agent streams and global RNGs get
        seeds derived from (seed, sampler rank, worker, restart count), so no restart repeats a seed."""
        spec, settings = self._spec, self._settings[rank]
        restarts = self.restarts.restarts_of(rank)
        if not restarts:
            return spec, settings
        seed = derive_seed(self.seed, RESTART_SEED_DOMAIN, self.rank, rank, restarts)
        worker_seed = derive_seed(seed, WORKER_SEED_DOMAIN, self.rank, rank)
        return dataclasses.replace(spec, seed=seed), dataclasses.replace(settings, seed=worker_seed)

    # ---- rounds ----

    def _run_round(self, command: Command) -> list[TrajInfo]:
        """Send ``command`` to every worker and return the TrajInfos they finished, in worker order.

        A round in which workers were lost (and restarts are left) is dropped, whatever the others wrote:
        the lost workers are replaced and the whole round runs again, so the caller never sees a batch
        with columns half written or an evaluation cut short.

        Anything that goes wrong between the command sent and the last report (a failed worker,
        Ctrl-C) shuts everything down before it propagates: a round opened but not waited for would
        leave master and workers a round apart, the master reading the batch while workers write it.
        """
        pool = self._running_pool()
        server = self.server
        try:
            while True:
                pool.send(command)
                if server is None:
                    reports = pool.gather_reports()
                elif command.kind is CommandKind.EVALUATE:
                    reports = server.serve_evaluation(pool, command.itr)
                else:
                    reports = server.serve_batch(pool, command.itr, self.samples_np)
                if not pool.down:
                    break
                restarted = pool.restart_down()
                if server is not None:
                    first = self.rank * self.batch_spec.B  # the global rank of this sampler's row 0
                    server.restarted([e - first for r in restarted for e in self._settings[r].env_ranks])
        except BaseException:
            self.shutdown()
            raise
        self._n_unfinished = sum(r.n_unfinished for r in reports)
        return [info for r in reports for info in r.traj_infos]

    def _running_pool(self) -> WorkerPool:
        if self.pool is None:
            raise RuntimeError(
                f"{type(self).__name__} is not running: call initialize() first (after shutdown() or a failed worker, "
                "build a new sampler or initialize again)."
            )
        return self.pool

    # ---- helpers (rlpyt's names where rlpyt had them) ----

    def _get_n_envs_list(
        self, affinity: Mapping[str, object] | None = None, n_worker: int | None = None, B: int | None = None
    ) -> list[int]:
        """Envs per worker: ``B`` split evenly, the first workers taking one more when it does not divide;
        fewer workers than requested when ``B`` is smaller. Alternating samplers split half the envs
        over each half of the workers, pairwise alike (worker w and w + n/2 hold as many)."""
        B = self.batch_spec.B if B is None else B
        if n_worker is None:
            n_worker = len(affinity_for_sampler(affinity, alternating=self.alternating)["workers_cpus"])
        if not self.alternating:
            return _split_envs(B, n_worker)
        if n_worker % 2:
            raise ValueError(
                f"{type(self).__name__} needs an even number of workers (two groups), got {n_worker}. "
                "Use make_affinity(..., alternating=True), which gives two workers per core."
            )
        half = _split_envs(B // 2, n_worker // 2)
        return half + half

    def _sampler_spec(
        self, affinity: AttrDict, global_B: int = 1, seed: int = 0, traj_info_kwargs: Mapping[str, object] | None = None
    ) -> SamplerSpec:
        return SamplerSpec(
            EnvCls=self.EnvCls,
            env_kwargs=self.env_kwargs,
            eval_env_kwargs=self.eval_env_kwargs,
            CollectorCls=self.CollectorCls,
            eval_CollectorCls=self.eval_CollectorCls,
            TrajInfoCls=self.TrajInfoCls,
            traj_info_kwargs=dict(traj_info_kwargs or {}),
            batch_T=self.batch_spec.T,
            global_B=global_B,
            seed=seed,
            max_decorrelation_steps=self.max_decorrelation_steps,
            eval_max_T=self.eval_max_T,
            torch_threads=affinity.get("worker_torch_threads", None),
            agent=None if self.gpu else self.agent,
        )

    def _worker_settings(self, affinity: AttrDict, seed: int, n_envs_list: list[int]) -> list[WorkerSettings]:
        """Each worker's envs, columns, evaluation share, CPUs and seed."""
        B = sum(n_envs_list)
        global_B = B * self.world_size
        n_eval = max(0, self.eval_n_envs)
        per = n_eval // len(n_envs_list)
        all_eval_ranks = eval_env_ranks_of(global_B, self.rank, n_eval)
        eval_quotas = episode_quotas(n_eval, self.eval_max_trajectories) if n_eval else np.zeros(0, dtype=int)
        pin = affinity.get("set_affinity", True)
        buffers = self.buffers
        assert buffers is not None, "the workers' columns are those of the buffers _launch was given"
        settings = []
        i_env = 0
        for rank, n_envs in enumerate(n_envs_list):
            eval_slice = slice(rank * per, (rank + 1) * per)
            settings.append(
                WorkerSettings(
                    rank=rank,
                    env_ranks=tuple(range(self.rank * B + i_env, self.rank * B + i_env + n_envs)),
                    eval_env_ranks=tuple(all_eval_ranks[eval_slice]),
                    eval_max_trajectories=(
                        int(sum(eval_quotas[eval_slice])) if n_eval and self.eval_max_trajectories is not None else None
                    ),
                    seed=derive_seed(seed, WORKER_SEED_DOMAIN, self.rank, rank),  # its global RNGs
                    cpus=tuple(affinity["workers_cpus"][rank]) if pin else None,
                    samples_np=buffers.collector_samples(slice(i_env, i_env + n_envs)),
                    **(self.server.worker_rows(slice(i_env, i_env + n_envs), eval_slice) if self.server else {}),
                )
            )
            i_env += n_envs
        return settings

    def _check_importable(self, agent: BaseAgent, target: Callable[..., None]) -> None:
        """Refuse, before starting anything, what a spawn/forkserver child cannot import."""
        main = sys.modules.get("__main__")
        main_importable = main is not None and vars(main).get("__file__") is not None
        named: dict[str, Callable[..., object] | None] = dict(
            EnvCls=self.EnvCls,
            CollectorCls=self.CollectorCls,
            eval_CollectorCls=self.eval_CollectorCls,
            TrajInfoCls=self.TrajInfoCls,
            agent_class=type(agent),
            ModelCls=agent.ModelCls,
            worker_process=target,
        )
        for what, obj in named.items():
            if obj is None:
                continue
            # Classes and functions have a qualified name and a module; another callable (a partial, an instance
            # with __call__) is named by its repr and lives in its class's module.
            named_def = isinstance(obj, type | types.FunctionType | types.BuiltinFunctionType | types.MethodType)
            name = obj.__qualname__ if named_def else repr(obj)
            module = obj.__module__ if named_def else type(obj).__module__
            where = None
            if module == "__main__" and not main_importable:
                where = "is defined in __main__ of an interactive session or `python -c`, which child processes cannot import"
            else:
                try:
                    pickle.dumps(obj)
                except Exception as e:
                    where = f"cannot be pickled by reference ({e})"
            if where is not None:
                raise TypeError(
                    f"{what}={name} {where}, and start_method={self.start_method!r} starts workers that import "
                    "what they run. Move it to an importable module (a .py file on the path), or use "
                    "start_method='fork' (Linux)."
                )


def _split_envs(B: int, n_worker: int) -> list[int]:
    """``B`` envs over ``n_worker`` workers (see ``ParallelSamplerBase._get_n_envs_list``)."""
    if B < n_worker:
        _log.warning(
            "batch_B=%d is smaller than the %d sampler workers available; using %d workers (raise batch_B to use "
            "them all).",
            B,
            n_worker,
            B,
        )
        n_worker = B
    n_envs_list = [B // n_worker] * n_worker
    if B % n_worker:
        _log.warning(
            "batch_B=%d envs do not split evenly over %d workers: %d worker(s) get one env more, and the "
            "others wait for them every batch (a multiple of the worker count is faster).",
            B,
            n_worker,
            B % n_worker,
        )
        for b in range(B % n_worker):
            n_envs_list[b] += 1
    return n_envs_list
