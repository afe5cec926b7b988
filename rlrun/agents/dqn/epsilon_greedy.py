"""Epsilon schedules for epsilon-greedy agents: a linear anneal, and log-spaced per-env final values.

Exploration anneals linearly from ``eps_init`` at sampler itr ``eps_itr_min`` to ``eps_final`` at
``eps_itr_max`` and stays there. With a vector of final values (Ape-X style), env ``i`` of
``global_B`` ends at the ``i``-th of ``global_B`` values log-spaced from ``eps_final_min`` to
``eps_final``.
"""

from __future__ import annotations

import math

import torch

__all__ = ["linear_epsilon", "log_spaced_epsilons"]


def linear_epsilon(
    itr: int, itr_min: int, itr_max: int, eps_init: float | torch.Tensor, eps_final: float | torch.Tensor
) -> float | torch.Tensor:
    """``eps_init`` up to ``itr_min``, ``eps_final`` from ``itr_max``, linear in between (elementwise)."""
    if itr >= itr_max:
        progress = 1.0
    elif itr <= itr_min:
        progress = 0.0
    else:
        progress = (itr - itr_min) / (itr_max - itr_min)
    return progress * eps_final + (1 - progress) * eps_init


def log_spaced_epsilons(global_B: int, eps_final_min: float, eps_final: float) -> torch.Tensor:
    """``global_B`` values spaced evenly in log from ``eps_final_min`` (env 0) to ``eps_final`` (the last env)."""
    if not (eps_final_min > 0 and eps_final > 0):
        raise ValueError(
            f"Log-spaced epsilons need positive eps_final_min and eps_final, got {eps_final_min}, {eps_final}."
        )
    return torch.logspace(math.log10(eps_final_min), math.log10(eps_final), int(global_B))
