"""The default categorical Q network (C51) for vector observations and discrete actions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from rlrun.models.dqn.atari_catdqn_model import DistributionalHeadModel, check_n_atoms
from rlrun.models.dqn.dueling import DistributionalDuelingHeadModel
from rlrun.models.mlp import MlpModel
from rlrun.models.utils import ignores_prev_action
from rlrun.utils.tensor import infer_leading_dims, restore_leading_dims

__all__ = ["CatDqnMlpModel"]


class CatDqnMlpModel(torch.nn.Module):
    """Q distributions ``[..., action_size, n_atoms]`` (probabilities) from observations through a ReLU MLP.

    The categorical counterpart of :class:`~rlrun.models.dqn.mlp.DqnMlpModel` (rlpyt had no vector-
    observation model for Categorical DQN): ``CatDqnAgent`` builds it when given no ``ModelCls``.
    Observations are flattened and cast to float; a softmax over the atoms gives each action's
    distribution. With ``dueling=True`` the last hidden size is the width of each dueling stream.
    """

    def __init__(
        self,
        observation_shape: Sequence[int],
        action_size: int,
        n_atoms: int = 51,
        hidden_sizes: Sequence[int] = (64, 64),
        dueling: bool = False,
    ) -> None:
        super().__init__()
        check_n_atoms(n_atoms)
        self._obs_ndim = len(observation_shape)
        self.n_atoms = n_atoms
        input_size = int(np.prod(observation_shape))
        hidden_sizes = list(hidden_sizes)
        if not hidden_sizes:
            raise ValueError("CatDqnMlpModel needs at least one hidden size.")
        trunk_sizes, head_size = hidden_sizes[:-1], hidden_sizes[-1]
        self.trunk: torch.nn.Module = MlpModel(input_size, trunk_sizes) if trunk_sizes else torch.nn.Identity()
        trunk_out = trunk_sizes[-1] if trunk_sizes else input_size
        if dueling:
            self.head: torch.nn.Module = DistributionalDuelingHeadModel(trunk_out, head_size, action_size, n_atoms)
        else:
            self.head = DistributionalHeadModel(trunk_out, head_size, action_size, n_atoms)

    @ignores_prev_action
    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor | None = None,
        prev_reward: torch.Tensor | None = None,
    ) -> torch.Tensor:
        lead_dim, T, B, _ = infer_leading_dims(observation, self._obs_ndim)
        x = observation.reshape(T * B, -1).to(torch.float32)
        logits = self.head(self.trunk(x))
        result: torch.Tensor = restore_leading_dims(torch.softmax(logits, dim=-1), lead_dim, T, B)
        return result
