"""The training progress bar: env steps, steps per second, time left and the latest average return.

A runner opens one :class:`ProgressBar` for its training loop when :func:`progress_bar_wanted` says
so: on a terminal by default, never in a log file or a pipe (where a bar's carriage returns would
fill the file), and forced either way by the runner's ``progress_bar`` keyword or by the environment
variable ``RLRUN_PROGRESS`` (``1``/``on`` or ``0``/``off``). While a bar is open, the logger prints its
console lines through :func:`console_print`, so that messages and tables appear above the bar
instead of being torn by it.
"""

from __future__ import annotations

import io
import math
import os
import shutil
import sys
from typing import Any, TextIO

__all__ = ["ENV_VAR", "ProgressBar", "progress_bar_wanted", "console_print", "active_bar"]

ENV_VAR = "RLRUN_PROGRESS"
_ON = ("1", "true", "on", "yes")
_OFF = ("0", "false", "off", "no")

_active: ProgressBar | None = None


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _terminal_has_size(stream: Any) -> bool:
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):  # not a terminal
        return False
    return size.columns > 0 and size.lines > 0


def progress_bar_wanted(setting: bool | None = None) -> bool:
    """Whether to show a bar: ``setting`` when given, else ``RLRUN_PROGRESS`` when set, else whether both
    stdout and stderr are terminals (a run whose output goes to a file or a pipe gets no bar)."""
    if setting is not None:
        return bool(setting)
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    if value:
        raise ValueError(
            f"{ENV_VAR}={os.environ[ENV_VAR]!r} is not understood: set it to 1 (show the progress bar) or 0 "
            "(hide it), or unset it to show the bar on a terminal only."
        )
    return _isatty(sys.stdout) and _isatty(sys.stderr)


class ProgressBar:
    """A bar over ``total`` env steps, on stderr, starting at ``initial`` (a resumed run's steps).

    :meth:`update` after each iteration; :meth:`close` (also on errors) leaves the last state on screen.
    Only one bar is active at a time; opening a second closes the first.
    """

    def __init__(self, total: int, initial: int = 0, file: TextIO | None = None, desc: str = "train") -> None:
        global _active
        from tqdm import tqdm  # here, not at import: a run without a bar (in a log file) never loads it

        if _active is not None:
            _active.close()
        out = sys.stderr if file is None else file
        # Follow the terminal's size, except where it reports none (a fresh pseudo-terminal, some CI and
        # editor shells say 0x0, and tqdm then draws nothing at all): then $COLUMNS x $LINES, or 80x24.
        sized = _terminal_has_size(out)
        fallback = shutil.get_terminal_size()
        self._bar = tqdm(
            total=int(total),
            initial=int(initial),
            desc=desc,
            unit=" steps",
            unit_scale=True,
            dynamic_ncols=sized,
            ncols=None if sized else fallback.columns,
            nrows=None if sized else fallback.lines,
            mininterval=0.5,  # redraws at most twice a second: no cost to the training loop
            smoothing=0.1,  # the time left follows the recent speed, without jumping at each evaluation
            file=out,
        )
        self._return: float | None = None
        _active = self

    def update(self, steps: int, average_return: float | None = None) -> None:
        """Advance by ``steps`` env steps; show ``average_return`` (when known and finite) beside the speed."""
        if average_return is not None and math.isfinite(average_return) and average_return != self._return:
            self._return = average_return
            self._bar.set_postfix_str(f"return {average_return:.4g}", refresh=False)
        self._bar.update(int(steps))

    def write(self, line: str, file: TextIO | None = None) -> None:
        """Print ``line`` above the bar (to stdout by default) and redraw the bar below it."""
        out = sys.stdout if file is None else file
        self._bar.write(line, file=out)
        out.flush()  # a forced bar in a file or a pipe: keep the lines in order with the bar's

    def close(self) -> None:
        global _active
        self._bar.close()
        if _active is self:
            _active = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def active_bar() -> ProgressBar | None:
    """The bar now on screen, if any."""
    return _active


def console_print(line: str) -> None:
    """Print one console line to stdout, above the active bar when there is one."""
    if _active is not None:
        _active.write(line)
    else:
        print(line, flush=True)
