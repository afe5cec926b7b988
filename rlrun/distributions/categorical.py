"""The categorical distribution over a discrete action set, parameterised by probabilities."""

from __future__ import annotations

import torch

from rlrun.distributions.base import Distribution
from rlrun.distributions.discrete import DiscreteMixin
from rlrun.utils.collections import namedarraytuple
from rlrun.utils.tensor import select_at_indexes

__all__ = ["Categorical", "DistInfo", "EPS"]

EPS = 1e-8  # keeps log(p) finite for actions of probability zero

DistInfo = namedarraytuple("DistInfo", ["prob"])


class Categorical(DiscreteMixin, Distribution):
    """Categorical distribution over ``dim`` actions; ``dist_info.prob`` is ``[..., dim]``, rows summing to 1.

    Logs are taken of ``prob + EPS``, so a probability of zero gives a large negative number, not -inf.
    """

    def kl(self, old_dist_info: DistInfo, new_dist_info: DistInfo) -> torch.Tensor:
        p, q = old_dist_info.prob, new_dist_info.prob
        return torch.sum(p * (torch.log(p + EPS) - torch.log(q + EPS)), dim=-1)

    def sample(self, dist_info: DistInfo) -> torch.Tensor:
        """Action indexes ``[...]`` (dtype ``self.dtype``) drawn from ``prob [..., dim]``."""
        p = dist_info.prob
        if p.shape[-1] != self.dim:
            raise ValueError(
                f"Categorical(dim={self.dim}) got probabilities with last dim {p.shape[-1]} "
                f"(shape {tuple(p.shape)}); the model's output size must equal the number of actions."
            )
        sample = torch.multinomial(p.reshape(-1, self.dim), num_samples=1)
        return sample.reshape(p.shape[:-1]).to(self.dtype)

    def entropy(self, dist_info: DistInfo) -> torch.Tensor:
        p = dist_info.prob
        return -torch.sum(p * torch.log(p + EPS), dim=-1)

    def log_likelihood(self, indexes: torch.Tensor, dist_info: DistInfo) -> torch.Tensor:
        return torch.log(select_at_indexes(indexes, dist_info.prob) + EPS)

    def likelihood_ratio(self, indexes: torch.Tensor, old_dist_info: DistInfo, new_dist_info: DistInfo) -> torch.Tensor:
        new = select_at_indexes(indexes, new_dist_info.prob)
        old = select_at_indexes(indexes, old_dist_info.prob)
        return (new + EPS) / (old + EPS)
