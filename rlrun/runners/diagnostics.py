"""What a runner's log rows are computed from: counters, times, optimiser values, the trajectory window.

A :class:`Diagnostics` is fed after each iteration (:meth:`~Diagnostics.add_trajs`,
:meth:`~Diagnostics.add_opt_info`, :meth:`~Diagnostics.itr_done`). When a row is due the runner asks it
for its own columns (:meth:`~Diagnostics.own_columns`), has it record them, the trajectory and
optimiser statistics (:meth:`~Diagnostics.record_columns`, :meth:`~Diagnostics.record_infos`) and
write the row (:meth:`~Diagnostics.write_row`). The runner's ``log_diagnostics`` and ``_log_infos``
make those calls, so they stay the hooks subclasses override. Its :meth:`~Diagnostics.state_dict` is
the runner part of a checkpoint.
"""

from __future__ import annotations

import math
import numbers
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypedDict

from typing_extensions import NotRequired

from rlrun.algos.base import OptInfoTuple
from rlrun.envs.traj_info import TrajInfo
from rlrun.utils.collections import optional_field
from rlrun.utils.logging import logger

__all__ = ["Diagnostics", "DiagnosticsState", "console_opt_stats", "traj_info_keys"]


class DiagnosticsState(TypedDict):
    """:meth:`Diagnostics.state_dict`: the runner's part of a checkpoint (times as durations, in seconds)."""

    cum_time: float
    since_last_log: float
    cum_completed_trajs: int
    last_update_counter: int
    itrs_done: int
    itrs_at_last_log: int
    opt_infos: dict[str, list[float]]
    last_diagnostics: dict[str, Any]  # the last row, as the logger wrote it
    # Checkpoints written before these were common to all runners hold only their runner's.
    new_completed_trajs: NotRequired[int]
    cum_eval_time: NotRequired[float]
    last_eval_time: NotRequired[float]
    traj_infos: NotRequired[list[TrajInfo]]  # the trajectory window, when there is one


