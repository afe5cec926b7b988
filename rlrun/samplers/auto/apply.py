"""From a chosen :class:`Layout` to the sampler class and the affinity that run it."""

from __future__ import annotations

import importlib

from rlrun.samplers.auto.cost_model import Kind, Layout
from rlrun.utils.collections import AttrDict
from rlrun.utils.launching.affinity import default_affinity

__all__ = ["SAMPLER_PATHS", "sampler_class", "layout_affinity"]

SAMPLER_PATHS: dict[Kind, str] = {
    "serial": "rlrun.samplers.serial.sampler:SerialSampler",
    "cpu": "rlrun.samplers.parallel.cpu.sampler:CpuSampler",
    "gpu": "rlrun.samplers.parallel.gpu.sampler:GpuSampler",
    "alternating": "rlrun.samplers.parallel.gpu.alternating_sampler:AlternatingSampler",
}


def sampler_class(kind: Kind) -> type:
    module, _, name = SAMPLER_PATHS[kind].partition(":")
    cls: type = getattr(importlib.import_module(module), name)
    return cls


def layout_affinity(layout: Layout, cuda_idx: int | None = None) -> AttrDict:
    """Unpinned workers as ``affinity=None`` places them, with the run's GPU (serial: torch threads only)."""
    if layout.kind == "serial":
        return AttrDict(cuda_idx=cuda_idx, master_torch_threads=1)
    affinity = default_affinity(layout.workers, alternating=layout.kind == "alternating")
    affinity["cuda_idx"] = cuda_idx
    return affinity
