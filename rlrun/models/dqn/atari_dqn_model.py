"""The Nature-DQN convolutional Q network for stacked Atari frames."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from rlrun.models.conv2d import Conv2dHeadModel, Conv2dModel
from rlrun.models.dqn.dueling import DuelingHeadModel
from rlrun.models.mlp import MlpModel
from rlrun.models.utils import frames_to_float, ignores_prev_action
from rlrun.utils.tensor import restore_leading_dims

__all__ = ["AtariDqnModel", "nature_dqn_conv", "nature_dqn_conv_head"]


def nature_dqn_conv(
    in_channels: int,
    use_maxpool: bool = False,
    channels: Sequence[int] | None = None,
    kernel_sizes: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
    paddings: Sequence[int] | None = None,
) -> Conv2dModel:
    """The Nature DQN convolutions (32/64/64 channels, kernels 8/4/3, strides 4/2/1, paddings 0/1/1),
    each setting replaceable; shared by the Q and the categorical-Q networks."""
    return Conv2dModel(
        in_channels=in_channels,
        channels=channels or [32, 64, 64],
        kernel_sizes=kernel_sizes or [8, 4, 3],
        strides=strides or [4, 2, 1],
        paddings=paddings or [0, 1, 1],
        use_maxpool=use_maxpool,
    )


def nature_dqn_conv_head(
    image_shape: Sequence[int],
    fc_sizes: int | Sequence[int],
    use_maxpool: bool = False,
    channels: Sequence[int] | None = None,
    kernel_sizes: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
    paddings: Sequence[int] | None = None,
) -> Conv2dHeadModel:
    """:func:`nature_dqn_conv`'s convolutions followed by ``fc_sizes`` ReLU units (R2D1's trunk)."""
    return Conv2dHeadModel(
        image_shape=image_shape,
        channels=channels or [32, 64, 64],
        kernel_sizes=kernel_sizes or [8, 4, 3],
        strides=strides or [4, 2, 1],
        paddings=paddings or [0, 1, 1],
        use_maxpool=use_maxpool,
        hidden_sizes=fc_sizes,
    )


class AtariDqnModel(torch.nn.Module):
    """Q-values ``[..., output_size]`` from frames ``[..., C, H, W]`` (up to two leading dims).

    Frames are pixel values in [0, 255] (uint8, to keep buffers small) and are scaled to [0, 1]
    here. Defaults are the Nature DQN layers (32/64/64 channels, kernels 8/4/3, strides 4/2/1),
    with paddings 0/1/1; ``dueling=True`` uses a :class:`DuelingHeadModel`.
    """

    def __init__(
        self,
        image_shape: Sequence[int],
        output_size: int,
        fc_sizes: int | Sequence[int] = 512,
        dueling: bool = False,
        use_maxpool: bool = False,
        channels: Sequence[int] | None = None,
        kernel_sizes: Sequence[int] | None = None,
        strides: Sequence[int] | None = None,
        paddings: Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        c, h, w = image_shape
        self.dueling = dueling
        self.conv = nature_dqn_conv(c, use_maxpool, channels, kernel_sizes, strides, paddings)
        conv_out_size = self.conv.conv_out_size(h, w)
        if dueling:
            self.head: torch.nn.Module = DuelingHeadModel(conv_out_size, fc_sizes, output_size)
        else:
            self.head = MlpModel(conv_out_size, fc_sizes, output_size)

    @ignores_prev_action
    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor | None = None,
        prev_reward: torch.Tensor | None = None,
    ) -> torch.Tensor:
        lead_dim, T, B, image = frames_to_float(observation)
        q = self.head(self.conv(image).reshape(T * B, -1))
        result: torch.Tensor = restore_leading_dims(q, lead_dim, T, B)
        return result
