"""``sampler="auto"``: measure the env and the agent on this machine, predict every layout's speed, pick.

    choice = auto_layout(EnvCls, env_kwargs, agent, batch_B=16, batch_T=5, n_steps=10_000_000)
    print(choice.format())          # what was measured, each candidate's prediction, the choice and why
    choice.layout.kind, choice.layout.workers    # "serial" | "cpu" | "gpu" | "alternating", and its workers

:mod:`.screen` tells a run too short for the full probes to pay (it keeps serial), :mod:`.measure` times
the probes, :mod:`.cost_model` predicts from the costs (pure functions),
:mod:`.choose` lists the candidates the run allows and picks, :mod:`.self_check` compares the first
batches' speed with the prediction, and :mod:`.project` prints predictions for costs given by hand
(another machine's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from rlrun.samplers.auto.choose import Choice, Constraints, candidates, choose, serial_from_screen
from rlrun.samplers.auto.cost_model import KINDS, AgentCost, Costs, Kind, Layout, Prediction, predict, split_envs
from rlrun.samplers.auto.measure import ProbeSettings, measure_costs, usable_cores
from rlrun.samplers.auto.screen import Screen, screen_run
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
    "Screen",
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
    n_steps: int | None = None,
    workers: int | None = None,
    cuda_idx: int | None = None,
    asynchronous: bool = False,
    kinds: tuple[Kind, ...] = KINDS,
    settings: ProbeSettings | None = None,
) -> Choice:
    """Measure (a few seconds) and choose the layout for one run; ``agent`` is left uninitialised.

    ``n_steps``: the env steps the run samples. Given, a run too short for the full probes to pay keeps
    serial after timing its SerialSampler alone (:mod:`rlrun.samplers.auto.screen`); None measures every
    layout whatever the run's length. ``workers``: the user's count, kept; ``asynchronous``: the optimiser
    keeps a core; ``kinds``: the sampler kinds allowed (the served ones need a master acting for every env).
    """
    constraints = Constraints(batch_B, batch_T, workers, asynchronous, kinds)
    max_workers = workers or max(1, usable_cores() - int(asynchronous))
    served = any(kind in kinds for kind in ("gpu", "alternating"))
    settings = settings or ProbeSettings()
    settings = dataclasses.replace(
        settings, served=settings.served and served, cpu_sampler=settings.cpu_sampler and "cpu" in kinds
    )
    sizes = call_sizes(batch_B, max_workers)
    screen = None
    if n_steps is not None and cuda_idx is None and "serial" in kinds and workers is None:
        screen = screen_run(EnvCls, env_kwargs, agent, batch_B, batch_T, n_steps, max_workers, sizes, settings)
        if not screen.worth_probing:
            return serial_from_screen(screen, constraints)
    costs = measure_costs(EnvCls, env_kwargs, agent, sizes, batch_T, max_workers, cuda_idx, settings)
    return dataclasses.replace(choose(costs, constraints), screen=screen)
