"""The Nature-DQN convolutional network with a categorical Q distribution per action (C51)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from rlrun.models.dqn.atari_dqn_model import nature_dqn_conv
from rlrun.models.dqn.dueling import DistributionalDuelingHeadModel
from rlrun.models.mlp import MlpModel
from rlrun.models.utils import frames_to_float, ignores_prev_action
from rlrun.utils.tensor import restore_leading_dims

__all__ = ["DistributionalHeadModel", "AtariCatDqnModel"]


class DistributionalHeadModel(torch.nn.Module):
    """An MLP giving ``n_atoms`` logits per action: ``[N, input_size]`` to ``[N, output_size, n_atoms]``."""

    def __init__(self, input_size: int, layer_sizes: int | Sequence[int], output_size: int, n_atoms: int) -> None:
        super().__init__()
        self.mlp = MlpModel(input_size, layer_sizes, output_size * n_atoms)
        self._output_size = output_size
        self._n_atoms = n_atoms

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        out = self.mlp(input)
        result: torch.Tensor = out.reshape(*out.shape[:-1], self._output_size, self._n_atoms)
        return result


def check_n_atoms(n_atoms: int) -> None:
    """A categorical Q distribution needs at least two atoms (its support spans ``[V_min, V_max]``)."""
    if n_atoms < 2:
        raise ValueError(f"n_atoms must be at least 2, got {n_atoms}.")


class AtariCatDqnModel(torch.nn.Module):
    """Q distributions ``[..., output_size, n_atoms]`` (probabilities) from frames ``[..., C, H, W]``.

    The convolutional layers and their defaults are :class:`~rlrun.models.dqn.atari_dqn_model.AtariDqnModel`'s
    (frames in [0, 255] are scaled to [0, 1]); the head gives ``n_atoms`` logits per action and a
    softmax over the atoms makes each action's distribution. The atom values are not the model's:
    the agent holds them (``z``, from the algorithm's ``V_min`` and ``V_max``). ``dueling=True`` uses
    a :class:`DistributionalDuelingHeadModel`. Up to two leading dims are kept.
    """

    def __init__(
        self,
        image_shape: Sequence[int],
        output_size: int,
        n_atoms: int = 51,
        fc_sizes: int | Sequence[int] = 512,
        dueling: bool = False,
        use_maxpool: bool = False,
        channels: Sequence[int] | None = None,
        kernel_sizes: Sequence[int] | None = None,
        strides: Sequence[int] | None = None,
        paddings: Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        check_n_atoms(n_atoms)
        c, h, w = image_shape
        self.dueling = dueling
        self.n_atoms = n_atoms
        self.conv = nature_dqn_conv(c, use_maxpool, channels, kernel_sizes, strides, paddings)
        conv_out_size = self.conv.conv_out_size(h, w)
        if dueling:
            self.head: torch.nn.Module = DistributionalDuelingHeadModel(conv_out_size, fc_sizes, output_size, n_atoms)
        else:
            self.head = DistributionalHeadModel(conv_out_size, fc_sizes, output_size, n_atoms)

    @ignores_prev_action
    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor | None = None,
        prev_reward: torch.Tensor | None = None,
    ) -> torch.Tensor:
        lead_dim, T, B, image = frames_to_float(observation)
        logits = self.head(self.conv(image).reshape(T * B, -1))
        result: torch.Tensor = restore_leading_dims(torch.softmax(logits, dim=-1), lead_dim, T, B)
        return result
