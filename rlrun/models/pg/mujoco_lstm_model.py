"""The recurrent Gaussian policy-and-value network for continuous control (MuJoCo-style)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from rlrun.models.lstm import RecurrentState, RnnState, lstm_over_sequence
from rlrun.models.mlp import MlpModel
from rlrun.models.running_mean_std import RunningMeanStdModel
from rlrun.utils.tensor import infer_leading_dims, restore_leading_dims

__all__ = ["MujocoLstmModel", "RnnState"]


class MujocoLstmModel(torch.nn.Module):
    """Action means ``mu``, ``log_std``, values ``v`` and the next LSTM state from observations,
    previous actions and rewards.

    Observations ``[T, B, *observation_shape]`` (or ``[B, ...]``, or unbatched) go through an MLP
    (``hidden_sizes``, 256-256 by default, with ``nonlinearity`` after each layer); an LSTM of
    ``lstm_size`` units reads its output with the previous action and reward, and one linear head gives
    ``mu``, ``log_std`` (both ``[..., action_size]``, state-dependent) and ``v [...]``. With
    ``normalize_observation=True`` observations are standardised by running statistics, updated only
    by :meth:`update_obs_rms` (the algorithm calls it), with the variance floored at
    ``norm_obs_var_clip`` and the result clipped to ``[-norm_obs_clip, norm_obs_clip]``.
    ``init_rnn_state`` is ``RnnState(h, c)`` of ``[1, B, lstm_size]`` tensors, or None for zeros.
    """

    def __init__(
        self,
        observation_shape: Sequence[int],
        action_size: int,
        hidden_sizes: Sequence[int] | None = None,
        lstm_size: int = 256,
        nonlinearity: type[torch.nn.Module] = torch.nn.ReLU,
        normalize_observation: bool = False,
        norm_obs_clip: float = 10,
        norm_obs_var_clip: float = 1e-6,
    ) -> None:
        super().__init__()
        self._obs_ndim = len(observation_shape)
        self._action_size = action_size
        self.mlp = MlpModel(
            int(np.prod(observation_shape)), list(hidden_sizes or [256, 256]), nonlinearity=nonlinearity
        )
        self.lstm = torch.nn.LSTM(self.mlp.output_size + action_size + 1, lstm_size)
        self.head = torch.nn.Linear(lstm_size, 2 * action_size + 1)
        self.normalize_observation = normalize_observation
        self.norm_obs_clip = norm_obs_clip
        self.norm_obs_var_clip = norm_obs_var_clip
        self.obs_rms = RunningMeanStdModel(observation_shape) if normalize_observation else None

    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor,
        prev_reward: torch.Tensor,
        init_rnn_state: RecurrentState | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, RecurrentState]:
        lead_dim, T, B, _ = infer_leading_dims(observation, self._obs_ndim)
        observation = observation.to(torch.float32)
        if self.obs_rms is not None:
            observation = self.obs_rms.normalize(observation, self.norm_obs_var_clip, self.norm_obs_clip)
        features = self.mlp(observation.reshape(T * B, -1))
        out, next_rnn_state = lstm_over_sequence(self.lstm, features, prev_action, prev_reward, init_rnn_state, T, B)
        head = self.head(out)
        A = self._action_size
        mu, log_std, v = head[:, :A], head[:, A : 2 * A], head[:, -1]
        mu, log_std, v = restore_leading_dims((mu, log_std, v), lead_dim, T, B)
        return mu, log_std, v, next_rnn_state

    def update_obs_rms(self, observation: torch.Tensor) -> None:
        """Fold a batch of observations into the normalisation statistics (no-op without normalisation)."""
        if self.obs_rms is not None:
            self.obs_rms.update(observation)
