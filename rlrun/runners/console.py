"""What a training loop shows a person while it runs: the progress bar and one line about the run's duration.

The log rows' console table is the logger's (the runner marks which columns it shows); this module
holds the parts that follow the iterations rather than the rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rlrun.utils.logging import logger
from rlrun.utils.logging.progress import ProgressBar

__all__ = ["Console", "format_duration"]


class Console:
    """The progress bar of one training loop, and its speed line.

    - ``n_itr``, ``itr_batch_size``: the run's iterations and env steps per iteration;
    - ``start_itr``: the first iteration this loop runs (after a resume, the one after the checkpoint's);
    - ``show_bar``: whether to draw the bar (the runner decides: rank 0, logger on, a terminal or asked for);
    - ``speed_report_after_s``: seconds of training after which the speed is measured and the run's
      duration estimated, once (or at the first log row, if that comes first).
    """

    def __init__(
        self, n_itr: int, itr_batch_size: int, start_itr: int, show_bar: bool, speed_report_after_s: float
    ) -> None:
        self.n_itr = n_itr
        self.itr_batch_size = itr_batch_size
        self.start_itr = start_itr
        self.speed_report_after_s = speed_report_after_s
        self.bar = ProgressBar(n_itr * itr_batch_size, initial=start_itr * itr_batch_size) if show_bar else None
        self.speed_reported = False
        self._start = time.perf_counter()

    def iteration_done(self, itr: int, log_due: bool, latest_return: Callable[[], float | None]) -> None:
        """Move the bar on (showing ``latest_return()``) and report the speed once it is known."""
        if self.bar is not None:
            self.bar.update(self.itr_batch_size, latest_return())
        if not self.speed_reported:
            self._report_speed(itr, time.perf_counter() - self._start, log_due)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def _report_speed(self, itr: int, elapsed: float, log_due: bool) -> None:
        """Once, the speed and how long the run will take at it, so a long run says early that it is long."""
        if elapsed < self.speed_report_after_s and not log_due:
            return
        self.speed_reported = True
        done = itr + 1 - self.start_itr
        if elapsed <= 0 or done <= 0:
            return
        speed = done * self.itr_batch_size / elapsed
        left_s = (self.n_itr - itr - 1) * self.itr_batch_size / speed
        logger.log(
            f"Speed: {speed:,.0f} steps/s over the first {done * self.itr_batch_size:,} steps; the "
            f"{self.n_itr * self.itr_batch_size:,} steps of this run take about {format_duration(left_s)} more."
        )


def format_duration(seconds: float) -> str:
    """``'42 s'``, ``'12 min'``, ``'3.4 h'`` or ``'2.1 days'``: a duration as a person reads it."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
