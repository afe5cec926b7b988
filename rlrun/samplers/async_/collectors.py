"""Double-buffer collectors: the synchronous collectors, writing batch ``itr`` into half ``itr % 2``.

An asynchronous sampler hands its collectors ``samples_np`` as a pair of ``[T, B]`` buffers (a double
buffer); while a copier process reads one half, the collector fills the other. rlpyt chose the half
through a shared ``db_idx``; here it follows the iteration number every round already carries, so
no extra shared value travels to the workers. The switch is the collector's ``double_buffered``
class attribute (:class:`~rlrun.samplers.collectors.BaseCollector`); each class here is a synchronous
collector with it set.
"""

from __future__ import annotations

from typing import ClassVar

from rlrun.samplers.collectors import ResetCollector, WaitResetCollector
from rlrun.samplers.parallel.gpu.collectors import GpuResetCollector, GpuWaitResetCollector

__all__ = [
    "DoubleBufferCollectorMixin",
    "DbCpuResetCollector",
    "DbCpuWaitResetCollector",
    "DbGpuResetCollector",
    "DbGpuWaitResetCollector",
]


class DoubleBufferCollectorMixin:
    """rlpyt's way to make a collector write into a double buffer: put it first among the bases,
    ``class MyDb(DoubleBufferCollectorMixin, MyCollector)``. It only sets ``double_buffered``; the
    collector's own ``__init__`` and ``collect_batch`` do the rest."""

    double_buffered: ClassVar[bool] = True


class DbCpuResetCollector(ResetCollector):
    """:class:`~rlrun.samplers.parallel.cpu.collectors.CpuResetCollector` into a double buffer."""

    double_buffered = True


class DbCpuWaitResetCollector(WaitResetCollector):
    """:class:`~rlrun.samplers.parallel.cpu.collectors.CpuWaitResetCollector` into a double buffer."""

    double_buffered = True


class DbGpuResetCollector(GpuResetCollector):
    """:class:`~rlrun.samplers.parallel.gpu.collectors.GpuResetCollector` into a double buffer."""

    double_buffered = True


class DbGpuWaitResetCollector(GpuWaitResetCollector):
    """:class:`~rlrun.samplers.parallel.gpu.collectors.GpuWaitResetCollector` into a double buffer."""

    double_buffered = True
