"""Served sampling with two groups of workers that take turns, so the master's forward pass overlaps env steps.

The envs are split in halves, each stepped by its own group of workers. While one group steps its
envs, the master computes the other group's actions::

    t:   master acts for group 0 | group 1 steps      then   master acts for group 1 | group 0 steps

Each group holds the agent's per-env state for its envs (random streams, and the RNN state of
recurrent agents), so feedforward and recurrent agents alike work unchanged, and actions follow env
ranks as in every other sampler. Evaluation serves all eval envs together. The serving itself is the
:class:`~rlrun.samplers.parallel.gpu.serving.ActionServing` part, with two groups.

Affinity: ``make_affinity(..., alternating=True)`` gives twice the workers, two per core, one of
each group. :class:`NoOverlapAlternatingSampler` lets a group step only once the other group is back,
so two workers never compete for one core, while the master's forward pass still overlaps.
"""

from __future__ import annotations

from rlrun.samplers.parallel.gpu.sampler import GpuSamplerBase

__all__ = ["AlternatingSamplerBase", "AlternatingSampler", "NoOverlapAlternatingSampler"]


class AlternatingSampler(GpuSamplerBase):
    """While the master acts for one half of the envs, the other half steps (see the module docstring).
    Needs an even ``batch_B`` and an even worker count."""

    alternating = True


class NoOverlapAlternatingSampler(GpuSamplerBase):
    """Like :class:`AlternatingSampler`, but a group steps only once the other group has finished its step:
    the master's forward pass overlaps env steps, two groups' env steps never overlap each other."""

    alternating = True
    no_overlap = True


# rlpyt's common base of the two; here they are two assemblies of the same served sampler, and this name
# is kept for imports and for subclasses (an alternating served sampler with overlap).
AlternatingSamplerBase = AlternatingSampler
