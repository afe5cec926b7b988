"""An asynchronous sampler: a synchronous sampler run in a process of its own, on a double buffer.

:class:`AsyncSamplerBase` is the asynchronous interface that :class:`~rlrun.runners.async_rl.AsyncRl`
calls, rlpyt's::

    training process:  examples = sampler.async_initialize(agent, bootstrap_value, traj_info_kwargs, seed)
    sampler process:   sampler.initialize(affinity); then per batch sampler.obtain_samples(itr, db_idx)

It is not a :class:`~rlrun.samplers.base.BaseSampler` (whose ``initialize`` and ``obtain_samples`` take
other arguments); it holds one, the *engine*, and assembles the run from parts:

- the engine: a :class:`~rlrun.samplers.serial.sampler.SerialSampler`, or a parallel sampler (CPU
  workers, or workers served by this process, alternating or not) with its worker pool and action server;
- the buffer scheme: a double buffer (:class:`~rlrun.samplers.batch_buffers.BatchBuffers` with two
  halves), batch ``itr`` into half ``itr % 2``, written by the ``Db`` collectors;
- the sampler's model: a copy of the optimiser's published weights, refreshed between batches.

``async_initialize`` builds one env to size things, initializes the agent with its model in shared
memory, and allocates the double buffer; ``initialize`` starts the engine on them in the sampler process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import torch

from rlrun.agents.base import BaseAgent
from rlrun.envs.base import Env
from rlrun.envs.traj_info import TrajInfo
from rlrun.envs.validation import validate_env
from rlrun.samplers.batch_buffers import BatchBuffers
from rlrun.samplers.collections import BatchSpec
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector
from rlrun.utils.collections import AttrDict, NamedArrayTuple
from rlrun.utils.launching.pinning import pin_to_cpus
from rlrun.utils.seed import make_seed

__all__ = ["AsyncSamplerBase", "AsyncSamplerMixin", "SamplingEngine"]

_log = logging.getLogger(__name__)


class SamplingEngine(Protocol):
    """What an asynchronous sampler needs of the synchronous sampler it runs (serial and parallel alike)."""

    EnvCls: Callable[..., Env]
    env_kwargs: dict[str, object]
    TrajInfoCls: type[TrajInfo]
    eval_n_envs: int
    n_worker: int
    CollectorCls: type[BaseCollector]
    eval_CollectorCls: type[BaseEvalCollector] | None
    eval_env_kwargs: dict[str, object]
    max_decorrelation_steps: int
    eval_max_steps: int | None
    eval_max_trajectories: int | None

    @property
    def batch_spec(self) -> BatchSpec: ...

    @property
    def mid_batch_reset(self) -> bool: ...

    def start_with(
        self,
        agent: BaseAgent,
        buffers: BatchBuffers,
        affinity: Mapping[str, object] | None = None,
        seed: int | None = None,
        traj_info_kwargs: Mapping[str, object] | None = None,
        rank: int = 0,
        world_size: int = 1,
    ) -> None: ...

    def collect_round(self, itr: int) -> list[TrajInfo]: ...

    def evaluation_round(self, itr: int) -> list[TrajInfo]: ...

    def shutdown(self) -> None: ...


class AsyncSamplerBase:
    """Runs ``sampler`` (the engine) in the sampler process of an asynchronous run (see the module docstring).

    The public classes choose the engine and how the sampler's model is held (:meth:`_prepare_agent`).
    ``start_method`` is how the runner starts the sampler and copier processes (a parallel engine's
    workers start the same way).
    """

    def __init__(self, sampler: SamplingEngine, start_method: str) -> None:
        self.sampler = sampler
        self.start_method = start_method
        self.agent: BaseAgent | None = None  # async_initialize's
        self.buffers: BatchBuffers | None = None
        self.seed = 0
        self.traj_info_kwargs: dict[str, object] = {}
        self.bootstrap_value = False

    # ---- the engine's settings, as the runner reads them ----

    @property
    def batch_spec(self) -> BatchSpec:
        return self.sampler.batch_spec

    @property
    def batch_size(self) -> int:
        return self.sampler.batch_spec.size

    @property
    def mid_batch_reset(self) -> bool:
        return self.sampler.mid_batch_reset

    @property
    def TrajInfoCls(self) -> type[TrajInfo]:  # noqa: N802  (rlpyt's attribute name)
        return self.sampler.TrajInfoCls

    @property
    def eval_n_envs(self) -> int:
        return self.sampler.eval_n_envs

    @property
    def n_worker(self) -> int:
        return self.sampler.n_worker

    # rlpyt's sampler settings, read through to the engine (scripts and collectors read them)
    @property
    def EnvCls(self) -> Callable[..., Env]:  # noqa: N802
        return self.sampler.EnvCls

    @property
    def env_kwargs(self) -> dict[str, object]:
        return self.sampler.env_kwargs

    @property
    def CollectorCls(self) -> type[BaseCollector]:  # noqa: N802
        return self.sampler.CollectorCls

    @property
    def eval_CollectorCls(self) -> type[BaseEvalCollector] | None:  # noqa: N802
        return self.sampler.eval_CollectorCls

    @property
    def eval_env_kwargs(self) -> dict[str, object]:
        return self.sampler.eval_env_kwargs

    @property
    def max_decorrelation_steps(self) -> int:
        return self.sampler.max_decorrelation_steps

    @property
    def eval_max_steps(self) -> int | None:
        return self.sampler.eval_max_steps

    @property
    def eval_max_trajectories(self) -> int | None:
        return self.sampler.eval_max_trajectories

    @property
    def worker_restart_count(self) -> int | None:
        """The engine's worker restarts so far (in the sampler process); None for an engine without workers
        or with ``worker_restarts=0``."""
        return None

    @property
    def double_buffer(self) -> tuple[NamedArrayTuple, ...]:
        """The two ``[T, B]`` numpy buffers (after :meth:`async_initialize`)."""
        if self.buffers is None:
            raise RuntimeError(f"{type(self).__name__}.async_initialize() builds the double buffer; call it first.")
        return self.buffers.halves_np

    # ---- training process ----

    def async_initialize(
        self,
        agent: BaseAgent,
        bootstrap_value: bool = False,
        traj_info_kwargs: Mapping[str, object] | None = None,
        seed: int | None = None,
    ) -> tuple[tuple[NamedArrayTuple, ...], dict[str, Any]]:
        """In the training process: initialize ``agent`` (model in shared memory, weights publishable),
        build the double buffer; returns ``(double_buffer, examples)``."""
        self.seed = make_seed() if seed is None else int(seed)
        self.traj_info_kwargs = dict(traj_info_kwargs or {})
        self.bootstrap_value = bootstrap_value
        spec = self.sampler.batch_spec
        env = self.sampler.EnvCls(**self.sampler.env_kwargs)
        try:
            validate_env(env)
            agent.initialize(env.spaces, share_memory=True, global_B=spec.B, env_ranks=list(range(spec.B)))
            agent.share_weights_async()
            self.buffers = BatchBuffers.build(agent, env, spec, bootstrap_value, shared=True, double=True)
        finally:
            env.close()
        self.agent = agent
        _log.info("%s: double buffer of 2 x [%d, %d] steps in shared memory.", type(self).__name__, *spec)
        return self.buffers.halves_np, self.buffers.examples

    # ---- sampler process ----

    def initialize(self, affinity: Mapping[str, object] | None = None) -> None:
        """In the sampler process (after :meth:`async_initialize`): pin it to ``affinity['master_cpus']`` if
        named, prepare the sampler's model, start the engine (its envs, or its workers)."""
        if self.buffers is None:
            raise RuntimeError(f"{type(self).__name__}.initialize() runs after async_initialize().")
        agent = self._agent()
        settings = AttrDict(affinity or {})  # rlpyt's keys, whatever their values
        if settings.get("master_cpus") is not None and settings.get("set_affinity", True):
            pin_to_cpus(settings["master_cpus"], "affinity['sampler']['master_cpus'] names CPUs")
        torch.set_num_threads(1)  # one batch per forward pass: more threads only compete with workers and optimiser
        self._prepare_agent(agent, settings)
        self.sampler.start_with(agent, self.buffers, settings or None, self.seed, self.traj_info_kwargs)
        agent.recv_shared_memory()

    def _agent(self) -> BaseAgent:
        if self.agent is None:
            raise RuntimeError(
                f"{type(self).__name__}.async_initialize(agent, ...) gives the sampler its agent; call it first."
            )
        return self.agent

    def _prepare_agent(self, agent: BaseAgent, affinity: AttrDict) -> None:
        """The sampler's own model (see ``BaseAgent.async_cpu``): here a private copy on
        ``affinity['cuda_idx']`` (the CPU without it), for an engine whose agent acts in this process."""
        agent.async_cpu(share_memory=False)
        agent.to_device(affinity.get("cuda_idx"))

    def obtain_samples(self, itr: int, db_idx: int = 0) -> list[TrajInfo]:
        """Collect batch ``itr`` into half ``db_idx`` (which is ``itr % 2``) with the newest published
        weights; returns the completed trajectories."""
        if db_idx != itr % 2:
            raise ValueError(f"Batch {itr} goes into half {itr % 2} of the double buffer, not db_idx={db_idx}.")
        agent = self._agent()
        agent.recv_shared_memory()
        agent.sample_mode(itr)
        return self.sampler.collect_round(itr)

    def evaluate_agent(self, itr: int) -> list[TrajInfo]:
        """Evaluation episodes with the newest published weights."""
        self._agent().recv_shared_memory()
        return self.sampler.evaluation_round(itr)

    def shutdown(self) -> None:
        """Stop the engine's workers and close its envs; safe to call more than once."""
        self.sampler.shutdown()


# rlpyt's name for the asynchronous half of a sampler (there a mixin; here the class the async samplers share).
AsyncSamplerMixin = AsyncSamplerBase
