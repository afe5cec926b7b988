"""The sampler whose workers run both the envs and the agent, each on its own CPU."""

from __future__ import annotations

from typing import Any

from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector, EvalCollector, ResetCollector
from rlrun.samplers.parallel.base import ParallelSamplerBase
from rlrun.utils.data_model import SamplesBatch

__all__ = ["CpuSampler"]


class CpuSampler(ParallelSamplerBase):
    """Each worker steps its envs and runs the agent on them, writing into its columns of the shared batch.

    The agent's model lives in shared memory: workers act with the weights the optimizer last
    produced, because :meth:`obtain_samples` and :meth:`evaluate_agent` first call
    ``agent.sync_shared_memory()`` (a copy only when the model trains on another device).
    With the same seed and ``batch_B`` the samples equal :class:`~rlrun.samplers.serial.sampler.SerialSampler`'s,
    whatever the number of workers.
    """

    def __init__(
        self,
        *args: Any,
        CollectorCls: type[BaseCollector] = ResetCollector,
        eval_CollectorCls: type[BaseEvalCollector] = EvalCollector,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, CollectorCls=CollectorCls, eval_CollectorCls=eval_CollectorCls, **kwargs)

    def obtain_samples(self, itr: int) -> tuple[SamplesBatch, list[TrajInfo]]:
        self.agent.sync_shared_memory()
        return super().obtain_samples(itr)

    def evaluate_agent(self, itr: int) -> list[TrajInfo]:
        self.agent.sync_shared_memory()
        return super().evaluate_agent(itr)
