"""Stopping a training run cleanly on Ctrl-C (SIGINT) or SIGTERM.

While :class:`StopSignals` is active (the runner's ``train()``, in the main thread), the first SIGINT
or SIGTERM only asks the run to stop: the runner finishes the iteration in progress, writes a
checkpoint, stops the sampler's workers and raises :class:`TrainingInterrupted`. A second signal
abandons the iteration at once (the latest checkpoint written before stays the one to resume from).

What the caller sees: a :class:`TrainingInterrupted`, which is also a ``SystemExit`` whose code is
``128 + signum`` (the shell's convention): 130 after SIGINT, 143 after SIGTERM. Uncaught, Python exits
with that status without a traceback (the runner has logged what happened). After SIGINT it is also a
``KeyboardInterrupt``, so ``except KeyboardInterrupt`` around ``train()`` goes on working. It carries
``signum``, ``itr`` (the last finished iteration, or None) and ``checkpoint`` (the path written, or None).
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any

__all__ = ["TrainingInterrupted", "StopSignals", "interrupted_error", "STOP_SIGNALS"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class TrainingInterrupted(SystemExit):
    """Training stopped by a signal; ``code`` (the exit status when uncaught) is ``exit_code``,
    ``128 + signum`` (130 for SIGINT, 143 for SIGTERM)."""

    signum: int
    itr: int | None
    checkpoint: str | None

    def _fill(self, signum: int, itr: int | None, checkpoint: str | None) -> None:
        self.signum, self.itr, self.checkpoint = int(signum), itr, checkpoint

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def __str__(self) -> str:
        name = signal.Signals(self.signum).name
        where = "before the first iteration" if self.itr is None else f"after iteration {self.itr}"
        saved = f"checkpoint {self.checkpoint}" if self.checkpoint else "no new checkpoint"
        return f"Training interrupted by {name} {where} ({saved}); exit status {self.exit_code}."


class KeyboardTrainingInterrupted(TrainingInterrupted, KeyboardInterrupt):
    """After SIGINT: caught by ``except KeyboardInterrupt`` too."""


def interrupted_error(signum: int, itr: int | None = None, checkpoint: str | None = None) -> TrainingInterrupted:
    """The exception for a run stopped by ``signum``."""
    cls = KeyboardTrainingInterrupted if signum == signal.SIGINT else TrainingInterrupted
    error = cls(128 + int(signum))  # SystemExit's code is its first argument
    error._fill(signum, itr, checkpoint)
    return error


class StopSignals:
    """A context in which SIGINT and SIGTERM ask for a stop (``requested``) instead of raising at once.

    A second signal raises :func:`interrupted_error` from wherever the main thread is. Outside the main
    thread (where Python cannot handle signals), or with ``enabled=False`` (a SyncRl rank other than 0,
    which its master stops), it does nothing. The previous handlers come back on exit.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.requested: int | None = None
        self.enabled = enabled
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if self.enabled and threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        # Only a flag: the handler runs between two bytecodes of whatever the main thread does.
        if self.requested is None:
            self.requested = signum
            return
        raise interrupted_error(signum)
