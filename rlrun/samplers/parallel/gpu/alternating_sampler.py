"""Served sampling with two groups of workers that take turns, so the master's forward pass overlaps env steps.

The envs are split in halves, each stepped by its own group of workers. While one group steps its
envs, the master computes the other group's actions::

    t:   master acts for group 0 | group 1 steps      then   master acts for group 1 | group 0 steps

Each group holds the agent's per-env state for its envs (random streams, and the RNN state of
recurrent agents): the master swaps it in before acting for that group (``agent.get_step_state`` /
``set_step_state``), so feedforward and recurrent agents alike work unchanged, and actions follow env
ranks as in every other sampler. Evaluation serves all eval envs together.

Affinity: ``make_affinity(..., alternating=True)`` gives twice the workers, two per core, one of
each group. :class:`NoOverlapAlternatingSampler` lets a group step only once the other group is back,
so two workers never compete for one core, while the master's forward pass still overlaps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rlrun.samplers.parallel.gpu.sampler import GpuSamplerBase, ServedGroup
from rlrun.samplers.parallel.worker import WorkerSettings

__all__ = ["AlternatingSamplerBase", "AlternatingSampler", "NoOverlapAlternatingSampler"]


class AlternatingSamplerBase(GpuSamplerBase):
    """Two groups of workers served in turn; needs an even ``batch_B`` and an even worker count."""

    alternating = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.batch_spec.B % 2:
            raise ValueError(
                f"{type(self).__name__} splits the envs into two halves: batch_B must be even, got {self.batch_spec.B}."
            )

    def _get_n_envs_list(self, affinity: dict | None = None, n_worker: int | None = None, B: int | None = None):
        """Half the envs over each half of the workers, pairwise alike (worker w and w + n/2 hold as many)."""
        B = self.batch_spec.B if B is None else B
        if n_worker is None:
            n_worker = len((affinity or {})["workers_cpus"])
        if n_worker % 2:
            raise ValueError(
                f"{type(self).__name__} needs an even number of workers (two groups), got {n_worker}. "
                "Use make_affinity(..., alternating=True), which gives two workers per core."
            )
        half = super()._get_n_envs_list(n_worker=n_worker // 2, B=B // 2)
        return half + half

    def _make_groups(self, settings: Sequence[WorkerSettings]) -> list[ServedGroup]:
        half_w, half_b = len(settings) // 2, self.batch_spec.B // 2
        return [
            ServedGroup(ranks=list(range(half_w)), rows=slice(0, half_b)),
            ServedGroup(ranks=list(range(half_w, len(settings))), rows=slice(half_b, 2 * half_b)),
        ]


class AlternatingSampler(AlternatingSamplerBase):
    """While the master acts for one half of the envs, the other half steps (see the module docstring)."""


class NoOverlapAlternatingSampler(AlternatingSamplerBase):
    """Like :class:`AlternatingSampler`, but a group steps only once the other group has finished its step:
    the master's forward pass overlaps env steps, two groups' env steps never overlap each other."""

    no_overlap = True
