"""What the asynchronous samplers with workers share: a parallel sampler as their engine, its workers
started below the sampler process on the double buffer built in the training process."""

from __future__ import annotations

from rlrun.samplers.async_.base import AsyncSamplerBase
from rlrun.samplers.parallel.base import ParallelSamplerBase

__all__ = ["AsyncParallelSamplerBase", "AsyncParallelSamplerMixin"]


class AsyncParallelSamplerBase(AsyncSamplerBase):
    """An asynchronous sampler whose engine is a :class:`~rlrun.samplers.parallel.base.ParallelSamplerBase`:
    worker ``r`` gets its columns of both halves of the double buffer, round ``itr`` fills half ``itr % 2``,
    and the workers start as the engine's ``start_method`` says, like the sampler process itself."""

    def __init__(self, sampler: ParallelSamplerBase) -> None:
        super().__init__(sampler, sampler.start_method)
        self.engine = sampler  # the same object as ``sampler``, typed as the parallel sampler it is

    @property
    def worker_restart_count(self) -> int | None:
        return self.engine.worker_restart_count


# rlpyt's name (a mixin there), kept for imports and isinstance checks.
AsyncParallelSamplerMixin = AsyncParallelSamplerBase
