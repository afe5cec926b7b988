"""The default recurrent Q network of R2D1 for vector observations."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from rlrun.models.dqn.dueling import DuelingHeadModel
from rlrun.models.lstm import RecurrentState, RnnState, lstm_over_sequence
from rlrun.models.mlp import MlpModel
from rlrun.utils.tensor import infer_leading_dims, restore_leading_dims

__all__ = ["R2d1MlpModel", "RnnState"]


class R2d1MlpModel(torch.nn.Module):
    """Q-values ``[..., action_size]`` and the next LSTM state from vector observations.

    :class:`R2d1Agent <rlrun.agents.dqn.r2d1_agent.R2d1Agent>` builds it when given no ``ModelCls``
    (rlpyt had R2D1 only for Atari). Observations ``[T, B, *observation_shape]`` (or ``[B, ...]``, or
    unbatched) go through a ReLU MLP (``hidden_sizes``; none if empty) into an LSTM of ``lstm_size``
    units that also reads the one-hot previous action and the previous reward; a head of
    ``head_size`` hidden units (dueling with ``dueling=True``) gives the Q-values. The state is
    ``RnnState(h, c)`` of ``[1, B, lstm_size]`` tensors, None for zeros.
    """

    def __init__(
        self,
        observation_shape: Sequence[int],
        action_size: int,
        hidden_sizes: Sequence[int] = (64,),
        lstm_size: int = 64,
        head_size: int = 64,
        dueling: bool = False,
    ) -> None:
        super().__init__()
        self._obs_ndim = len(observation_shape)
        input_size = int(np.prod(observation_shape))
        self.mlp = MlpModel(input_size, list(hidden_sizes)) if hidden_sizes else None
        feature_size = self.mlp.output_size if self.mlp is not None else input_size
        self.lstm = torch.nn.LSTM(feature_size + action_size + 1, lstm_size)
        if dueling:
            self.head: torch.nn.Module = DuelingHeadModel(lstm_size, head_size, action_size)
        else:
            self.head = MlpModel(lstm_size, head_size, output_size=action_size)

    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor,
        prev_reward: torch.Tensor,
        init_rnn_state: RecurrentState | None = None,
    ) -> tuple[torch.Tensor, RecurrentState]:
        lead_dim, T, B, _ = infer_leading_dims(observation, self._obs_ndim)
        x = observation.reshape(T * B, -1).to(torch.float32)
        features = self.mlp(x) if self.mlp is not None else x
        out, next_rnn_state = lstm_over_sequence(self.lstm, features, prev_action, prev_reward, init_rnn_state, T, B)
        q = restore_leading_dims(self.head(out), lead_dim, T, B)
        return q, next_rnn_state
