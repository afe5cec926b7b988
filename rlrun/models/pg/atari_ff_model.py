"""The feedforward convolutional policy-and-value network for Atari (A2C/PPO)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from rlrun.models.conv2d import Conv2dHeadModel
from rlrun.models.utils import frames_to_float, ignores_prev_action
from rlrun.utils.tensor import restore_leading_dims

__all__ = ["AtariFfModel", "a3c_conv_head"]


def a3c_conv_head(
    image_shape: Sequence[int],
    fc_sizes: int | Sequence[int] = 512,
    use_maxpool: bool = False,
    channels: Sequence[int] | None = None,
    kernel_sizes: Sequence[int] | None = None,
    strides: Sequence[int] | None = None,
    paddings: Sequence[int] | None = None,
) -> Conv2dHeadModel:
    """The small A3C convolutions (16/32 channels, kernels 8/4, strides 4/2, paddings 0/1) and ``fc_sizes``
    hidden units, each setting replaceable; shared by the feedforward and the LSTM networks."""
    return Conv2dHeadModel(
        image_shape=image_shape,
        channels=channels or [16, 32],
        kernel_sizes=kernel_sizes or [8, 4],
        strides=strides or [4, 2],
        paddings=paddings or [0, 1],
        use_maxpool=use_maxpool,
        hidden_sizes=fc_sizes,
    )


class AtariFfModel(torch.nn.Module):
    """Action probabilities ``pi [..., output_size]`` and values ``v [...]`` from frames ``[..., C, H, W]``.

    Frames are pixel values in [0, 255] and are scaled to [0, 1] here. Defaults are the small
    A3C network: 16/32 channels, kernels 8/4, strides 4/2, paddings 0/1, then ``fc_sizes`` hidden
    units (with nonlinearity) feeding a linear policy and a linear value output. The Nature DQN network
    that CleanRL and Baselines use for Atari is ``channels=(32, 64, 64), kernel_sizes=(8, 4, 3),
    strides=(4, 2, 1), paddings=(0, 0, 0), fc_sizes=512``.

    ``orthogonal_init=True`` (not in rlpyt; torch's default init otherwise) gives every layer orthogonal
    weights and zero biases, with gain sqrt(2) in the body, 0.01 on the policy output and 1 on the value
    output: the initialisation of Baselines' and CleanRL's Atari PPO and A2C.
    """

    def __init__(
        self,
        image_shape: Sequence[int],
        output_size: int,
        fc_sizes: int | Sequence[int] = 512,
        use_maxpool: bool = False,
        channels: Sequence[int] | None = None,
        kernel_sizes: Sequence[int] | None = None,
        strides: Sequence[int] | None = None,
        paddings: Sequence[int] | None = None,
        orthogonal_init: bool = False,
    ) -> None:
        super().__init__()
        self.conv = a3c_conv_head(image_shape, fc_sizes, use_maxpool, channels, kernel_sizes, strides, paddings)
        self.pi = torch.nn.Linear(self.conv.output_size, output_size)
        self.value = torch.nn.Linear(self.conv.output_size, 1)
        if orthogonal_init:
            for module, gain in [(self.conv, math.sqrt(2)), (self.pi, 0.01), (self.value, 1.0)]:
                for layer in module.modules():
                    if isinstance(layer, (torch.nn.Conv2d, torch.nn.Linear)):
                        torch.nn.init.orthogonal_(layer.weight, gain)
                        if layer.bias is not None:
                            torch.nn.init.zeros_(layer.bias)

    @ignores_prev_action
    def forward(
        self, image: torch.Tensor, prev_action: torch.Tensor | None = None, prev_reward: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        lead_dim, T, B, x = frames_to_float(image)
        features = self.conv(x)
        pi = F.softmax(self.pi(features), dim=-1)
        v = self.value(features).squeeze(-1)
        result: tuple[torch.Tensor, torch.Tensor] = restore_leading_dims((pi, v), lead_dim, T, B)
        return result
