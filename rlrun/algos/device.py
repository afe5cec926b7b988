"""Training batches on the agent's device.

A replay hands out CPU tensors. The replay-based algorithms move each batch to the agent's device once,
where they draw it, so that the agent's outputs (which stay on its device) meet the batch's returns,
``done_n``, time-limit ``steps_n``, importance weights and masks there, and a gradient step never waits
for a copy to or from the host (``tests/algos/test_host_transfers.py`` counts the reads,
``benchmarks/gpu_device_hygiene.py`` runs the algorithms on a GPU).
"""

from __future__ import annotations

from typing import TypeVar

import torch

from rlrun.utils.buffer import buffer_to

__all__ = ["batch_to_device"]

BatchT = TypeVar("BatchT")


def batch_to_device(batch: BatchT, device: torch.device) -> BatchT:
    """``batch`` (a nested tuple of CPU tensors) on ``device``; the same object on the CPU.

    The copies are queued behind the device's pending work (``non_blocking``) instead of waiting for it:
    a blocking copy would make the host wait for the previous gradient step to finish."""
    if device.type == "cpu":
        return batch
    return buffer_to(batch, device, non_blocking=True)
