"""Restoring a replay's arrays from a checkpoint: copies in place, so views of them stay views."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlrun.utils.collections import fields_of

__all__ = ["copy_into"]


def copy_into(dest: Any, src: Any, what: str) -> None:
    """Copy ``src`` into ``dest`` in place: arrays, or namedarraytuples of them (None fields skipped).

    A replay's arrays are views of one another (an n-step return that is the reward, a sum tree's
    leaves), so they are filled, never replaced. Refuses a shape or field mismatch, naming ``what``.
    """
    if isinstance(dest, tuple) and hasattr(dest, "_fields"):
        if fields_of(src) != dest._fields:
            raise ValueError(
                f"The checkpoint's {what} has fields {fields_of(src)}, this replay's "
                f"{dest._fields}: it was saved by a run with other env or algorithm settings."
            )
        for name, d, s in zip(dest._fields, dest, src):
            if d is not None:
                copy_into(d, s, f"{what}.{name}")
        return
    src = np.asarray(src)
    if src.shape != dest.shape:
        raise ValueError(
            f"The checkpoint's {what} has shape {src.shape}, this replay's {dest.shape}: it was saved by a "
            "run with another replay_size or batch_B."
        )
    np.copyto(dest, src)
