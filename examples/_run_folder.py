"""The run folder the bundled examples share: ``data/<experiment>/run_<ID>``, found again by ``--resume``.

A fixed folder (no date or time in it) is what lets the same command continue a run after Ctrl-C:
the runner checkpoints after every log row, and ``--resume`` loads the newest checkpoint there.
"""

from __future__ import annotations

import argparse
import glob
import os


def run_folder(experiment: str, run_ID: int, resume: bool) -> tuple[str, str]:
    """``log_dir`` and ``run_ID`` for ``logger_context``: ``data/<experiment>`` and ``run_ID``, or when
    resuming the newest of ``run_<ID>``, ``run_<ID>-2``, ... (a later fresh run of the same ID took those)."""
    log_dir = os.path.join("data", experiment)
    if not resume:
        return log_dir, str(run_ID)
    runs = glob.glob(os.path.join(log_dir, f"run_{run_ID}")) + glob.glob(os.path.join(log_dir, f"run_{run_ID}-*"))
    if not runs:  # nothing to continue: the run starts in run_<ID>
        return log_dir, str(run_ID)
    return log_dir, os.path.basename(max(runs, key=os.path.getmtime)).removeprefix("run_")


def add_resume_flag(parser: argparse.ArgumentParser) -> None:
    """``--resume``: continue ``run_<run_ID>`` from its newest checkpoint instead of starting a new run."""
    parser.add_argument(
        "--resume", action="store_true", help="continue run_<run_ID> under ./data/ from its newest checkpoint"
    )
