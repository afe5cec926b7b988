"""What every sampler is configured with, and the interface runners call."""

from __future__ import annotations

import logging
import numbers
from collections.abc import Callable, Mapping
from typing import Any

from rlrun.agents.base import BaseAgent
from rlrun.envs.base import Env
from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.collections import BatchSpec
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector
from rlrun.utils.data_model import SamplesBatch

__all__ = ["BaseSampler", "report_unfinished_evaluation"]


def report_unfinished_evaluation(
    log: logging.Logger, itr: int, n_finished: int, n_unfinished: int, eval_max_steps: int | None
) -> None:
    """Say that ``n_unfinished`` evaluation episodes were cut at ``eval_max_steps`` and not counted.

    ``eval_max_trajectories`` is a cap, as in rlpyt, not a quota: an evaluation that finished some
    episodes is a result, and the cut ones are noted in the run's log only (rlpyt's example_1 cuts one
    Pong game of five at its first evaluation). With none finished there is no result: a warning.
    """
    if not n_unfinished:
        return
    if n_finished:
        log.info(
            "Evaluation at itr %d: %d episode(s) finished and %d were still running at eval_max_steps=%s, so "
            "those are not counted (raise eval_max_steps to count longer episodes).",
            itr, n_finished, n_unfinished, eval_max_steps,
        )  # fmt: skip
    else:
        log.warning(
            "Evaluation at itr %d: %d episode(s) were still running at eval_max_steps=%s and are not counted; "
            "raise eval_max_steps.",
            itr, n_unfinished, eval_max_steps,
        )  # fmt: skip


class BaseSampler:
    """Holds the env factory and batch shape; subclasses decide where envs and the agent run.

    Runners call ``initialize`` once (it returns the examples algorithms build their buffers from),
    ``obtain_samples(itr)`` each iteration, ``evaluate_agent(itr)`` when evaluating, and
    ``shutdown()`` at the end, also after an error.
    """

    n_worker: int = 0  # worker processes; a parallel sampler sets its count in initialize

    def __init__(
        self,
        EnvCls: Callable[..., Env],
        env_kwargs: Mapping[str, object] | None,
        batch_T: int,
        batch_B: int,
        CollectorCls: type[BaseCollector],
        max_decorrelation_steps: int = 100,
        TrajInfoCls: type[TrajInfo] = TrajInfo,
        eval_n_envs: int = 0,
        eval_CollectorCls: type[BaseEvalCollector] | None = None,
        eval_env_kwargs: Mapping[str, object] | None = None,
        eval_max_steps: int | None = None,
        eval_max_trajectories: int | None = None,
    ) -> None:
        for name, value in (("batch_T", batch_T), ("batch_B", batch_B)):
            unit = "time steps per env" if name == "batch_T" else "envs"
            if isinstance(value, bool) or not isinstance(value, numbers.Integral | float):
                raise TypeError(f"{name} is a number of {unit}: give an int, not {type(value).__name__} {value!r}.")
            if value != int(value):
                raise ValueError(f"{name}={value!r} is not a whole number of {unit}; it would be cut to {int(value)}.")
        if int(batch_T) < 1 or int(batch_B) < 1:
            raise ValueError(f"batch_T and batch_B must be at least 1, got batch_T={batch_T}, batch_B={batch_B}.")
        if not callable(EnvCls):
            raise TypeError(f"EnvCls must be a class or a function that builds an env, got {EnvCls!r}.")
        eval_n_envs = int(eval_n_envs)
        if eval_n_envs > 0 and eval_max_steps is None:
            raise ValueError(
                "eval_n_envs > 0 needs eval_max_steps: the most env steps one evaluation may take in "
                "total, a safety cap (episodes still running at the cap are not counted)."
            )
        # With no eval envs nothing is evaluated, so any cap is moot: rlpyt scripts often pass 0 there.
        if eval_n_envs > 0 and eval_max_trajectories is not None and int(eval_max_trajectories) < 1:
            raise ValueError(f"eval_max_trajectories must be at least 1 or None, got {eval_max_trajectories}.")
        self.EnvCls = EnvCls
        self.env_kwargs = dict(env_kwargs or {})
        self.batch_spec = BatchSpec(int(batch_T), int(batch_B))
        self.CollectorCls = CollectorCls
        self.max_decorrelation_steps = int(max_decorrelation_steps)
        self.TrajInfoCls = TrajInfoCls
        self.eval_n_envs = eval_n_envs
        self.eval_CollectorCls = eval_CollectorCls
        self.eval_env_kwargs = dict(eval_env_kwargs) if eval_env_kwargs is not None else dict(self.env_kwargs)
        self.eval_max_steps = None if eval_max_steps is None else int(eval_max_steps)
        self.eval_max_trajectories = None if eval_max_trajectories is None else int(eval_max_trajectories)

    @property
    def batch_size(self) -> int:
        return self.batch_spec.size

    @property
    def mid_batch_reset(self) -> bool:
        return self.CollectorCls.mid_batch_reset

    def initialize(
        self,
        agent: BaseAgent,
        affinity: Mapping[str, object] | None = None,
        seed: int | None = None,
        bootstrap_value: bool = False,
        traj_info_kwargs: Mapping[str, object] | None = None,
        rank: int = 0,
        world_size: int = 1,
        worker_process: Callable[..., None] | None = None,
    ) -> dict[str, Any]:
        """Build the envs (or start the workers) and return the examples the algorithm builds its buffers
        from. ``rank`` and ``world_size``: this sampler's place among SyncRl's ranks. ``worker_process``:
        the target of the worker processes, for samplers that start them (None: rlrun's own)."""
        raise NotImplementedError

    def obtain_samples(self, itr: int) -> tuple[SamplesBatch, list[TrajInfo]]:
        raise NotImplementedError

    def evaluate_agent(self, itr: int) -> list[TrajInfo]:
        raise NotImplementedError

    def shutdown(self) -> None:
        pass

    # Whether load_state_dict puts the envs back mid-episode (else they restart from reset).
    restores_env_state: bool = False

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps of the sampler after a batch, for :meth:`load_state_dict` after
        ``initialize``. Nothing here: a sampler that keeps nothing starts its envs afresh on resume."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass
