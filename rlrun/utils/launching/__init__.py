"""Launching runs: which CPUs and GPUs each process uses (see :mod:`rlrun.utils.launching.affinity`)."""

from rlrun.utils.launching.affinity import (
    Machine,
    affinity_for_sampler,
    affinity_from_code,
    default_affinity,
    encode_affinity,
    make_affinity,
)

__all__ = [
    "Machine",
    "make_affinity",
    "default_affinity",
    "affinity_for_sampler",
    "encode_affinity",
    "affinity_from_code",
]
