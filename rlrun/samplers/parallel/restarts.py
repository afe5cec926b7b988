"""The restart budget of a sampler's workers, and the record of the restarts made.

A :class:`~rlrun.samplers.parallel.pool.WorkerPool` given a :class:`RestartLedger` turns a worker
fault (it raised, died, got stuck past ``worker_timeout`` or was stopped) into a restart while the
budget lasts: the ledger records the fault and logs it, the pool kills what is left of the worker and
finishes the round with the others, and the sampler drops that round and runs it again once the
replacement is up. The fault after the last allowed restart raises the usual
:class:`~rlrun.samplers.parallel.protocol.SamplerWorkerError`, its message extended by every restart
made before it (:meth:`RestartLedger.final_error`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from rlrun.samplers.parallel.protocol import SamplerWorkerError

__all__ = ["RestartLedger", "WorkerRestart", "last_line"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkerRestart:
    """One restart: which worker (and its env ranks), in which round, why, and the run's count after it."""

    worker: int
    env_ranks: tuple[int, ...]
    eval_env_ranks: tuple[int, ...]
    during: str  # "start-up", "batch 12", "evaluation 40"
    cause: str  # the error's last line
    count: int

    def describe(self) -> str:
        envs = f"env ranks {list(self.env_ranks)}"
        if self.eval_env_ranks:
            envs += f", eval env ranks {list(self.eval_env_ranks)}"
        return f"worker {self.worker} ({envs}) during {self.during}: {self.cause}"


def last_line(text: str) -> str:
    """The last non-empty line of ``text`` (a traceback's exception line)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else text


class RestartLedger:
    """Allows ``limit`` worker restarts in a run and remembers each one made (see the module docstring)."""

    def __init__(self, limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"worker_restarts must be a whole number >= 0 (0: no restarts), got {limit!r}.")
        self.limit = limit
        self.records: list[WorkerRestart] = []

    @property
    def count(self) -> int:
        """Restarts made so far."""
        return len(self.records)

    def allows(self) -> bool:
        """True while one more restart is within the budget."""
        return self.count < self.limit

    def restarts_of(self, worker: int) -> int:
        """How many times ``worker`` has been restarted (0: it is the worker first started)."""
        return sum(1 for r in self.records if r.worker == worker)

    def record(self, error: SamplerWorkerError, during: str, cause: str) -> WorkerRestart:
        """Note the fault ``error`` (to be followed by a restart) and log it."""
        restart = WorkerRestart(
            worker=error.rank,
            env_ranks=tuple(error.env_ranks),
            eval_env_ranks=tuple(error.eval_env_ranks),
            during=during,
            cause=cause,
            count=self.count + 1,
        )
        self.records.append(restart)
        _log.warning(
            "Sampler worker restart %d of worker_restarts=%d: %s. It is replaced, its envs start new episodes with "
            "new seeds, and the round is collected again.",
            restart.count,
            self.limit,
            restart.describe(),
        )
        return restart

    def final_error(self, error: SamplerWorkerError) -> SamplerWorkerError:
        """``error`` as the run's end: unchanged when no restart was made, else naming every restart."""
        if not self.records:
            return error
        made = "\n".join(f"  restart {r.count}: {r.describe()}" for r in self.records)
        detail = (
            f"{error.detail}\nThis fault came after all worker_restarts={self.limit} restarts were used:\n{made}\n"
            "Fix the cause above, or raise worker_restarts if these faults are rare and harmless."
        )
        return SamplerWorkerError(error.rank, error.env_ranks, detail, error.eval_env_ranks, error.evaluation)
