"""The distribution interface agents and algorithms use.

A distribution object holds no parameters of its own: the model's outputs arrive as a
``dist_info`` namedarraytuple with leading dims ``[T, B]`` or ``[B]``, and every method keeps those
leading dims (reducing only the action dims). ``valid`` masks in the ``mean_*`` methods mark the
entries to average over (e.g. steps before an episode's end in recurrent training).
"""

from __future__ import annotations

from typing import Any

import torch

from rlrun.utils.tensor import valid_mean

__all__ = ["Distribution"]


class Distribution:
    """Base class; subclasses implement what their algorithms need (not every method applies to all)."""

    @property
    def dim(self) -> int:
        """Number of actions (discrete) or action dims (continuous)."""
        raise NotImplementedError

    def sample(self, dist_info: Any) -> torch.Tensor:
        """One random action per leading position."""
        raise NotImplementedError

    def kl(self, old_dist_info: Any, new_dist_info: Any) -> torch.Tensor:
        """KL(old || new) at each leading position."""
        raise NotImplementedError

    def mean_kl(self, old_dist_info: Any, new_dist_info: Any, valid: torch.Tensor | None = None) -> torch.Tensor:
        return valid_mean(self.kl(old_dist_info, new_dist_info), valid)

    def log_likelihood(self, x: torch.Tensor, dist_info: Any) -> torch.Tensor:
        """Log-probability (or density) of actions ``x`` under ``dist_info``."""
        raise NotImplementedError

    def likelihood_ratio(self, x: torch.Tensor, old_dist_info: Any, new_dist_info: Any) -> torch.Tensor:
        """``p_new(x) / p_old(x)``; gradients flow through ``new_dist_info``."""
        raise NotImplementedError

    def entropy(self, dist_info: Any) -> torch.Tensor:
        raise NotImplementedError

    def perplexity(self, dist_info: Any) -> torch.Tensor:
        """``exp(entropy)``: the effective number of equally likely actions, for logging."""
        return torch.exp(self.entropy(dist_info))

    def mean_entropy(self, dist_info: Any, valid: torch.Tensor | None = None) -> torch.Tensor:
        return valid_mean(self.entropy(dist_info), valid)

    def mean_perplexity(self, dist_info: Any, valid: torch.Tensor | None = None) -> torch.Tensor:
        return valid_mean(self.perplexity(dist_info), valid)
