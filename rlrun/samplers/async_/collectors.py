"""Double-buffer collectors: the synchronous collectors, writing batch ``itr`` into half ``itr % 2``.

An asynchronous sampler hands its collectors ``samples_np`` as a pair of ``[T, B]`` buffers (a double
buffer); while a copier process reads one half, the collector fills the other. rlpyt chose the half
through a shared ``db_idx``; here it follows the iteration number every round already carries, so
no extra shared value travels to the workers.
"""

from __future__ import annotations

from typing import Any

from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.collectors import BaseCollector
from rlrun.samplers.parallel.cpu.collectors import CpuResetCollector, CpuWaitResetCollector
from rlrun.samplers.parallel.gpu.collectors import GpuResetCollector, GpuWaitResetCollector

__all__ = [
    "DoubleBufferCollectorMixin",
    "DbCpuResetCollector",
    "DbCpuWaitResetCollector",
    "DbGpuResetCollector",
    "DbGpuWaitResetCollector",
]


class DoubleBufferCollectorMixin(BaseCollector):
    """Put first among the bases of a collector: ``class Db(DoubleBufferCollectorMixin, SomeCollector)``.

    ``samples_np`` must be a pair of buffers with the same fields and shapes.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        double_buffer = self.samples_np
        if not (isinstance(double_buffer, tuple) and len(double_buffer) == 2 and not hasattr(double_buffer, "_fields")):
            raise TypeError(
                f"{type(self).__name__} writes into a double buffer: samples_np must be a pair of [T, B] buffers "
                f"(an asynchronous sampler builds it), got {type(double_buffer).__name__}. Use the collector "
                "without the Db prefix in a synchronous sampler."
            )
        self.double_buffer = double_buffer
        self.samples_np = double_buffer[0]  # start-up reads the buffer's observation dtype from it

    def collect_batch(
        self, agent_inputs: Any, traj_infos: list[TrajInfo], itr: int
    ) -> tuple[Any, list[TrajInfo], list[TrajInfo]]:
        self.samples_np = self.double_buffer[itr % 2]
        return super().collect_batch(agent_inputs, traj_infos, itr)


class DbCpuResetCollector(DoubleBufferCollectorMixin, CpuResetCollector):
    """:class:`~rlrun.samplers.parallel.cpu.collectors.CpuResetCollector` into a double buffer."""


class DbCpuWaitResetCollector(DoubleBufferCollectorMixin, CpuWaitResetCollector):
    """:class:`~rlrun.samplers.parallel.cpu.collectors.CpuWaitResetCollector` into a double buffer."""


class DbGpuResetCollector(DoubleBufferCollectorMixin, GpuResetCollector):
    """:class:`~rlrun.samplers.parallel.gpu.collectors.GpuResetCollector` into a double buffer."""


class DbGpuWaitResetCollector(DoubleBufferCollectorMixin, GpuWaitResetCollector):
    """:class:`~rlrun.samplers.parallel.gpu.collectors.GpuWaitResetCollector` into a double buffer."""
