"""``sampler="auto"`` inside a run built from a config (``rlrun train``, the quick start): measure,
choose, print the table, and check the first batches against the prediction."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rlrun.samplers.auto import auto_layout
from rlrun.samplers.auto.choose import Choice
from rlrun.samplers.auto.self_check import SpeedCheck, attach_speed_check

__all__ = ["choose_for_run", "check_speed"]


def choose_for_run(
    EnvCls: Callable[..., Any],
    env_kwargs: dict[str, Any],
    AgentCls: Callable[..., Any],
    agent_kwargs: Mapping[str, Any],
    sampler_config: Mapping[str, Any],
    workers: int | None = None,
    cuda_idx: int | None = None,
    asynchronous: bool = False,
    write: Callable[[str], object] = print,
    n_steps: int | None = None,
) -> Choice:
    """Measure and choose for a run whose sampler section is ``sampler_config`` (its ``batch_B`` and
    ``batch_T`` are kept) and that samples ``n_steps`` env steps (None: measure every layout, however
    short the run); prints the table with ``write``."""
    import torch

    if cuda_idx is not None and not 0 <= cuda_idx < torch.cuda.device_count():
        raise ValueError(
            f"cuda_idx {cuda_idx}: this machine has {torch.cuda.device_count()} CUDA GPU(s) visible to torch; "
            "leave it out to run on the CPU."
        )
    batch_B, batch_T = int(sampler_config.get("batch_B", 1)), int(sampler_config.get("batch_T", 1))
    choice = auto_layout(
        EnvCls,
        env_kwargs,
        AgentCls(**agent_kwargs),
        batch_B,
        batch_T,
        n_steps=n_steps,
        workers=workers,
        cuda_idx=cuda_idx,
        asynchronous=asynchronous,
    )
    write(choice.format())
    return choice


def check_speed(sampler: Any, choice: Choice) -> SpeedCheck:
    """Warn (in the run's log) when the first batches sample more than 20% off the prediction."""
    c = choice.constraints
    check = SpeedCheck(choice.prediction.steps_per_s, c.batch_B * c.batch_T, choice.layout.label)
    return attach_speed_check(sampler, check)
