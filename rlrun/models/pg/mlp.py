"""The default policy-and-value network for vector observations and discrete actions."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from rlrun.models.mlp import MlpModel
from rlrun.models.utils import ignores_prev_action
from rlrun.utils.tensor import infer_leading_dims, restore_leading_dims

__all__ = ["CategoricalPgMlpModel"]


def _orthogonal_init(mlp: MlpModel, output_gain: float) -> None:
    """Orthogonal weights and zero biases; gain sqrt(2) for hidden layers, ``output_gain`` for the last.

    This is the initialisation of OpenAI baselines' PPO, which small-control tasks are tuned for.
    """
    linears = [m for m in mlp.modules() if isinstance(m, torch.nn.Linear)]
    for i, layer in enumerate(linears):
        gain = output_gain if i == len(linears) - 1 else math.sqrt(2)
        torch.nn.init.orthogonal_(layer.weight, gain)
        torch.nn.init.zeros_(layer.bias)


class CategoricalPgMlpModel(torch.nn.Module):
    """Action probabilities ``pi [..., action_size]`` and values ``v [...]`` from ``[..., *observation_shape]``.

    ``CategoricalPgAgent`` builds it when given no ``ModelCls``. Policy and value have separate tanh
    MLPs unless ``shared_trunk=True``, which puts both heads on one MLP. Layers are orthogonally
    initialised with a small gain (0.01) on the policy output, so the first policy is near uniform.
    """

    def __init__(
        self,
        observation_shape: Sequence[int],
        action_size: int,
        hidden_sizes: Sequence[int] = (64, 64),
        shared_trunk: bool = False,
        nonlinearity: type[torch.nn.Module] = torch.nn.Tanh,
    ) -> None:
        super().__init__()
        self._obs_ndim = len(observation_shape)
        input_size = int(np.prod(observation_shape))
        hidden_sizes = list(hidden_sizes)
        self.shared_trunk = shared_trunk
        self.trunk: MlpModel | None
        if shared_trunk:
            if not hidden_sizes:
                raise ValueError("CategoricalPgMlpModel(shared_trunk=True) needs at least one hidden size.")
            self.trunk = MlpModel(input_size, hidden_sizes, nonlinearity=nonlinearity)
            self.pi = MlpModel(self.trunk.output_size, None, output_size=action_size)
            self.v = MlpModel(self.trunk.output_size, None, output_size=1)
            _orthogonal_init(self.trunk, math.sqrt(2))
        else:
            self.trunk = None
            self.pi = MlpModel(input_size, hidden_sizes, output_size=action_size, nonlinearity=nonlinearity)
            self.v = MlpModel(input_size, hidden_sizes, output_size=1, nonlinearity=nonlinearity)
        _orthogonal_init(self.pi, 0.01)
        _orthogonal_init(self.v, 1.0)

    @ignores_prev_action
    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor | None = None,
        prev_reward: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        lead_dim, T, B, _ = infer_leading_dims(observation, self._obs_ndim)
        x = observation.reshape(T * B, -1).to(torch.float32)
        if self.trunk is not None:
            x = self.trunk(x)
        pi = F.softmax(self.pi(x), dim=-1)
        v = self.v(x).squeeze(-1)
        result: tuple[torch.Tensor, torch.Tensor] = restore_leading_dims((pi, v), lead_dim, T, B)
        return result
