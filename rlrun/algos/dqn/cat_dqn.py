"""Categorical DQN, a.k.a. C51 (Bellemare et al., 2017): Q-learning on a distribution of returns."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import torch

from rlrun.agents.dqn.catdqn_agent import CatDqnAgent
from rlrun.algos.dqn.dqn import DQN, OptInfo
from rlrun.replays.base import BaseReplayBuffer
from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.tensor import select_at_indexes

__all__ = ["CategoricalDQN", "project_distribution"]

if TYPE_CHECKING:  # samplers sit beside algos in the layers; only the type is needed
    from rlrun.samplers.collections import BatchSpec

# Smallest probability whose log enters the loss: keeps log(0) out of the gradient.
_P_MIN = 1e-6


def project_distribution(p: torch.Tensor, values: torch.Tensor, V_min: float, V_max: float) -> torch.Tensor:
    """Project the distribution with masses ``p [..., M]`` at ``values [..., M]`` onto ``N`` evenly
    spaced atoms from ``V_min`` to ``V_max``, where ``N`` is ``p``'s last dim (so ``M == N``).

    Values outside ``[V_min, V_max]`` count as the nearest end. A value between two neighbouring
    atoms splits its mass between them in proportion to closeness (a value on an atom gives it all
    its mass), which keeps the mean of a distribution inside the support. Total mass is kept.
    """
    n_atoms = p.shape[-1]
    if values.shape != p.shape:
        raise ValueError(f"project_distribution: p {tuple(p.shape)} and values {tuple(values.shape)} must match.")
    if n_atoms < 2 or not V_min < V_max:
        raise ValueError(f"project_distribution needs n_atoms >= 2 and V_min < V_max; got {n_atoms}, {V_min}, {V_max}.")
    spacing = (V_max - V_min) / (n_atoms - 1)
    position = (values.clamp(V_min, V_max) - V_min) / spacing  # in atom units, [0, n_atoms - 1]
    lower = position.floor().long().clamp(0, n_atoms - 2)  # the left atom of the interval
    upper_share = (position - lower).clamp(0, 1)  # 0 on the left atom, 1 on the right one
    out = torch.zeros_like(p)
    out.scatter_add_(-1, lower, p * (1 - upper_share))
    out.scatter_add_(-1, lower + 1, p * upper_share)
    return out


class CategoricalDQN(DQN[CatDqnAgent, OptInfo]):
    """DQN learning, per action, a categorical distribution of the return over ``n_atoms`` atoms
    evenly spaced from ``V_min`` to ``V_max`` (the agent holds ``n_atoms``: see :class:`CatDqnAgent`).

    The target distribution is the target network's distribution at ``s_{t+n}`` for the greedy
    next action (by expected Q; the online network's with ``double_dqn``), shifted by the n-step
    return and shrunk by ``discount^n`` (collapsed onto ``R^(n)`` where ``done_n``), then projected
    onto the atoms with :func:`project_distribution`. The loss is the cross-entropy from it to the
    online distribution of the action taken; the per-sample errors returned with it (logged as
    ``tdAbsErr``, and the priorities of a prioritized replay) are the KL divergences. Time-limit
    windows discount by their own length as in :class:`DQN`. ``delta_clip`` is not used.

    All other keywords are :class:`DQN`'s. Adam's ``eps`` defaults to ``0.01 / batch_size`` (as in
    the C51 paper) also when ``optim_kwargs`` is given without it, for optimizers that take ``eps``.
    """

    def __init__(self, V_min: float = -10, V_max: float = 10, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not V_min < V_max:
            raise ValueError(f"CategoricalDQN: V_min must be below V_max, got {V_min} and {V_max}.")
        self.V_min = V_min
        self.V_max = V_max
        if "eps" not in self.optim_kwargs and _takes_keyword(self.OptimCls, "eps"):
            self.optim_kwargs["eps"] = 0.01 / self.batch_size

    def initialize(
        self,
        agent: CatDqnAgent,
        n_itr: int,
        batch_spec: BatchSpec,
        mid_batch_reset: bool = False,
        examples: dict[str, Any] | None = None,
        world_size: int = 1,
        rank: int = 0,
    ) -> None:
        """:meth:`DQN.initialize`, then give the agent the support ``[V_min, V_max]``."""
        if not hasattr(agent, "give_V_min_max") or not hasattr(agent, "n_atoms"):
            raise TypeError(
                f"CategoricalDQN trains agents with a Q distribution (CatDqnAgent, AtariCatDqnAgent); got "
                f"{type(agent).__name__}. For a scalar-Q agent use DQN."
            )
        super().initialize(agent, n_itr, batch_spec, mid_batch_reset, examples, world_size, rank)
        self.agent.give_V_min_max(self.V_min, self.V_max)

    def async_initialize(
        self,
        agent: CatDqnAgent,
        sampler_n_itr: int,
        batch_spec: BatchSpec,
        mid_batch_reset: bool,
        examples: dict[str, Any],
        world_size: int = 1,
    ) -> BaseReplayBuffer:
        """For asynchronous runners: as DQN's, also giving the agent the support of its distributions."""
        replay = super().async_initialize(agent, sampler_n_itr, batch_spec, mid_batch_reset, examples, world_size)
        self.agent.give_V_min_max(self.V_min, self.V_max)
        return replay

    def loss(self, samples: NamedArrayTuple) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean cross-entropy to the projected target distributions over a replay batch ``[batch_B]``
        (each sample weighted by ``is_weights`` when the batch has them), and each sample's KL
        divergence from the target to the online distribution (no grad)."""
        z = torch.linspace(self.V_min, self.V_max, self.agent.n_atoms, device=self.agent.device)
        with torch.no_grad():
            target_ps = self.agent.target(*samples.target_inputs)  # [B, A, P]
            chooser_ps = self.agent(*samples.target_inputs) if self.double_dqn else target_ps
            next_a = torch.argmax(torch.tensordot(chooser_ps, z, dims=1), dim=-1)
            next_p = select_at_indexes(next_a, target_ps)  # [B, P]
            # Windows cut short by a time limit bootstrap after fewer steps (replays with timeout).
            n = samples.steps_n if "steps_n" in samples else self.n_step_return
            bootstrap = (1 - samples.done_n.float()) * self.discount**n  # [B]
            next_values = samples.return_.unsqueeze(-1) + bootstrap.unsqueeze(-1) * z  # [B, P]
            target_p = project_distribution(next_p, next_values, self.V_min, self.V_max)
        ps = self.agent(*samples.agent_inputs)
        log_p = select_at_indexes(samples.action, ps).clamp(min=_P_MIN).log()
        losses = -(target_p * log_p).sum(dim=-1)  # cross-entropy [B]
        # KL = cross-entropy - entropy of the target; kept positive for use as priorities.
        kl = (losses.detach() + torch.special.xlogy(target_p, target_p).sum(dim=-1)).clamp(min=_P_MIN)
        if "is_weights" in samples:
            losses = losses * samples.is_weights
        return losses.mean(), kl


def _takes_keyword(fn: Any, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
