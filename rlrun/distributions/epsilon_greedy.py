"""Epsilon-greedy action selection from Q-values (a degenerate distribution used by DQN agents)."""

from __future__ import annotations

from typing import Any

import torch

from rlrun.distributions.base import Distribution
from rlrun.distributions.discrete import DiscreteMixin

__all__ = ["EpsilonGreedy", "CategoricalEpsilonGreedy"]


class EpsilonGreedy(DiscreteMixin, Distribution[torch.Tensor]):
    """With probability epsilon a uniformly random action, else the argmax of ``q [..., dim]``.

    Epsilon is a float, or a vector with one value per env (length B) which applies along the B dim
    of ``q [B, dim]`` or ``[T, B, dim]``, so each env of a sampler explores at its own rate. ``epsilon``
    comes first, as in rlpyt; without ``dim`` the number of actions is taken from ``q``.
    """

    def __init__(self, epsilon: float | torch.Tensor = 1, dim: int | None = None, **kwargs: Any) -> None:
        super().__init__(dim=dim, **kwargs)
        self._epsilon: float | torch.Tensor = 1.0
        self.set_epsilon(epsilon)

    @property
    def n_uniforms(self) -> int:
        return 2

    def sample(self, q: torch.Tensor, *, uniform: torch.Tensor | None = None) -> torch.Tensor:
        """Action indexes ``[...]`` (dtype ``self.dtype``) for ``q [..., dim]``.

        Given ``uniform [..., 2]``, position ``i`` explores when ``uniform[i, 0] < epsilon`` and then
        takes action ``floor(uniform[i, 1] * dim)``; without it, torch's global RNG decides.
        """
        dim = q.shape[-1] if self.dim is None else self.dim
        if q.shape[-1] != dim:
            raise ValueError(
                f"EpsilonGreedy(dim={self.dim}) got Q-values with last dim {q.shape[-1]} (shape {tuple(q.shape)}); "
                "the model's output size must equal the number of actions."
            )
        action = torch.argmax(q, dim=-1)
        if uniform is not None:
            uniform = self.check_uniform(uniform, action.shape, q.device)
        epsilon = self._epsilon
        if isinstance(epsilon, torch.Tensor):
            if action.dim() == 0 or action.shape[-1] != epsilon.numel():
                raise ValueError(
                    f"EpsilonGreedy has one epsilon per env ({epsilon.numel()} values) but got Q-values of "
                    f"shape {tuple(q.shape)}, whose B dim (second to last) differs. Give one Q row per env, "
                    "or a scalar epsilon."
                )
            epsilon = epsilon.to(q.device)
        elif epsilon <= 0:
            return action.to(self.dtype)
        if uniform is None:
            explore = torch.rand(action.shape, device=q.device) < epsilon
            random_action = torch.randint_like(action, high=dim)
        else:
            explore = uniform[..., 0] < epsilon
            random_action = (uniform[..., 1] * dim).to(action.dtype)  # < dim, as uniform < 1
        return torch.where(explore, random_action, action).to(self.dtype)

    @property
    def epsilon(self) -> float | torch.Tensor:
        return self._epsilon

    def set_epsilon(self, epsilon: float | torch.Tensor) -> None:
        """A probability of a random action: one float, or a vector with one value per env."""
        values = torch.as_tensor(epsilon, dtype=torch.float32).detach().cpu().reshape(-1)
        if values.numel() == 0 or torch.any((values < 0) | (values > 1)):
            raise ValueError(f"epsilon must lie in [0, 1], got {epsilon}.")
        self._epsilon = float(values[0]) if values.numel() == 1 else values


class CategoricalEpsilonGreedy(EpsilonGreedy):
    """Epsilon-greedy over distributional Q: ``p [..., dim, n_atoms]`` with atom values ``z [n_atoms]``."""

    def __init__(self, z: torch.Tensor | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.z = z

    def sample(
        self, p: torch.Tensor, z: torch.Tensor | None = None, *, uniform: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Epsilon-greedy over the expected values ``p @ z`` (``z`` defaults to :meth:`set_z`'s atoms). As in rlpyt,
        ``z`` is the second positional argument; ``uniform`` is keyword-only here and in every distribution, so
        that a caller holding any :class:`EpsilonGreedy` cannot pass uniforms where this one takes atoms."""
        z = self.z if z is None else z
        if z is None:
            raise ValueError("CategoricalEpsilonGreedy needs atom values z: call set_z(z) or pass z to sample().")
        return super().sample(torch.tensordot(p, z.to(p.device, p.dtype), dims=1), uniform=uniform)

    def set_z(self, z: torch.Tensor) -> None:
        """The value of each atom of the Q distribution, ``[n_atoms]``."""
        self.z = z
