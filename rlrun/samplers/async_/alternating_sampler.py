"""The asynchronous alternating sampler: two groups of workers step their envs while the sampler process
computes the other group's actions."""

from __future__ import annotations

from typing import Any

from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.async_.collectors import DbGpuResetCollector
from rlrun.samplers.async_.parallel import AsyncParallelSamplerMixin
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector
from rlrun.samplers.parallel.gpu.alternating_sampler import AlternatingSampler
from rlrun.samplers.parallel.gpu.collectors import GpuEvalCollector

__all__ = ["AsyncAlternatingSampler", "AsyncNoOverlapAlternatingSampler"]


class AsyncAlternatingSampler(AsyncParallelSamplerMixin, AlternatingSampler):  # type: ignore[misc]  # rlpyt\'s async signatures
    """:class:`~rlrun.samplers.parallel.gpu.alternating_sampler.AlternatingSampler` in a process of its own,
    with a private model refreshed from the optimiser's published weights between batches."""

    def __init__(
        self,
        *args: Any,
        CollectorCls: type[BaseCollector] = DbGpuResetCollector,
        eval_CollectorCls: type[BaseEvalCollector] = GpuEvalCollector,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, CollectorCls=CollectorCls, eval_CollectorCls=eval_CollectorCls, **kwargs)

    def _prepare_agent(self, affinity: dict) -> None:
        self.agent.async_cpu(share_memory=False)
        self.agent.to_device(affinity.get("cuda_idx"))

    def _build_buffers(self, env: Any, bootstrap_value: bool):
        examples = super()._build_buffers(env, bootstrap_value)
        self._build_step_buffers(examples)
        return examples

    def evaluate_agent(self, itr: int) -> list[TrajInfo]:
        self.agent.recv_shared_memory()
        return super().evaluate_agent(itr)


class AsyncNoOverlapAlternatingSampler(AsyncAlternatingSampler):
    """:class:`AsyncAlternatingSampler` whose groups never step envs at the same time (as
    :class:`~rlrun.samplers.parallel.gpu.alternating_sampler.NoOverlapAlternatingSampler`)."""

    no_overlap = True
