"""Synchronous training: sample a batch, optimise on it, repeat; log every few iterations.

``MinibatchRl`` reports the return of the training trajectories (the last ``log_traj_window`` ones);
``MinibatchRlEval`` stops at each log interval to run evaluation episodes and reports those instead.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from rlrun.runners.minibatch_rl_base import MinibatchRlBase
from rlrun.utils.logging import logger

__all__ = ["MinibatchRlBase", "MinibatchRl", "MinibatchRlEval"]


class MinibatchRl(MinibatchRlBase):
    """Minibatch training that reports the training trajectories' statistics.

    Trajectory statistics cover the last ``log_traj_window`` completed training trajectories (also
    ones from earlier intervals, so a row has values even when no episode ended in its interval).
    """

    def __init__(self, *args: Any, log_traj_window: int = 100, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if int(log_traj_window) < 1:
            raise ValueError(f"log_traj_window must be >= 1 trajectories, got {log_traj_window!r}.")
        self.log_traj_window = int(log_traj_window)

    def initialize_logging(self) -> None:
        super().initialize_logging()
        self._traj_infos: deque = deque(maxlen=self.log_traj_window)
        self._new_completed_trajs = 0

    def diagnostics_state_dict(self) -> dict[str, Any]:
        return dict(
            super().diagnostics_state_dict(),
            traj_infos=list(self._traj_infos),
            new_completed_trajs=self._new_completed_trajs,
        )

    def load_diagnostics_state_dict(self, state: dict[str, Any]) -> None:
        super().load_diagnostics_state_dict(state)
        self._traj_infos.clear()
        self._traj_infos.extend(state["traj_infos"])
        self._new_completed_trajs = state["new_completed_trajs"]

    def store_diagnostics(self, itr: int, traj_infos: Sequence[Any], opt_info: Any) -> None:
        self._new_completed_trajs += len(traj_infos)
        self._traj_infos.extend(traj_infos)
        super().store_diagnostics(itr, traj_infos, opt_info)

    def on_log_interval(self, itr: int) -> None:
        self.log_diagnostics(itr)

    def log_diagnostics(self, itr: int, prefix: str | None = None) -> dict[str, Any]:  # type: ignore[override]  # rlpyt's
        row = super().log_diagnostics(itr, list(self._traj_infos), prefix=prefix)
        self._new_completed_trajs = 0
        return row

    def latest_return(self) -> float | None:
        """The average return over the trajectory window, as the next log row will show it."""
        returns = [info["Return"] for info in self._traj_infos if "Return" in info]
        return sum(returns) / len(returns) if returns else None

    def extra_diagnostics(self, traj_infos: Sequence[Any] | None) -> dict[str, Any]:
        return {
            "NewCompletedTrajs": self._new_completed_trajs,
            "StepsInTrajWindow": sum(info["Length"] for info in self._traj_infos),
        }


class MinibatchRlEval(MinibatchRlBase):
    """Minibatch training that evaluates the agent before training and at every log interval.

    Trajectory statistics (``ReturnAverage`` ...) are those of the evaluation episodes run by
    ``sampler.evaluate_agent(itr)`` with the agent in eval mode; their time is not counted as training.
    """

    _eval = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.sampler.eval_n_envs == 0:
            raise ValueError(
                "MinibatchRlEval evaluates the agent, but the sampler has eval_n_envs=0. Build the sampler with "
                "eval_n_envs > 0 and eval_max_steps, or use MinibatchRl to report training episodes instead."
            )

    def initialize_logging(self) -> None:
        super().initialize_logging()
        self._cum_eval_time = 0.0
        self._last_eval_time = 0.0

    def diagnostics_state_dict(self) -> dict[str, Any]:
        return dict(
            super().diagnostics_state_dict(), cum_eval_time=self._cum_eval_time, last_eval_time=self._last_eval_time
        )

    def load_diagnostics_state_dict(self, state: dict[str, Any]) -> None:
        super().load_diagnostics_state_dict(state)
        self._cum_eval_time = state["cum_eval_time"]
        self._last_eval_time = state["last_eval_time"]

    def on_training_start(self) -> None:
        with logger.prefix("itr #0 "):
            eval_traj_infos, eval_time = self.evaluate_agent(0)
            self.log_diagnostics(0, eval_traj_infos, eval_time)

    def on_log_interval(self, itr: int) -> None:
        eval_traj_infos, eval_time = self.evaluate_agent(itr)
        self.log_diagnostics(itr, eval_traj_infos, eval_time)

    def evaluate_agent(self, itr: int) -> tuple[Sequence[Any], float]:
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

    def log_diagnostics(  # type: ignore[override]  # rlpyt's signature
        self, itr: int, eval_traj_infos: Sequence[Any], eval_time: float, prefix: str | None = None
    ) -> dict[str, Any]:
        if not eval_traj_infos and self._evaluates_at(itr):
            logger.log("WARNING: no evaluation episode finished within the sampler's eval_max_steps; raise it.")
        self._cum_eval_time += eval_time
        self._last_eval_time = eval_time
        return super().log_diagnostics(itr, eval_traj_infos, eval_time, prefix=prefix)

    def extra_diagnostics(self, traj_infos: Sequence[Any] | None) -> dict[str, Any]:
        traj_infos = traj_infos or []
        return {
            "CumTrainTime": self._cum_time - self._cum_eval_time,
            "StepsInEval": sum(info["Length"] for info in traj_infos),
            "TrajsInEval": len(traj_infos),
            "EvalTime": self._last_eval_time,
            "CumEvalTime": self._cum_eval_time,
        }
