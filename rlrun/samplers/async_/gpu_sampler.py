"""The asynchronous served sampler: its process computes every env's action in one batched forward pass
(on ``affinity['sampler']['cuda_idx']`` when given), its workers only step envs."""

from __future__ import annotations

from typing import Any

from rlrun.samplers.async_.collectors import DbGpuResetCollector
from rlrun.samplers.async_.parallel import AsyncParallelSamplerBase
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector
from rlrun.samplers.parallel.gpu.collectors import GpuEvalCollector
from rlrun.samplers.parallel.gpu.sampler import GpuSampler

__all__ = ["AsyncGpuSampler"]


class AsyncGpuSampler(AsyncParallelSamplerBase):
    """:class:`~rlrun.samplers.parallel.gpu.sampler.GpuSampler` in a process of its own. The sampler's model
    is a private copy (on its device) that it refreshes from the optimiser's published weights between
    batches and before evaluations, so sampler and optimiser may sit on different GPUs, or both on the CPU."""

    def __init__(
        self,
        *args: Any,
        CollectorCls: type[BaseCollector] = DbGpuResetCollector,
        eval_CollectorCls: type[BaseEvalCollector] = GpuEvalCollector,
        **kwargs: Any,
    ) -> None:
        engine = GpuSampler(*args, CollectorCls=CollectorCls, eval_CollectorCls=eval_CollectorCls, **kwargs)
        super().__init__(engine)
