"""The recurrent convolutional policy-and-value network for Atari (A2C/PPO with an LSTM)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from rlrun.models.lstm import RecurrentState, RnnState, lstm_over_sequence
from rlrun.models.pg.atari_ff_model import a3c_conv_head
from rlrun.models.utils import frames_to_float
from rlrun.utils.tensor import restore_leading_dims

__all__ = ["AtariLstmModel", "RnnState"]


class AtariLstmModel(torch.nn.Module):
    """Action probabilities ``pi``, values ``v`` and the next LSTM state from frames, previous actions and rewards.

    Frames ``[T, B, C, H, W]``, ``[B, C, H, W]`` or ``[C, H, W]`` (pixel values in [0, 255], scaled to
    [0, 1] here) go through :class:`AtariFfModel <rlrun.models.pg.atari_ff_model.AtariFfModel>`'s
    convolutional head (16/32 channels, kernels 8/4, strides 4/2, then ``fc_sizes`` units). An LSTM
    of ``lstm_size`` units reads those features with the one-hot previous action and the previous
    reward; linear heads give ``pi [..., output_size]`` and ``v [...]`` with the input's leading dims.
    ``init_rnn_state`` is ``RnnState(h, c)`` of ``[1, B, lstm_size]`` tensors, or None for zeros.
    """

    def __init__(
        self,
        image_shape: Sequence[int],
        output_size: int,
        fc_sizes: int | Sequence[int] = 512,
        lstm_size: int = 512,
        use_maxpool: bool = False,
        channels: Sequence[int] | None = None,
        kernel_sizes: Sequence[int] | None = None,
        strides: Sequence[int] | None = None,
        paddings: Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        self.conv = a3c_conv_head(image_shape, fc_sizes, use_maxpool, channels, kernel_sizes, strides, paddings)
        self.lstm = torch.nn.LSTM(self.conv.output_size + output_size + 1, lstm_size)
        self.pi = torch.nn.Linear(lstm_size, output_size)
        self.value = torch.nn.Linear(lstm_size, 1)

    def forward(
        self,
        image: torch.Tensor,
        prev_action: torch.Tensor,
        prev_reward: torch.Tensor,
        init_rnn_state: RecurrentState | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, RecurrentState]:
        lead_dim, T, B, x = frames_to_float(image)
        features = self.conv(x)
        out, next_rnn_state = lstm_over_sequence(self.lstm, features, prev_action, prev_reward, init_rnn_state, T, B)
        pi = F.softmax(self.pi(out), dim=-1)
        v = self.value(out).squeeze(-1)
        pi, v = restore_leading_dims((pi, v), lead_dim, T, B)
        return pi, v, next_rnn_state
