"""The asynchronous alternating sampler: two groups of workers step their envs while the sampler process
computes the other group's actions."""

from __future__ import annotations

from rlrun.samplers.async_.gpu_sampler import AsyncServedSamplerMixin
from rlrun.samplers.parallel.gpu.alternating_sampler import AlternatingSampler

__all__ = ["AsyncAlternatingSampler", "AsyncNoOverlapAlternatingSampler"]


class AsyncAlternatingSampler(AsyncServedSamplerMixin, AlternatingSampler):  # type: ignore[misc]  # rlpyt\'s async signatures
    """:class:`~rlrun.samplers.parallel.gpu.alternating_sampler.AlternatingSampler` in a process of its own,
    with a private model refreshed from the optimiser's published weights between batches."""


class AsyncNoOverlapAlternatingSampler(AsyncAlternatingSampler):
    """:class:`AsyncAlternatingSampler` whose groups never step envs at the same time (as
    :class:`~rlrun.samplers.parallel.gpu.alternating_sampler.NoOverlapAlternatingSampler`)."""

    no_overlap = True