class Diagnostics:
    """The counters and buffers behind a runner's log rows.

    - ``opt_info_fields``: the algorithm's optimiser fields; each collects values until the next row.
    - ``traj_info_keys``: the trajectory statistics every row has, also before any episode ended
      (``progress.csv`` fixes its columns at the first row).
    - ``traj_window``: how many completed trajectories the window keeps (``MinibatchRl``'s
      ``log_traj_window``), or None for no window (the evaluating runners report evaluation episodes).
    - ``itr_batch_size``, ``world_size``: env steps per iteration over all ranks, and the number of ranks.
    """

    def __init__(
        self,
        opt_info_fields: Iterable[str] = (),
        traj_info_keys: Iterable[str] = (),
        traj_window: int | None = None,
        itr_batch_size: int = 0,
        world_size: int = 1,
    ) -> None:
        self.opt_infos: dict[str, list[float]] = {k: [] for k in opt_info_fields}
        self.traj_info_keys = list(traj_info_keys)
        self.traj_window: deque[TrajInfo] | None = None if traj_window is None else deque(maxlen=traj_window)
        self.itr_batch_size = itr_batch_size
        self.world_size = world_size
        self.start_time = self.last_time = self._row_time = time.perf_counter()
        self.cum_time = 0.0
        self.cum_completed_trajs = 0
        self.new_completed_trajs = 0  # since the last row
        self.last_update_counter = 0
        self.itrs_done = 0
        self.itrs_at_last_log = 0
        self.cum_eval_time = 0.0
        self.last_eval_time = 0.0
        self.last_row: dict[str, Any] = {}

    # ---- fed after each iteration ----

    def itr_done(self, itr: int) -> None:
        self.itrs_done = itr + 1

    def add_trajs(self, traj_infos: Sequence[TrajInfo]) -> None:
        """Count completed trajectories and keep them in the window."""
        self.cum_completed_trajs += len(traj_infos)
        if self.traj_window is not None:
            self.new_completed_trajs += len(traj_infos)
            self.traj_window.extend(traj_infos)

    def add_opt_info(self, opt_info: OptInfoTuple | None) -> None:
        """Keep the values of each optimiser field (a value or a list of them) until the next row.

        ``opt_info`` is the algorithm's namedtuple of ``opt_info_fields``; a field it lacks adds nothing."""
        for key, values in self.opt_infos.items():
            new = optional_field(opt_info, key)
            if new is not None:
                values.extend(new if isinstance(new, (list, tuple)) else [new])

    def add_eval_time(self, eval_time: float) -> None:
        self.cum_eval_time += eval_time
        self.last_eval_time = eval_time

    @property
    def cum_steps(self) -> int:
        return self.itrs_done * self.itr_batch_size

    # ---- a row ----

    def own_columns(
        self, itr: int, update_counter: int, algo_batch_size: int | None, eval_time: float
    ) -> dict[str, float]:
        """The runner's columns of row ``itr`` (counters, speeds, replay ratios), in rlpyt's order.

        ``eval_time`` (s) is left out of the training speed. Rates are ``nan`` for a row with no new
        iterations (the evaluation before training). Replay ratios need an integer ``algo_batch_size``.
        """
        now = self._row_time = time.perf_counter()
        self.cum_time = now - self.start_time
        train_time = now - self.last_time - eval_time
        new_samples = (self.itrs_done - self.itrs_at_last_log) * self.itr_batch_size
        new_updates = update_counter - self.last_update_counter
        rates_valid = new_samples > 0 and train_time > 0
        cum_steps = self.cum_steps
        columns: dict[str, float] = {
            "Iteration": itr,
            "CumTime (s)": self.cum_time,
            "CumSteps": cum_steps,
            "CumCompletedTrajs": self.cum_completed_trajs,
            "CumUpdates": update_counter,
            "StepsPerSecond": new_samples / train_time if rates_valid else math.nan,
            "UpdatesPerSecond": new_updates / train_time if rates_valid else math.nan,
        }
        if isinstance(algo_batch_size, numbers.Integral) and not isinstance(algo_batch_size, bool):
            # Samples trained on per sample collected; world_size cancels in the cumulative ratio.
            trained = int(algo_batch_size) * self.world_size
            columns["ReplayRatio"] = new_updates * trained / new_samples if new_samples else math.nan
            columns["CumReplayRatio"] = update_counter * trained / cum_steps if cum_steps else math.nan
        return columns

    def window_columns(self) -> dict[str, float]:
        """``MinibatchRl``'s columns about its trajectory window."""
        window = self.traj_window if self.traj_window is not None else ()
        return {
            "NewCompletedTrajs": self.new_completed_trajs,
            "StepsInTrajWindow": sum(info["Length"] for info in window),
        }

    def record_columns(self, itr: int, columns: Mapping[str, float], prefix: str, shown: Iterable[str]) -> None:
        """Record the runner's ``columns`` of row ``itr`` with the logger, each after ``prefix``; the ones
        named in ``shown`` also go to the console table."""
        shown = set(shown)
        logger.set_iteration(itr)
        with logger.tabular_prefix(prefix):
            for key, value in columns.items():
                logger.record_tabular(key, value, console=key in shown)

    def record_infos(self, traj_infos: Sequence[TrajInfo], console_traj_stats: Mapping[str, tuple[str, ...]]) -> None:
        """Record the statistics of each trajectory field (skipping ``_`` keys) and of each optimiser field
        since the last row; the optimiser buffers start empty again. ``console_traj_stats`` names the
        statistics of each trajectory field the console shows."""
        keys = list(self.traj_info_keys)
        for info in traj_infos[:1]:
            keys += [k for k in info if not k.startswith("_") and k not in keys]
        for key in keys:
            values = [info[key] for info in traj_infos if key in info]
            logger.record_tabular_misc_stat(key, values, console=console_traj_stats.get(key, False))
        for key, values in self.opt_infos.items():
            logger.record_tabular_misc_stat(key, values, console=console_opt_stats(key))
        self.opt_infos = {k: [] for k in self.opt_infos}

    def write_row(self, update_counter: int) -> dict[str, Any]:
        """Write the row recorded since :meth:`own_columns` and return it; the next row's rates start here."""
        self.last_row = logger.dump_tabular(with_prefix=False)
        self.last_time = self._row_time
        self.last_update_counter = update_counter
        self.itrs_at_last_log = self.itrs_done
        self.new_completed_trajs = 0
        return self.last_row

    def latest_return(self) -> float | None:
        """The average return the progress bar shows: over the trajectory window when there is one (as the
        next row will show it), else the last row's; None before any episode was reported."""
        if self.traj_window is not None:
            returns = [info["Return"] for info in self.traj_window if "Return" in info]
            return sum(returns) / len(returns) if returns else None
        value = self.last_row.get("ReturnAverage")
        return None if value is None else float(value)

    # ---- checkpoints ----

    def state_dict(self) -> DiagnosticsState:
        """The counters and values behind the next rows (times as durations)."""
        now = time.perf_counter()
        state = DiagnosticsState(
            cum_time=now - self.start_time,
            since_last_log=now - self.last_time,
            cum_completed_trajs=self.cum_completed_trajs,
            last_update_counter=self.last_update_counter,
            itrs_done=self.itrs_done,
            itrs_at_last_log=self.itrs_at_last_log,
            opt_infos=self.opt_infos,
            last_diagnostics=self.last_row,
            new_completed_trajs=self.new_completed_trajs,
            cum_eval_time=self.cum_eval_time,
            last_eval_time=self.last_eval_time,
        )
        if self.traj_window is not None:
            state["traj_infos"] = list(self.traj_window)
        return state

    def load_state_dict(self, state: DiagnosticsState) -> None:
        now = time.perf_counter()
        self.start_time = now - state["cum_time"]
        self.last_time = now - state["since_last_log"]
        self.cum_time = state["cum_time"]
        self.cum_completed_trajs = state["cum_completed_trajs"]
        self.last_update_counter = state["last_update_counter"]
        self.itrs_done = state["itrs_done"]
        self.itrs_at_last_log = state["itrs_at_last_log"]
        self.opt_infos = {k: list(v) for k, v in state["opt_infos"].items()}
        self.last_row = dict(state["last_diagnostics"])
        self.new_completed_trajs = state.get("new_completed_trajs", 0)
        self.cum_eval_time = state.get("cum_eval_time", 0.0)
        self.last_eval_time = state.get("last_eval_time", 0.0)
        if self.traj_window is not None:
            self.traj_window.clear()
            self.traj_window.extend(state.get("traj_infos", ()))


def console_opt_stats(key: str) -> tuple[str, ...]:
    """The optimiser statistics a person reads on the console: the Average of losses and of the entropy."""
    name = key.lower()
    return ("Average",) if "loss" in name or name == "entropy" else ()


def traj_info_keys(TrajInfoCls: Callable[..., TrajInfo], traj_info_kwargs: Mapping[str, Any]) -> list[str]:
    """The public fields of the sampler's trajectory infos. progress.csv fixes its columns at the first row,
    which may come before any trajectory has finished; a fresh TrajInfo tells the statistics' names up front."""
    try:
        template = TrajInfoCls(**traj_info_kwargs)
    except Exception:
        template = TrajInfo()
    return [k for k in template if not k.startswith("_")]
