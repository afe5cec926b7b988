"""The distribution interface agents and algorithms use.

A distribution object holds no parameters of its own: the model's outputs arrive as a
``dist_info`` namedarraytuple with leading dims ``[T, B]`` or ``[B]``, and every method keeps those
leading dims (reducing only the action dims). ``valid`` masks in the ``mean_*`` methods mark the
entries to average over (e.g. steps before an episode's end in recurrent training).

``sample`` draws from torch's global RNG, or, given ``uniform`` (``[..., n_uniforms]`` numbers in
``[0, 1)``), is a deterministic function of them: agents pass per-env uniforms there so that
each env's actions follow its own random stream (see ``BaseAgent.seed_env_streams``).
"""

from __future__ import annotations

from typing import Generic, TypeVar

import torch

from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.tensor import valid_mean

__all__ = ["Distribution"]

# What sample() draws from: a dist_info namedarraytuple, or, for epsilon-greedy, the Q-values themselves.
SampleInput = TypeVar("SampleInput")


class Distribution(Generic[SampleInput]):
    """Base class; subclasses implement what their algorithms need (not every method applies to all)."""

    @property
    def dim(self) -> int | None:
        """Number of actions (discrete) or action dims (continuous); None while not yet known."""
        raise NotImplementedError

    @property
    def n_uniforms(self) -> int:
        """How many uniforms :meth:`sample` consumes per leading position when given ``uniform``."""
        raise NotImplementedError

    def sample(self, dist_info: SampleInput, *, uniform: torch.Tensor | None = None) -> torch.Tensor:
        """One random action per leading position (from ``uniform [..., n_uniforms]`` when given)."""
        raise NotImplementedError

    def check_uniform(self, uniform: torch.Tensor, leading_shape: torch.Size, device: torch.device) -> torch.Tensor:
        """``uniform`` on ``device``, after checking it is ``leading_shape + (n_uniforms,)``."""
        expected = (*leading_shape, self.n_uniforms)
        if tuple(uniform.shape) != expected:
            raise ValueError(
                f"{type(self).__name__}.sample got uniforms of shape {tuple(uniform.shape)} for a batch of "
                f"leading shape {tuple(leading_shape)}; it needs {expected} ({self.n_uniforms} per sample). "
                "Draw one row per env with EnvStreams.uniform(dist.n_uniforms)."
            )
        return uniform if uniform.device == device else uniform.to(device)

    def kl(self, old_dist_info: NamedArrayTuple, new_dist_info: NamedArrayTuple) -> torch.Tensor:
        """KL(old || new) at each leading position."""
        raise NotImplementedError

    def mean_kl(
        self, old_dist_info: NamedArrayTuple, new_dist_info: NamedArrayTuple, valid: torch.Tensor | None = None
    ) -> torch.Tensor:
        return valid_mean(self.kl(old_dist_info, new_dist_info), valid)

    def log_likelihood(self, x: torch.Tensor, dist_info: NamedArrayTuple) -> torch.Tensor:
        """Log-probability (or density) of actions ``x`` under ``dist_info``."""
        raise NotImplementedError

    def likelihood_ratio(
        self, x: torch.Tensor, old_dist_info: NamedArrayTuple, new_dist_info: NamedArrayTuple
    ) -> torch.Tensor:
        """``p_new(x) / p_old(x)``; gradients flow through ``new_dist_info``."""
        raise NotImplementedError

    def entropy(self, dist_info: NamedArrayTuple) -> torch.Tensor:
        raise NotImplementedError

    def perplexity(self, dist_info: NamedArrayTuple) -> torch.Tensor:
        """``exp(entropy)``: the effective number of equally likely actions, for logging."""
        return torch.exp(self.entropy(dist_info))

    def mean_entropy(self, dist_info: NamedArrayTuple, valid: torch.Tensor | None = None) -> torch.Tensor:
        return valid_mean(self.entropy(dist_info), valid)

    def mean_perplexity(self, dist_info: NamedArrayTuple, valid: torch.Tensor | None = None) -> torch.Tensor:
        return valid_mean(self.perplexity(dist_info), valid)
