"""The samplers whose master serves actions to workers that only step envs (rlpyt's GpuSampler).

A served sampler is the parallel sampler (:class:`~rlrun.samplers.parallel.base.ParallelSamplerBase`:
a worker pool over column slices of one shared batch) with an action server as its part
(:class:`~rlrun.samplers.parallel.gpu.serving.ActionServing`): the master runs one batched forward
pass for every env per step, on the agent's device (a GPU where there is one, or the CPU), while the
workers' collectors (:mod:`rlrun.samplers.parallel.gpu.collectors`) step the envs.

With the same seed the samples equal :class:`~rlrun.samplers.serial.sampler.SerialSampler`'s exactly:
the agent acts on the same batch of ``B`` envs with the same per-env random streams.
"""

from __future__ import annotations

from typing import Any

from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector
from rlrun.samplers.parallel.base import ParallelSamplerBase
from rlrun.samplers.parallel.gpu.collectors import GpuEvalCollector, GpuResetCollector
from rlrun.samplers.parallel.gpu.serving import ServedGroup, StepBuffer, build_step_buffer

__all__ = ["GpuSamplerBase", "GpuSampler", "build_step_buffer", "StepBuffer", "ServedGroup"]


class GpuSamplerBase(ParallelSamplerBase):
    """Served sampling: envs in the workers, the agent in the master (see the module docstring).

    The agent is not shared with the workers; the runner may move it to a GPU (``affinity['cuda_idx']``),
    and the master then acts there. The public classes choose how the server groups the workers
    (``alternating``, ``no_overlap``); alternating ones split the envs into halves, so ``batch_B`` must
    be even.
    """

    gpu = True

    def __init__(
        self,
        *args: Any,
        CollectorCls: type[BaseCollector] = GpuResetCollector,
        eval_CollectorCls: type[BaseEvalCollector] = GpuEvalCollector,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, CollectorCls=CollectorCls, eval_CollectorCls=eval_CollectorCls, **kwargs)
        if self.alternating and self.batch_spec.B % 2:
            raise ValueError(
                f"{type(self).__name__} splits the envs into two halves: batch_B must be even, got {self.batch_spec.B}."
            )


class GpuSampler(GpuSamplerBase):
    """Workers step envs; the master computes every env's action in one batched forward pass per step.

    Use it when the agent's forward pass is expensive per call (a GPU, or a large model): one call
    serves all ``batch_B`` envs, where :class:`~rlrun.samplers.parallel.cpu.sampler.CpuSampler` makes
    one call per worker on a slice. While the master acts, the workers wait; the alternating samplers
    overlap the two.
    """
