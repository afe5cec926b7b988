"""Convolutional stacks for image observations, alone or followed by an MLP head."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch

from rlrun.models.mlp import MlpModel
from rlrun.models.utils import conv2d_output_shape
from rlrun.utils.tensor import infer_leading_dims, restore_leading_dims

__all__ = ["Conv2dModel", "Conv2dHeadModel"]


class Conv2dModel(torch.nn.Module):
    """``Conv2d`` layers, each followed by ``nonlinearity``.

    With ``use_maxpool=True`` the convolutions run at stride 1 and a ``MaxPool2d`` of the given
    stride downsamples after each one instead. Input ``[..., C, H, W]`` (up to two leading dims)
    gives ``[..., channels[-1], H', W']``; :meth:`conv_out_size` gives ``channels[-1] * H' * W'``.
    """

    def __init__(
        self,
        in_channels: int,
        channels: Sequence[int],
        kernel_sizes: Sequence[int],
        strides: Sequence[int],
        paddings: Sequence[int] | None = None,
        nonlinearity: type[torch.nn.Module] = torch.nn.ReLU,
        use_maxpool: bool = False,
        head_sizes: Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        if head_sizes is not None:
            raise ValueError(
                "Conv2dModel does not know the image height and width, so it cannot size an MLP head; "
                "use Conv2dHeadModel(image_shape, ..., hidden_sizes=head_sizes) instead."
            )
        channels, kernel_sizes, strides = list(channels), list(kernel_sizes), list(strides)
        paddings = [0] * len(channels) if paddings is None else list(paddings)
        lengths = {len(channels), len(kernel_sizes), len(strides), len(paddings)}
        if len(lengths) != 1:
            raise ValueError(
                f"Conv2dModel: channels, kernel_sizes, strides and paddings need one entry per layer; got "
                f"lengths {len(channels)}, {len(kernel_sizes)}, {len(strides)}, {len(paddings)}."
            )
        layers: list[torch.nn.Module] = []
        for c_in, c_out, k, s, p in zip([in_channels] + channels[:-1], channels, kernel_sizes, strides, paddings):
            conv_stride = 1 if use_maxpool else s
            layers += [torch.nn.Conv2d(c_in, c_out, kernel_size=k, stride=conv_stride, padding=p), nonlinearity()]
            if use_maxpool and s > 1:
                layers.append(torch.nn.MaxPool2d(s))
        self.conv = torch.nn.Sequential(*layers)
        self._out_channels = channels[-1] if channels else in_channels

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        lead_dim, T, B, shape = infer_leading_dims(input, 3)
        out = self.conv(input.reshape(T * B, *shape))
        result: torch.Tensor = restore_leading_dims(out, lead_dim, T, B)
        return result

    def conv_out_size(self, h: int, w: int, c: int | None = None) -> int:
        """Number of features the stack outputs for an ``h x w`` image, computed without a forward pass."""
        for layer in self.conv:
            if isinstance(layer, (torch.nn.Conv2d, torch.nn.MaxPool2d)):
                # Conv2dModel builds its layers with integer paddings, never "same"/"valid".
                padding = cast("int | tuple[int, ...]", layer.padding)
                h, w = conv2d_output_shape(h, w, layer.kernel_size, layer.stride, padding)
        if h <= 0 or w <= 0:
            raise ValueError(f"Conv2dModel: the image is too small for these layers (output {h}x{w}).")
        return h * w * self._out_channels


class Conv2dHeadModel(torch.nn.Module):
    """A :class:`Conv2dModel` whose flattened output feeds an :class:`MlpModel`.

    Input ``[..., C, H, W]`` with ``(C, H, W) == image_shape`` gives ``[..., output_size]``. With
    ``output_size=None`` the last hidden layer (with its nonlinearity) is the output; with neither
    hidden sizes nor an output size the flattened conv features are.
    """

    def __init__(
        self,
        image_shape: Sequence[int],
        channels: Sequence[int],
        kernel_sizes: Sequence[int],
        strides: Sequence[int],
        hidden_sizes: int | Sequence[int] | None,
        output_size: int | None = None,
        paddings: Sequence[int] | None = None,
        nonlinearity: type[torch.nn.Module] = torch.nn.ReLU,
        use_maxpool: bool = False,
    ) -> None:
        super().__init__()
        c, h, w = image_shape
        self.conv = Conv2dModel(
            in_channels=c,
            channels=channels,
            kernel_sizes=kernel_sizes,
            strides=strides,
            paddings=paddings,
            nonlinearity=nonlinearity,
            use_maxpool=use_maxpool,
        )
        self.conv_out_size = self.conv.conv_out_size(h, w)
        if hidden_sizes or output_size:
            self.head: torch.nn.Module = MlpModel(self.conv_out_size, hidden_sizes, output_size, nonlinearity)
            self._output_size = self.head.output_size
        else:
            self.head = torch.nn.Identity()
            self._output_size = self.conv_out_size

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        lead_dim, T, B, shape = infer_leading_dims(input, 3)
        features = self.conv(input.reshape(T * B, *shape)).reshape(T * B, -1)
        result: torch.Tensor = restore_leading_dims(self.head(features), lead_dim, T, B)
        return result

    @property
    def output_size(self) -> int:
        """Size of the last dim of the output."""
        return self._output_size
