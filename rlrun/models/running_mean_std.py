"""Running mean and variance of observations, for observation normalisation."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.distributed as dist

from rlrun.utils.tensor import infer_leading_dims

__all__ = ["RunningMeanStdModel"]


class RunningMeanStdModel(torch.nn.Module):
    """Per-element mean and variance of every batch passed to :meth:`update`.

    ``mean``, ``var`` and ``count`` are buffers, so they are saved in the model's state dict, shared
    with sampler workers, and copied by ``sync_shared_memory``. Batches are combined with the
    parallel variance formula (Chan et al.); under ``torch.distributed`` each batch is pooled
    across ranks first, so every rank holds the same statistics.
    """

    mean: torch.Tensor  # buffers, saved in state_dict
    var: torch.Tensor
    count: torch.Tensor

    def __init__(self, shape: Sequence[int]) -> None:
        super().__init__()
        self.shape = tuple(shape)
        self.register_buffer("mean", torch.zeros(self.shape))
        self.register_buffer("var", torch.ones(self.shape))
        self.register_buffer("count", torch.zeros(()))

    def normalize(self, x: torch.Tensor, var_floor: float | None, clip: float) -> torch.Tensor:
        """``x`` standardised by the statistics (variance floored at ``var_floor``), clipped to ``[-clip, clip]``."""
        var = self.var if var_floor is None else self.var.clamp(min=var_floor)
        return ((x - self.mean) / var.sqrt()).clamp(-clip, clip)

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        """Fold a batch ``[T, B, *shape]``, ``[B, *shape]`` or ``[*shape]`` into the statistics."""
        _, T, B, _ = infer_leading_dims(x, len(self.shape))
        x = x.reshape(T * B, *self.shape).to(self.mean.dtype)
        if dist.is_available() and dist.is_initialized():
            # Pool sums rather than per-rank variances, which would miss the spread between rank means.
            sums = torch.stack([x.sum(dim=0), (x**2).sum(dim=0)])
            count = torch.tensor(float(T * B), device=x.device)
            dist.all_reduce(sums)
            dist.all_reduce(count)
            batch_count = int(count.item())
            batch_mean = sums[0] / batch_count
            batch_var = (sums[1] / batch_count - batch_mean**2).clamp(min=0)
        else:
            batch_count = T * B
            batch_mean = x.mean(dim=0)
            batch_var = x.var(dim=0, unbiased=False)
        # The first batch is taken as it is. Chosen by torch.where, not by asking ``count == 0``: on a GPU
        # the question would make the host wait for the device at every update.
        first = self.count == 0
        total = self.count + batch_count
        delta = batch_mean - self.mean
        m2 = self.var * self.count + batch_var * batch_count + delta**2 * self.count * batch_count / total
        self.mean.copy_(torch.where(first, batch_mean, self.mean + delta * batch_count / total))
        self.var.copy_(torch.where(first, batch_var, m2 / total))
        self.count += batch_count
