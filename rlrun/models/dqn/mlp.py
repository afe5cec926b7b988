"""The default Q network for vector observations and discrete actions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from rlrun.models.dqn.dueling import DuelingHeadModel
from rlrun.models.mlp import MlpModel
from rlrun.models.utils import ignores_prev_action
from rlrun.utils.tensor import infer_leading_dims, restore_leading_dims

__all__ = ["DqnMlpModel"]


class DqnMlpModel(torch.nn.Module):
    """Q-values ``[..., action_size]`` from observations ``[..., *observation_shape]`` through a ReLU MLP.

    ``DqnAgent`` builds it when given no ``ModelCls``. Observations are flattened and cast to float.
    With ``dueling=True`` the last hidden size is the width of each dueling stream.
    """

    def __init__(
        self,
        observation_shape: Sequence[int],
        action_size: int,
        hidden_sizes: Sequence[int] = (64, 64),
        dueling: bool = False,
    ) -> None:
        super().__init__()
        self._obs_ndim = len(observation_shape)
        input_size = int(np.prod(observation_shape))
        hidden_sizes = list(hidden_sizes)
        if dueling:
            if not hidden_sizes:
                raise ValueError("DqnMlpModel(dueling=True) needs at least one hidden size.")
            trunk_sizes, stream_size = hidden_sizes[:-1], hidden_sizes[-1]
            self.trunk: torch.nn.Module = MlpModel(input_size, trunk_sizes) if trunk_sizes else torch.nn.Identity()
            trunk_out = trunk_sizes[-1] if trunk_sizes else input_size
            self.head: torch.nn.Module = DuelingHeadModel(trunk_out, stream_size, action_size)
        else:
            self.trunk = torch.nn.Identity()
            self.head = MlpModel(input_size, hidden_sizes, output_size=action_size)

    @ignores_prev_action
    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor | None = None,
        prev_reward: torch.Tensor | None = None,
    ) -> torch.Tensor:
        lead_dim, T, B, _ = infer_leading_dims(observation, self._obs_ndim)
        x = observation.reshape(T * B, -1).to(torch.float32)
        q = self.head(self.trunk(x))
        result: torch.Tensor = restore_leading_dims(q, lead_dim, T, B)
        return result
