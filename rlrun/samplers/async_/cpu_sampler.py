"""The asynchronous CPU sampler: its process runs a :class:`~rlrun.samplers.parallel.cpu.sampler.CpuSampler`'s
workers, each stepping its envs and acting with the sampler's copy of the model."""

from __future__ import annotations

from typing import Any

from rlrun.agents.base import BaseAgent
from rlrun.samplers.async_.collectors import DbCpuResetCollector
from rlrun.samplers.async_.parallel import AsyncParallelSamplerBase
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector, EvalCollector
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.utils.collections import AttrDict

__all__ = ["AsyncCpuSampler"]


class AsyncCpuSampler(AsyncParallelSamplerBase):
    """Runs in a process of its own and starts its workers below it (the worker protocol of the
    synchronous samplers: a failed, stuck or killed worker becomes one error here, which the runner
    raises). The workers act with the sampler's model, in shared memory, which the sampler refreshes
    from the optimiser's published weights between batches."""

    def __init__(
        self,
        *args: Any,
        CollectorCls: type[BaseCollector] = DbCpuResetCollector,
        eval_CollectorCls: type[BaseEvalCollector] = EvalCollector,
        **kwargs: Any,
    ) -> None:
        engine = CpuSampler(*args, CollectorCls=CollectorCls, eval_CollectorCls=eval_CollectorCls, **kwargs)
        super().__init__(engine)

    def _prepare_agent(self, agent: BaseAgent, affinity: AttrDict) -> None:
        agent.async_cpu(share_memory=True)  # the workers act with this copy
