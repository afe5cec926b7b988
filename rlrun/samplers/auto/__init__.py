"""``sampler="auto"``: measure the env and the agent on this machine, predict every layout's speed, pick.

    choice = auto_layout(EnvCls, env_kwargs, agent, batch_B=16, batch_T=5)
    print(choice.format())          # what was measured, each candidate's prediction, the choice and why
    choice.layout.kind, choice.layout.workers    # "serial" | "cpu" | "gpu" | "alternating", and its workers

:mod:`.measure` times the probes, :mod:`.cost_model` predicts from the costs (pure functions),
:mod:`.choose` lists the candidates the run allows and picks, :mod:`.self_check` compares the first
batches' speed with the prediction, and :mod:`.project` prints predictions for costs given by hand
(another machine's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from rlrun.samplers.auto.choose import Choice, Constraints, candidates, choose
from rlrun.samplers.auto.cost_model import KINDS, AgentCost, Costs, Kind, Layout, Prediction, predict, split_envs
from rlrun.samplers.auto.measure import ProbeSettings, measure_costs, usable_cores
from rlrun.samplers.auto.self_check import SpeedCheck, attach_speed_check

__all__ = [
    "AgentCost",
    "Choice",
    "Constraints",
    "Costs",
    "KINDS",
    "Kind",
    "Layout",
    "Prediction",
    "ProbeSettings",
    "SpeedCheck",
    "attach_speed_check",
    "auto_layout",
    "call_sizes",
    "candidates",
    "choose",
    "measure_costs",
    "predict",
    "split_envs",
]


def call_sizes(batch_B: int, max_workers: int) -> list[int]:
    """The agent's call sizes that the candidate layouts make: every worker's share of ``batch_B`` (and of
    its halves, for alternating), and ``batch_B`` itself."""
    sizes = {batch_B, max(1, batch_B // 2)}
    for workers in range(1, max_workers + 1):
        for total in (batch_B, batch_B // 2):
            if total >= workers:
                sizes.update(split_envs(total, workers))
    return sorted(sizes)


def auto_layout(
    EnvCls: Callable[..., Any],
    env_kwargs: dict[str, Any],
    agent: Any,
    batch_B: int,
    batch_T: int,
    *,
    workers: int | None = None,
    cuda_idx: int | None = None,
    asynchronous: bool = False,
    kinds: tuple[Kind, ...] = KINDS,
    settings: ProbeSettings | None = None,
) -> Choice:
    """Measure (a few seconds) and choose the layout for one run; ``agent`` is left uninitialised.

    ``workers``: the user's count, kept; ``asynchronous``: the optimiser keeps a core; ``kinds``: the
    sampler kinds allowed (the served ones need a master acting for every env).
    """
    constraints = Constraints(batch_B, batch_T, workers, asynchronous, kinds)
    max_workers = workers or max(1, usable_cores() - int(asynchronous))
    served = any(kind in kinds for kind in ("gpu", "alternating"))
    settings = settings or ProbeSettings()
    settings = dataclasses.replace(
        settings, served=settings.served and served, cpu_sampler=settings.cpu_sampler and "cpu" in kinds
    )
    costs = measure_costs(
        EnvCls, env_kwargs, agent, call_sizes(batch_B, max_workers), batch_T, max_workers, cuda_idx, settings
    )
    return choose(costs, constraints)
