"""The feedforward Gaussian policy-and-value network for continuous control (MuJoCo-style)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from rlrun.models.mlp import MlpModel
from rlrun.models.running_mean_std import RunningMeanStdModel
from rlrun.utils.tensor import infer_leading_dims, restore_leading_dims

__all__ = ["MujocoFfModel"]


class MujocoFfModel(torch.nn.Module):
    """Action means ``mu [..., action_size]``, ``log_std [..., action_size]`` and values ``v [...]``.

    The mean and the value come from separate MLPs (64-64 tanh by default); ``log_std`` is one learned
    parameter per action dim, the same for every state. With ``normalize_observation=True``,
    observations are standardised by running statistics (updated only by :meth:`update_obs_rms`,
    which the algorithm calls), with the variance floored at ``norm_obs_var_clip`` and the result
    clipped to ``[-norm_obs_clip, norm_obs_clip]``.
    """

    def __init__(
        self,
        observation_shape: Sequence[int],
        action_size: int,
        hidden_sizes: Sequence[int] | None = None,
        hidden_nonlinearity: type[torch.nn.Module] = torch.nn.Tanh,
        mu_nonlinearity: type[torch.nn.Module] | None = torch.nn.Tanh,
        init_log_std: float = 0.0,
        normalize_observation: bool = False,
        norm_obs_clip: float = 10,
        norm_obs_var_clip: float = 1e-6,
    ) -> None:
        super().__init__()
        self._obs_ndim = len(observation_shape)
        input_size = int(np.prod(observation_shape))
        hidden_sizes = list(hidden_sizes or [64, 64])
        mu_mlp = MlpModel(input_size, hidden_sizes, output_size=action_size, nonlinearity=hidden_nonlinearity)
        self.mu = mu_mlp if mu_nonlinearity is None else torch.nn.Sequential(mu_mlp, mu_nonlinearity())
        self.v = MlpModel(input_size, hidden_sizes, output_size=1, nonlinearity=hidden_nonlinearity)
        self.log_std = torch.nn.Parameter(torch.full((action_size,), float(init_log_std)))
        self.normalize_observation = normalize_observation
        self.norm_obs_clip = norm_obs_clip
        self.norm_obs_var_clip = norm_obs_var_clip
        self.obs_rms = RunningMeanStdModel(observation_shape) if normalize_observation else None

    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor | None = None,
        prev_reward: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        lead_dim, T, B, _ = infer_leading_dims(observation, self._obs_ndim)
        observation = observation.to(torch.float32)
        if self.obs_rms is not None:
            observation = self.obs_rms.normalize(observation, self.norm_obs_var_clip, self.norm_obs_clip)
        x = observation.reshape(T * B, -1)
        mu = self.mu(x)
        v = self.v(x).squeeze(-1)
        log_std = self.log_std.repeat(T * B, 1)  # a copy: an expanded view would keep requires_grad under no_grad
        result: tuple[torch.Tensor, torch.Tensor, torch.Tensor] = restore_leading_dims((mu, log_std, v), lead_dim, T, B)
        return result

    def update_obs_rms(self, observation: torch.Tensor) -> None:
        """Fold a batch of observations into the normalisation statistics (no-op without normalisation)."""
        if self.obs_rms is not None:
            self.obs_rms.update(observation)
