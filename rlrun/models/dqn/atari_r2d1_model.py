"""The recurrent Q network of R2D1 for stacked Atari frames."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from rlrun.models.dqn.atari_dqn_model import nature_dqn_conv_head
from rlrun.models.dqn.dueling import DuelingHeadModel
from rlrun.models.lstm import RecurrentState, RnnState, lstm_over_sequence
from rlrun.models.mlp import MlpModel
from rlrun.models.utils import frames_to_float
from rlrun.utils.tensor import restore_leading_dims

__all__ = ["AtariR2d1Model", "RnnState"]


class AtariR2d1Model(torch.nn.Module):
    """Q-values ``[..., output_size]`` and the next LSTM state from frames, previous actions and rewards.

    Frames ``[T, B, C, H, W]`` (or ``[B, ...]``, or unbatched; pixel values in [0, 255], scaled to [0, 1]
    here) go through the Nature DQN convolutions (32/64/64 channels, kernels 8/4/3, strides 4/2/1,
    paddings 0/1/1) and ``fc_size`` ReLU units; an LSTM of ``lstm_size`` units reads them with the one-hot
    previous action and the previous reward; a head of ``head_size`` hidden units (dueling with
    ``dueling=True``) gives the Q-values. ``init_rnn_state`` is ``RnnState(h, c)`` of ``[1, B,
    lstm_size]`` tensors, or None for zeros; the state returned keeps the ``B`` dim.
    """

    def __init__(
        self,
        image_shape: Sequence[int],
        output_size: int,
        fc_size: int = 512,
        lstm_size: int = 512,
        head_size: int = 512,
        dueling: bool = False,
        use_maxpool: bool = False,
        channels: Sequence[int] | None = None,
        kernel_sizes: Sequence[int] | None = None,
        strides: Sequence[int] | None = None,
        paddings: Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        self.dueling = dueling
        self.conv = nature_dqn_conv_head(image_shape, fc_size, use_maxpool, channels, kernel_sizes, strides, paddings)
        self.lstm = torch.nn.LSTM(self.conv.output_size + output_size + 1, lstm_size)
        if dueling:
            self.head: torch.nn.Module = DuelingHeadModel(lstm_size, head_size, output_size)
        else:
            self.head = MlpModel(lstm_size, head_size, output_size=output_size)

    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor,
        prev_reward: torch.Tensor,
        init_rnn_state: RecurrentState | None = None,
    ) -> tuple[torch.Tensor, RecurrentState]:
        lead_dim, T, B, image = frames_to_float(observation)
        features = self.conv(image)
        out, next_rnn_state = lstm_over_sequence(self.lstm, features, prev_action, prev_reward, init_rnn_state, T, B)
        q = restore_leading_dims(self.head(out), lead_dim, T, B)
        return q, next_rnn_state
