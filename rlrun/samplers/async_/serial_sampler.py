"""The asynchronous sampler without workers: its process steps every env and runs the agent."""

from __future__ import annotations

from typing import Any

from rlrun.samplers.async_.base import AsyncSamplerBase
from rlrun.samplers.async_.collectors import DbCpuResetCollector
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector
from rlrun.samplers.parallel.base import resolve_start_method
from rlrun.samplers.serial.collectors import SerialEvalCollector
from rlrun.samplers.serial.sampler import SerialSampler

__all__ = ["AsyncSerialSampler"]


class AsyncSerialSampler(AsyncSamplerBase):
    """A :class:`~rlrun.samplers.serial.sampler.SerialSampler` in a process of its own, beside the optimiser:
    it steps ``batch_B`` envs in turn there, with a private copy of the model (on
    ``affinity['sampler']['cuda_idx']`` when given) that it refreshes from the optimiser's published
    weights between batches.

    ``start_method`` ("fork", "spawn", "forkserver"; None: fork on Linux) is how the runner starts the
    sampler and copier processes. ``affinity`` (the run's ``affinity['sampler']``) may name
    ``master_cpus`` to pin this process; it runs one torch thread.
    """

    def __init__(
        self,
        *args: Any,
        CollectorCls: type[BaseCollector] = DbCpuResetCollector,
        eval_CollectorCls: type[BaseEvalCollector] = SerialEvalCollector,
        start_method: str | None = None,
        **kwargs: Any,
    ) -> None:
        engine = SerialSampler(*args, CollectorCls=CollectorCls, eval_CollectorCls=eval_CollectorCls, **kwargs)
        super().__init__(engine, resolve_start_method(start_method))
