"""Synchronous training: sample a batch, optimise on it, repeat; log every few iterations.

``MinibatchRl`` reports the return of the training trajectories (the last ``log_traj_window`` ones);
``MinibatchRlEval`` stops at each log interval to run evaluation episodes and reports those instead.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from rlrun.envs.traj_info import TrajInfo
from rlrun.runners.checkpoint import CheckpointPolicy
from rlrun.runners.contracts import AgentT, AlgorithmContract, SamplerContract
from rlrun.runners.minibatch_rl_base import MinibatchRlBase
from rlrun.utils.logging import logger

__all__ = ["MinibatchRlBase", "MinibatchRl", "MinibatchRlEval", "check_log_traj_window"]


def check_log_traj_window(log_traj_window: int, runner_name: str) -> int:
    """``log_traj_window``, refused unless a number of trajectories. It is rlpyt's one positional argument
    of ``MinibatchRl`` and ``SyncRl``, so a script that passes the algorithm there gets told how to call."""
    if isinstance(log_traj_window, bool) or not isinstance(log_traj_window, int) or log_traj_window < 1:
        raise ValueError(
            f"{runner_name}: log_traj_window is a number of trajectories (>= 1), got {log_traj_window!r}; "
            "pass the algorithm, agent and sampler as keywords (algo=..., agent=..., sampler=...)."
        )
    return log_traj_window


class MinibatchRl(MinibatchRlBase[AgentT]):
    """Minibatch training that reports the training trajectories' statistics.

    Trajectory statistics cover the last ``log_traj_window`` completed training trajectories (also
    ones from earlier intervals, so a row has values even when no episode ended in its interval).
    As in rlpyt, ``log_traj_window`` is the one positional argument; the others are keywords
    (:class:`MinibatchRlBase`'s), so a subclass may call ``super().__init__(log_traj_window, **kwargs)``.
    """

    def __init__(
        self,
        log_traj_window: int = 100,
        *,
        algo: AlgorithmContract[AgentT],
        agent: AgentT,
        sampler: SamplerContract,
        n_steps: int | float,
        seed: int | None = None,
        affinity: dict[str, Any] | None = None,
        log_interval_steps: int | float = 1e5,
        checkpoint: CheckpointPolicy | bool | None = None,
        resume: bool | str | os.PathLike[str] = False,
        progress_bar: bool | None = None,
        video_every: int | None = None,
        video_max_steps: int = 1000,
    ) -> None:
        self.log_traj_window = check_log_traj_window(log_traj_window, type(self).__name__)
        super().__init__(
            algo,
            agent,
            sampler,
            n_steps,
            seed,
            affinity,
            log_interval_steps,
            checkpoint=checkpoint,
            resume=resume,
            progress_bar=progress_bar,
            video_every=video_every,
            video_max_steps=video_max_steps,
        )

    def on_log_interval(self, itr: int) -> None:
        self.log_diagnostics(itr)


class MinibatchRlEval(MinibatchRlBase[AgentT]):
    """Minibatch training that evaluates the agent before training and at every log interval.

    Trajectory statistics (``ReturnAverage`` ...) are those of the evaluation episodes run by
    ``sampler.evaluate_agent(itr)`` with the agent in eval mode; their time is not counted as training.
    The sampler needs ``eval_n_envs > 0``.
    """

    _eval = True

    def on_training_start(self) -> None:
        with logger.prefix("itr #0 "):
            eval_traj_infos, eval_time = self.evaluate_agent(0)
            self.log_diagnostics(0, eval_traj_infos, eval_time)

    def on_log_interval(self, itr: int) -> None:
        eval_traj_infos, eval_time = self.evaluate_agent(itr)
        self.log_diagnostics(itr, eval_traj_infos, eval_time)

    def evaluate_agent(self, itr: int) -> tuple[Sequence[TrajInfo], float]:
        """Run the sampler's evaluation with the agent in eval mode; return (traj_infos, seconds).

        Skipped (no trajectories, 0 s) before the algorithm's ``min_itr_learn``, except at itr 0.
        """
        if not self._evaluates_at(itr):
            return [], 0.0
        logger.log("Evaluating agent...", console=False)
        self.agent.eval_mode(itr)
        start = time.perf_counter()
        traj_infos = self.sampler.evaluate_agent(itr)
        eval_time = time.perf_counter() - start
        logger.log(f"Evaluation complete: {len(traj_infos)} trajectories in {eval_time:.2f} s.")
        return traj_infos, eval_time

    def no_episode_note(self, itr: int) -> str | None:
        if self._evaluates_at(itr):
            return None  # log_diagnostics warned that no evaluation episode finished
        return f"No evaluation before learning starts (iteration {self.min_itr_learn - 1}), so this row has no return."

    def _evaluates_at(self, itr: int) -> bool:
        return itr == 0 or itr >= self.min_itr_learn - 1

    def log_diagnostics(
        self,
        itr: int,
        eval_traj_infos: Sequence[TrajInfo] | None = None,
        eval_time: float = 0.0,
        prefix: str = "Diagnostics/",
    ) -> dict[str, Any]:
        """One row reporting the evaluation ``eval_traj_infos`` that took ``eval_time`` seconds (None: none ran)."""
        eval_traj_infos = eval_traj_infos or []
        if not eval_traj_infos and self._evaluates_at(itr):
            logger.log("WARNING: no evaluation episode finished within the sampler's eval_max_steps; raise it.")
        self.diagnostics.add_eval_time(eval_time)
        return super().log_diagnostics(itr, eval_traj_infos, eval_time, prefix=prefix)

    def extra_diagnostics(self, traj_infos: Sequence[TrajInfo] | None) -> dict[str, float]:
        traj_infos = traj_infos or []
        d = self.diagnostics
        return {
            "CumTrainTime": d.cum_time - d.cum_eval_time,
            "StepsInEval": sum(info["Length"] for info in traj_infos),
            "TrajsInEval": len(traj_infos),
            "EvalTime": d.last_eval_time,
            "CumEvalTime": d.cum_eval_time,
        }
