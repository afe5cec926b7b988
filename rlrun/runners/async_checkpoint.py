"""Checkpoints of an asynchronous run (:class:`~rlrun.runners.async_rl.AsyncRl`, ``AsyncRlEval``) and where a
resumed one starts.

An asynchronous checkpoint is written by the optimiser, in the run folder's ``checkpoints/`` with the
synchronous runners' file format (:mod:`rlrun.runners.checkpoint`), at the log rows the policy asks for,
after the last batch and when a signal stops the run. It holds the agent (model and target), the
algorithm's optimiser and update counter, the optimiser's call count, the runner's diagnostics, where
``progress.csv`` stands and the optimiser's random generators; its ``itr`` is the last batch the sampler
reported.

It does not hold the replay: the copier process keeps appending to it, so saving it would hold the
copier (and with it the sampler) for as long as gigabytes take to write, and it is the part a
synchronous DQN example leaves out too. Nor the sampler's envs, which live in the sampler process. A
resumed run starts the sampler at the batch after the checkpoint's with fresh envs and an empty replay,
and the optimiser trains again once ``min_steps_learn`` steps are back in the replay; the weights,
optimiser moments, update counter, schedules (epsilon follows the batch number) and the rows continue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rlrun.runners.checkpoint import (
    FORMAT_VERSION,
    CheckpointError,
    CheckpointInfo,
    CheckpointState,
    DiagnosticsState,
    capture_rng_state,
)
from rlrun.runners.checkpointer import Checkpointer

__all__ = ["AsyncResumePoint", "async_checkpoint_state", "find_async_resume_point"]

KIND = "async"  # the state's ``runner_kind``: a synchronous runner's checkpoint has none


@dataclass(frozen=True)
class AsyncResumePoint:
    """The checkpoint an asynchronous run continues from, and where it continues."""

    info: CheckpointInfo
    state: CheckpointState

    @property
    def start_itr(self) -> int:
        """The first sampler batch of the resumed run."""
        return self.info.itr + 1

    @property
    def opt_itr(self) -> int:
        """The optimiser's calls so far (the ``itr`` its next ``optimize_agent`` gets)."""
        return int(self.state["opt_itr"])


def async_checkpoint_state(
    itr: int,
    cum_steps: int,
    batch_size: int,
    agent: Any,
    algo: Any,
    runner: DiagnosticsState,
    log_files: dict[str, dict[str, Any]],
    opt_itr: int,
) -> CheckpointState:
    """Everything a resumed asynchronous run needs after sampler batch ``itr`` (see the module's text):
    ``runner`` is the diagnostics' state, ``log_files`` where the CSV outputs stand."""
    return CheckpointState(
        format=FORMAT_VERSION,
        runner_kind=KIND,
        itr=itr,
        cum_steps=cum_steps,
        batch_size=batch_size,
        agent=agent.state_dict(),
        algo=algo.state_dict(replay=False),
        sampler={},  # the sampler's envs live in its own process and start afresh (see above)
        runner=runner,
        logger=log_files,
        rng=capture_rng_state(),
        opt_itr=opt_itr,
    )


def find_async_resume_point(checkpointer: Checkpointer, source: Any, batch_size: int) -> AsyncResumePoint | None:
    """The newest usable checkpoint of ``source`` (None: the run folder), checked to be an asynchronous
    run's of ``batch_size`` steps per batch; None when there is none."""
    found = checkpointer.resume(source)
    if found is None:
        return None
    info, state = found
    if state.get("runner_kind") != KIND:
        raise CheckpointError(
            f"{info.path} was written by a synchronous runner (MinibatchRl, SyncRl): resume it with that runner, "
            "or start the asynchronous run in a new folder."
        )
    if state["batch_size"] != batch_size:
        raise CheckpointError(
            f"{info.path} was saved by a run of {state['batch_size']} steps per sampler batch, this one takes "
            f"{batch_size}: resume with the same batch_T and batch_B."
        )
    return AsyncResumePoint(info, state)
