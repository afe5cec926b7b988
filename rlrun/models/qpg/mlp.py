"""MLPs for vector observations and continuous actions: deterministic policies (DDPG, TD3), Gaussian
policies (SAC), and Q(s, a) and V(s) critics.

Every model takes ``(observation, prev_action, prev_reward)`` (and the action, for Q) with leading dims
``[T, B]``, ``[B]`` or none, and returns outputs with the same leading dims. Observations are flattened
and cast to float32; ``prev_action`` and ``prev_reward`` are accepted for the agent interface and unused.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from rlrun.models.mlp import MlpModel
from rlrun.utils.tensor import infer_leading_dims, restore_leading_dims

__all__ = ["MuMlpModel", "PiMlpModel", "QofMuMlpModel", "VMlpModel"]


def _flat_observation(observation: torch.Tensor, obs_ndim: int) -> tuple[int, int, int, torch.Tensor]:
    """``(lead_dim, T, B, x)`` with ``x`` the observations as one float ``[T * B, features]`` tensor."""
    lead_dim, T, B, _ = infer_leading_dims(observation, obs_ndim)
    return lead_dim, T, B, observation.reshape(T * B, -1).to(torch.float32)


class MuMlpModel(torch.nn.Module):
    """A deterministic policy: ``mu = output_max * tanh(mlp(s))``, shape ``[..., action_size]``.

    The tanh keeps actions inside ``[-output_max, output_max]``; rlrun's agents act in ``[-1, 1]``
    (see ``docs/qpg.md``, action rescaling), so leave ``output_max=1``.
    """

    def __init__(
        self,
        observation_shape: Sequence[int],
        hidden_sizes: int | Sequence[int] | None,
        action_size: int,
        output_max: float = 1,
    ) -> None:
        super().__init__()
        self._output_max = output_max
        self._obs_ndim = len(observation_shape)
        self.mlp = MlpModel(int(np.prod(observation_shape)), hidden_sizes, output_size=action_size)

    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor | None = None,
        prev_reward: torch.Tensor | None = None,
    ) -> torch.Tensor:
        lead_dim, T, B, x = _flat_observation(observation, self._obs_ndim)
        mu = self._output_max * torch.tanh(self.mlp(x))
        result: torch.Tensor = restore_leading_dims(mu, lead_dim, T, B)
        return result


class PiMlpModel(torch.nn.Module):
    """A Gaussian policy's parameters: ``(mean, log_std)``, each ``[..., action_size]``, from one MLP.

    Both are pre-squash: the agent's distribution bounds ``log_std`` and squashes samples with tanh.
    """

    def __init__(
        self,
        observation_shape: Sequence[int],
        hidden_sizes: int | Sequence[int] | None,
        action_size: int,
    ) -> None:
        super().__init__()
        self._obs_ndim = len(observation_shape)
        self._action_size = action_size
        self.mlp = MlpModel(int(np.prod(observation_shape)), hidden_sizes, output_size=2 * action_size)

    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor | None = None,
        prev_reward: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        lead_dim, T, B, x = _flat_observation(observation, self._obs_ndim)
        mean, log_std = self.mlp(x).split(self._action_size, dim=-1)
        result: tuple[torch.Tensor, torch.Tensor] = restore_leading_dims((mean, log_std), lead_dim, T, B)
        return result


class QofMuMlpModel(torch.nn.Module):
    """A critic ``Q(s, a)``: an MLP on the observation concatenated with the action; output ``[...]``."""

    def __init__(
        self,
        observation_shape: Sequence[int],
        hidden_sizes: int | Sequence[int] | None,
        action_size: int,
    ) -> None:
        super().__init__()
        self._obs_ndim = len(observation_shape)
        self.mlp = MlpModel(int(np.prod(observation_shape)) + action_size, hidden_sizes, output_size=1)

    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor | None,
        prev_reward: torch.Tensor | None,
        action: torch.Tensor,
    ) -> torch.Tensor:
        lead_dim, T, B, x = _flat_observation(observation, self._obs_ndim)
        q = self.mlp(torch.cat([x, action.reshape(T * B, -1).to(x.dtype)], dim=-1)).squeeze(-1)
        result: torch.Tensor = restore_leading_dims(q, lead_dim, T, B)
        return result


class VMlpModel(torch.nn.Module):
    """A state-value critic ``V(s)``, output ``[...]``. ``action_size`` is accepted (agents pass it to
    every model) and unused."""

    def __init__(
        self,
        observation_shape: Sequence[int],
        hidden_sizes: int | Sequence[int] | None,
        action_size: int | None = None,
    ) -> None:
        super().__init__()
        self._obs_ndim = len(observation_shape)
        self.mlp = MlpModel(int(np.prod(observation_shape)), hidden_sizes, output_size=1)

    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor | None = None,
        prev_reward: torch.Tensor | None = None,
    ) -> torch.Tensor:
        lead_dim, T, B, x = _flat_observation(observation, self._obs_ndim)
        v = self.mlp(x).squeeze(-1)
        result: torch.Tensor = restore_leading_dims(v, lead_dim, T, B)
        return result
