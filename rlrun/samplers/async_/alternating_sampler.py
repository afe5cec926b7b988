"""The asynchronous alternating samplers: two groups of workers step their envs while the sampler process
computes the other group's actions."""

from __future__ import annotations

from typing import Any

from rlrun.samplers.async_.collectors import DbGpuResetCollector
from rlrun.samplers.async_.parallel import AsyncParallelSamplerBase
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector
from rlrun.samplers.parallel.gpu.alternating_sampler import AlternatingSampler, NoOverlapAlternatingSampler
from rlrun.samplers.parallel.gpu.collectors import GpuEvalCollector

__all__ = ["AsyncAlternatingSampler", "AsyncNoOverlapAlternatingSampler"]


class AsyncAlternatingSampler(AsyncParallelSamplerBase):
    """:class:`~rlrun.samplers.parallel.gpu.alternating_sampler.AlternatingSampler` in a process of its own,
    with a private model refreshed from the optimiser's published weights between batches."""

    def __init__(
        self,
        *args: Any,
        CollectorCls: type[BaseCollector] = DbGpuResetCollector,
        eval_CollectorCls: type[BaseEvalCollector] = GpuEvalCollector,
        **kwargs: Any,
    ) -> None:
        engine = AlternatingSampler(*args, CollectorCls=CollectorCls, eval_CollectorCls=eval_CollectorCls, **kwargs)
        super().__init__(engine)


class AsyncNoOverlapAlternatingSampler(AsyncParallelSamplerBase):
    """:class:`AsyncAlternatingSampler` whose groups never step envs at the same time (as
    :class:`~rlrun.samplers.parallel.gpu.alternating_sampler.NoOverlapAlternatingSampler`)."""

    def __init__(
        self,
        *args: Any,
        CollectorCls: type[BaseCollector] = DbGpuResetCollector,
        eval_CollectorCls: type[BaseEvalCollector] = GpuEvalCollector,
        **kwargs: Any,
    ) -> None:
        engine = NoOverlapAlternatingSampler(
            *args, CollectorCls=CollectorCls, eval_CollectorCls=eval_CollectorCls, **kwargs
        )
        super().__init__(engine)
