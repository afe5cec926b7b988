"""Dueling Q heads (Wang et al., 2016): a state value plus mean-centred action advantages, for scalar
Q-values and for categorical Q distributions."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from rlrun.models.mlp import MlpModel
from rlrun.models.utils import scale_grad

__all__ = ["DuelingHeadModel", "DistributionalDuelingHeadModel"]


class DuelingHeadModel(torch.nn.Module):
    """``Q(s, a) = V(s) + A(s, a) - mean_a A(s, a)``, from features ``[N, input_size]`` to ``[N, output_size]``.

    The advantage stream's output layer has one bias shared by all actions (a per-action bias would
    cancel in the mean anyway). The gradient flowing back into the features is scaled by
    ``grad_scale`` (1/sqrt(2) in the paper) since both streams add to it.
    """

    def __init__(
        self,
        input_size: int,
        hidden_sizes: int | Sequence[int],
        output_size: int,
        grad_scale: float = 2 ** (-1 / 2),
    ) -> None:
        super().__init__()
        if isinstance(hidden_sizes, int):
            hidden_sizes = [hidden_sizes]
        if not hidden_sizes:
            raise ValueError("DuelingHeadModel needs at least one hidden layer size.")
        self.advantage_hidden = MlpModel(input_size, hidden_sizes)
        self.advantage_out = torch.nn.Linear(self.advantage_hidden.output_size, output_size, bias=False)
        self.advantage_bias = torch.nn.Parameter(torch.zeros(1))
        self.value = MlpModel(input_size, hidden_sizes, output_size=1)
        self._grad_scale = grad_scale

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        x = scale_grad(input, self._grad_scale)
        advantage = self.advantage(x)
        result: torch.Tensor = self.value(x) + advantage - advantage.mean(dim=-1, keepdim=True)
        return result

    def advantage(self, input: torch.Tensor) -> torch.Tensor:
        """The (not yet centred) advantage of each action."""
        result: torch.Tensor = self.advantage_out(self.advantage_hidden(input)) + self.advantage_bias
        return result


class DistributionalDuelingHeadModel(torch.nn.Module):
    """The dueling split for Q distributions: logits ``[N, output_size, n_atoms]`` from features ``[N, input_size]``.

    Per atom, ``logit(s, a) = V(s) + A(s, a) - mean_a A(s, a)``: the value stream gives ``n_atoms``
    logits shared by all actions, the advantage stream ``n_atoms`` per action with one bias per atom
    shared by all actions. The caller applies the softmax over atoms. As in
    :class:`DuelingHeadModel`, the gradient into the features is scaled by ``grad_scale``.
    """

    def __init__(
        self,
        input_size: int,
        hidden_sizes: int | Sequence[int],
        output_size: int,
        n_atoms: int,
        grad_scale: float = 2 ** (-1 / 2),
    ) -> None:
        super().__init__()
        if isinstance(hidden_sizes, int):
            hidden_sizes = [hidden_sizes]
        if not hidden_sizes:
            raise ValueError("DistributionalDuelingHeadModel needs at least one hidden layer size.")
        self._output_size = output_size
        self._n_atoms = n_atoms
        self.advantage_hidden = MlpModel(input_size, hidden_sizes)
        self.advantage_out = torch.nn.Linear(self.advantage_hidden.output_size, output_size * n_atoms, bias=False)
        self.advantage_bias = torch.nn.Parameter(torch.zeros(n_atoms))
        self.value = MlpModel(input_size, hidden_sizes, output_size=n_atoms)
        self._grad_scale = grad_scale

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        x = scale_grad(input, self._grad_scale)
        advantage = self.advantage(x)
        value = self.value(x).unsqueeze(-2)  # [N, 1, n_atoms]: the same for every action
        result: torch.Tensor = value + advantage - advantage.mean(dim=-2, keepdim=True)
        return result

    def advantage(self, input: torch.Tensor) -> torch.Tensor:
        """The (not yet centred) advantage logits ``[N, output_size, n_atoms]``."""
        out = self.advantage_out(self.advantage_hidden(input))
        result: torch.Tensor = out.reshape(*out.shape[:-1], self._output_size, self._n_atoms) + self.advantage_bias
        return result
