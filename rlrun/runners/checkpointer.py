"""One run's checkpoints and rlpyt snapshots, kept in the run folder the runner hands it.

The :class:`Checkpointer` decides when a checkpoint is due, writes it (and prunes the old ones), finds
the newest usable one to resume from, and writes rlpyt's snapshots (``params.pkl``, ``itr_<itr>.pkl``)
as the snapshot mode says. It reads no global state: the runner builds it at startup from its run
folder and settings (:meth:`MinibatchRlBase.make_checkpointer
<rlrun.runners.minibatch_rl_base.MinibatchRlBase.make_checkpointer>`). What goes into a checkpoint is
the runner's business; the file format is :mod:`rlrun.runners.checkpoint`'s.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from rlrun.runners import checkpoint as ckpt
from rlrun.runners.checkpoint import CheckpointInfo, CheckpointPolicy, CheckpointState
from rlrun.runners.contracts import AgentT, AlgorithmContract, SamplerContract
from rlrun.runners.diagnostics import DiagnosticsState
from rlrun.utils.logging.logger import SNAPSHOT_MODES

__all__ = ["Checkpointer", "snapshot_names"]


def snapshot_names(itr: int, mode: str, gap: int) -> list[str]:
    """The snapshot files of iteration ``itr`` under snapshot ``mode`` (see ``logger.set_snapshot_mode``)."""
    names = []
    if mode == "all" or (mode in ("gap", "last+gap") and (itr == 0 or (itr + 1) % gap == 0)):
        names.append(f"itr_{itr}.pkl")
    if mode in ("last", "last+gap"):
        names.append("params.pkl")
    return names


class Checkpointer:
    """Checkpoints in ``<run_dir>/checkpoints`` and snapshots in ``run_dir``.

    - ``run_dir``: the run folder; None for a run without one (then no checkpoints and no snapshots).
    - ``policy``: when to write checkpoints and how many to keep; None writes none (resuming still works).
    - ``snapshot_mode``, ``snapshot_gap``: which snapshots ``save_snapshot`` writes, with the meanings of
      ``logger.set_snapshot_mode`` ("none", "last", "all", "gap", "last+gap").
    """

    def __init__(
        self,
        run_dir: str | os.PathLike[str] | None,
        policy: CheckpointPolicy | None = None,
        snapshot_mode: str = "none",
        snapshot_gap: int = 1,
    ) -> None:
        if policy is not None and run_dir is None:
            raise ValueError("Checkpointer: checkpoints need a run folder to be kept in; give run_dir.")
        if snapshot_mode not in SNAPSHOT_MODES:
            raise ValueError(f"Checkpointer: unknown snapshot_mode {snapshot_mode!r}; use one of {SNAPSHOT_MODES}.")
        if isinstance(snapshot_gap, bool) or not isinstance(snapshot_gap, int) or snapshot_gap < 1:
            raise ValueError(f"Checkpointer: snapshot_gap must be a positive integer, got {snapshot_gap!r}.")
        self.run_dir = None if run_dir is None else Path(run_dir)
        self.policy = policy
        self.snapshot_mode = snapshot_mode
        self.snapshot_gap = snapshot_gap
        self.last_saved_itr: int | None = None  # the iteration of the newest checkpoint written or resumed from

    # ---- checkpoints ----

    @property
    def folder(self) -> Path:
        """Where the checkpoints are: ``<run_dir>/checkpoints``."""
        if self.run_dir is None:
            raise ValueError("Checkpointer: this run has no run folder, so it has no checkpoint folder.")
        return ckpt.checkpoint_dir(self.run_dir)

    def path(self, itr: int) -> Path:
        """The data file of iteration ``itr``'s checkpoint."""
        return ckpt.checkpoint_path(self.folder, itr)

    @property
    def keeps_replay(self) -> bool:
        """Whether a checkpoint holds the algorithm's replay buffer."""
        return self.policy is None or self.policy.replay

    def due(self, itr: int, log_interval_itrs: int, last_itr: int) -> bool:
        """Whether the policy wants a checkpoint after iteration ``itr``; always after ``last_itr``."""
        return self.policy is not None and (itr == last_itr or self.policy.due(itr, log_interval_itrs))

    def save(self, itr: int, state: CheckpointState, cum_steps: int) -> CheckpointInfo:
        """Write ``state`` as iteration ``itr``'s checkpoint, then delete those beyond the policy's ``keep_last``."""
        info = ckpt.write_checkpoint(self.folder, itr, state, cum_steps)
        ckpt.prune_checkpoints(self.folder, self.policy.keep_last if self.policy is not None else 1)
        self.last_saved_itr = itr
        return info

    def resume(self, source: str | os.PathLike[str] | None = None) -> tuple[CheckpointInfo, CheckpointState] | None:
        """The newest usable checkpoint of ``source`` (a run folder, a checkpoint folder or one checkpoint file;
        None: this run's folder) and its state, or None when there is none. A corrupt newest checkpoint is
        skipped, with a warning, for the one before."""
        if source is None:
            if self.run_dir is None:
                raise ValueError("Checkpointer: resuming this run needs its run folder; give run_dir or a source.")
            source = self.run_dir
        found = ckpt.load_latest_checkpoint(source)
        if found is not None:
            self.last_saved_itr = found[0].itr
        return found

    def run_state(
        self,
        itr: int,
        cum_steps: int,
        batch_size: int,
        parts: tuple[AgentT, AlgorithmContract[AgentT], SamplerContract],
        runner: DiagnosticsState,
        log_files: dict[str, dict[str, Any]],
    ) -> CheckpointState:
        """Everything a resumed run needs to continue after iteration ``itr``: the counters, the agent's,
        algorithm's and sampler's state (``parts``; the replay as the policy says), the runner's
        ``runner`` state, where the ``log_files`` stand, and the random generators (taken last, as they are
        when the next iteration starts)."""
        agent, algo, sampler = parts
        components = ckpt.training_state(agent, algo, sampler, replay=self.keeps_replay)
        return CheckpointState(
            format=ckpt.FORMAT_VERSION,
            itr=itr,
            cum_steps=cum_steps,
            batch_size=batch_size,
            agent=components["agent"],
            algo=components["algo"],
            sampler=components["sampler"],
            runner=runner,
            logger=log_files,
            rng=ckpt.capture_rng_state(),
        )

    def restore(
        self,
        source: str | os.PathLike[str] | None,
        batch_size: int,
        parts: tuple[AgentT, AlgorithmContract[AgentT], SamplerContract],
    ) -> tuple[CheckpointInfo, CheckpointState] | None:
        """Load the newest usable checkpoint of ``source`` (see :meth:`resume`) into the agent, algorithm
        and sampler (``parts``) and put back the random generators; return it and its state (whose
        ``runner`` and ``logger`` parts are the caller's), or None when there is none.

        A checkpoint of another ``batch_size`` (env steps per iteration) is refused."""
        found = self.resume(source)
        if found is None:
            return None
        info, state = found
        if state["batch_size"] != batch_size:
            raise ckpt.CheckpointError(
                f"{info.path} was saved by a run of {state['batch_size']} steps per iteration, this one takes "
                f"{batch_size}: resume with the same batch_T, batch_B and world size."
            )
        ckpt.load_training_state(state, *parts)
        ckpt.restore_rng_state(state["rng"])
        return found

    def load(self, info: CheckpointInfo) -> CheckpointState:
        """The state of the checkpoint ``info`` names, checked against its manifest."""
        return ckpt.load_checkpoint(info)

    # ---- rlpyt's snapshots ----

    def wants_snapshot(self, itr: int) -> bool:
        """Whether :meth:`save_snapshot` writes a file for iteration ``itr`` (so the caller can skip building it)."""
        return self.run_dir is not None and bool(snapshot_names(itr, self.snapshot_mode, self.snapshot_gap))

    def save_snapshot(self, itr: int, params: dict[str, Any]) -> list[Path]:
        """Save ``params`` with ``torch.save`` to the files the snapshot mode names; return their paths.

        Each file is written to a temporary name and renamed, so a crash never leaves a truncated one."""
        if self.run_dir is None:
            return []
        paths = []
        for name in snapshot_names(itr, self.snapshot_mode, self.snapshot_gap):
            path = self.run_dir / name
            tmp = path.with_name(f"{name}.tmp")
            torch.save(params, tmp)
            os.replace(tmp, path)
            paths.append(path)
        return paths
