"""Finding and loading the snapshots a run saved (``params.pkl``, ``itr_<N>.pkl``), to use its agent later."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import torch

__all__ = ["snapshot_path", "load_snapshot"]

_ITR_FILE = re.compile(r"itr_(\d+)\.pkl")


def snapshot_path(run_dir: str | os.PathLike[str]) -> Path:
    """The newest snapshot of a run folder: ``params.pkl`` (snapshot modes "last", "last+gap"), else the
    ``itr_<N>.pkl`` with the largest N ("all", "gap"). A snapshot file is returned as it is."""
    path = Path(run_dir)
    if path.is_file():
        return path
    if not path.is_dir():
        raise FileNotFoundError(f"{path} is neither a run folder nor a snapshot file.")
    if (path / "params.pkl").is_file():
        return path / "params.pkl"
    numbered = [(int(m.group(1)), p) for p in path.iterdir() if (m := _ITR_FILE.fullmatch(p.name))]
    if not numbered:
        raise FileNotFoundError(
            f"{path} holds no snapshot (params.pkl or itr_<N>.pkl): the run was logged with snapshot_mode='none'. "
            "Run it with logger_context(..., snapshot_mode='last') to keep its agent."
        )
    return max(numbered)[1]


def load_snapshot(run_dir: str | os.PathLike[str], map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """The newest snapshot of ``run_dir`` (or that snapshot file): a dict with ``itr``, ``cum_steps``,
    ``agent_state_dict`` and ``optimizer_state_dict``, its tensors on ``map_location``.

    Only tensors and plain values are unpickled (``weights_only``), so loading a snapshot runs no code.
    """
    snapshot: dict[str, Any] = torch.load(snapshot_path(run_dir), map_location=map_location, weights_only=True)
    return snapshot
