"""Experiment trackers that receive every logged row: Weights & Biases (the ``wandb`` extra).

A tracker gets what ``progress.csv`` gets, row by row, at the run's iteration; the logger calls it
from :func:`~rlrun.utils.logging.logger.dump_tabular`. ``logger_context(..., wandb=True)`` and
``rlrun train --wandb`` make one. Without a network, ``WANDB_MODE=offline`` keeps the run in the run
folder (``wandb/offline-run-*``) for a later ``wandb sync``. W&B's own service process writes that
file, and can finish writing it a moment (up to about a second here) after :meth:`WandbTracker.close`
returns; it is complete when the Python process exits.
"""

from __future__ import annotations

import numbers
import os
import secrets
from collections.abc import Mapping
from typing import Any

__all__ = ["WandbTracker", "WANDB_EXTRA"]

WANDB_EXTRA = "pip install 'rlrun[wandb]'"
RUN_ID_FILE = "wandb_run_id.txt"  # so that a resumed run continues the same W&B run


class WandbTracker:
    """One W&B run for one rlrun run folder: config from ``params.json``'s contents, a point per logged
    row for every numeric column, and videos. A resumed run (the same folder) continues the same W&B run.

    ``project`` defaults to ``$WANDB_PROJECT``, else ``"rlrun"``; ``init_kwargs`` go to ``wandb.init``
    (``entity``, ``tags``, ``group``, ``mode``, ...).
    """

    def __init__(
        self,
        run_dir: str,
        name: str,
        config: Mapping[str, object],
        project: str | None = None,
        **init_kwargs: Any,
    ) -> None:
        try:
            import wandb
        except ImportError as error:
            raise ImportError(f"Tracking with Weights & Biases needs wandb: {WANDB_EXTRA}.") from error
        self._wandb = wandb
        id_path = os.path.join(run_dir, RUN_ID_FILE)
        if os.path.isfile(id_path):
            with open(id_path, encoding="utf-8") as f:
                run_id = f.read().strip()
        else:
            run_id = secrets.token_hex(4)  # W&B ids are short lowercase alphanumerics
            with open(id_path, "w", encoding="utf-8") as f:
                f.write(run_id + "\n")
        self.run = wandb.init(
            project=project or os.environ.get("WANDB_PROJECT") or "rlrun",
            name=name,
            id=run_id,
            resume="allow",
            config=dict(config),
            dir=run_dir,
            **init_kwargs,
        )

    def log_row(self, row: Mapping[str, object], step: int) -> None:
        """Every real-valued column of ``row`` (names as in ``progress.csv``) at ``step``."""
        values = {k: float(v) for k, v in row.items() if isinstance(v, numbers.Real) and not isinstance(v, bool)}
        if values:
            self.run.log(values, step=step)

    def log_video(self, path: str, step: int, key: str = "video") -> None:
        """An mp4 written by :class:`~rlrun.envs.video.RecordVideo`, shown at ``step``."""
        self.run.log({key: self._wandb.Video(path, format="mp4")}, step=step)

    def close(self) -> None:
        self.run.finish()
