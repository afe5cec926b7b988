"""The multilayer perceptron every vector-observation model is built from."""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["MlpModel"]


class MlpModel(torch.nn.Module):
    """Linear layers with ``nonlinearity`` after each hidden layer; the output layer is linear.

    ``hidden_sizes`` may be an int, a sequence, or empty/None (a linear model). With
    ``output_size=None`` there is no output layer: the last hidden layer (with its nonlinearity) is
    the output. Input ``[..., input_size]`` with any leading dims gives ``[..., output_size]``.
    """

    def __init__(
        self,
        input_size: int,
        hidden_sizes: int | Sequence[int] | None,
        output_size: int | None = None,
        nonlinearity: type[torch.nn.Module] = torch.nn.ReLU,
    ) -> None:
        super().__init__()
        if isinstance(hidden_sizes, int):
            hidden_sizes = [hidden_sizes]
        hidden_sizes = list(hidden_sizes or [])
        if output_size is None and not hidden_sizes:
            raise ValueError("MlpModel needs hidden_sizes or an output_size; both are empty.")
        layers: list[torch.nn.Module] = []
        last = int(input_size)
        for size in hidden_sizes:
            layers += [torch.nn.Linear(last, size), nonlinearity()]
            last = size
        if output_size is not None:
            layers.append(torch.nn.Linear(last, output_size))
            last = output_size
        self.model = torch.nn.Sequential(*layers)
        self._output_size = last

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = self.model(input)
        return result

    @property
    def output_size(self) -> int:
        """Size of the last dim of the output."""
        return self._output_size
