"""The asynchronous served sampler: its process computes every env's action in one batched forward pass
(on ``affinity['sampler']['cuda_idx']`` when given), its workers only step envs."""

from __future__ import annotations

from typing import Any

from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.async_.collectors import DbGpuResetCollector
from rlrun.samplers.async_.parallel import AsyncParallelSamplerMixin
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector
from rlrun.samplers.parallel.gpu.collectors import GpuEvalCollector
from rlrun.samplers.parallel.gpu.sampler import GpuSampler

__all__ = ["AsyncGpuSampler", "AsyncServedSamplerMixin"]


class AsyncServedSamplerMixin(AsyncParallelSamplerMixin):
    """What the served async samplers add to their synchronous classes: double-buffer served collectors,
    the step buffers their workers share with the action server, and a private model on the sampler's
    device, refreshed from the optimiser's published weights between batches and before evaluations."""

    def __init__(
        self,
        *args: Any,
        CollectorCls: type[BaseCollector] = DbGpuResetCollector,
        eval_CollectorCls: type[BaseEvalCollector] = GpuEvalCollector,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, CollectorCls=CollectorCls, eval_CollectorCls=eval_CollectorCls, **kwargs)  # type: ignore[call-arg]  # the sampler class's

    def _prepare_agent(self, affinity: dict) -> None:
        self.agent.async_cpu(share_memory=False)
        self.agent.to_device(affinity.get("cuda_idx"))

    def _build_buffers(self, env: Any, bootstrap_value: bool):
        examples = super()._build_buffers(env, bootstrap_value)
        self._build_step_buffers(examples)  # type: ignore[attr-defined]  # GpuSamplerBase's
        return examples

    def evaluate_agent(self, itr: int) -> list[TrajInfo]:
        self.agent.recv_shared_memory()
        return super().evaluate_agent(itr)  # type: ignore[misc]


class AsyncGpuSampler(AsyncServedSamplerMixin, GpuSampler):  # type: ignore[misc]  # rlpyt\'s async signatures
    """:class:`~rlrun.samplers.parallel.gpu.sampler.GpuSampler` in a process of its own. The sampler's model
    is a private copy (on its device) that it refreshes from the optimiser's published weights between
    batches, so sampler and optimiser may sit on different GPUs, or both on the CPU."""
