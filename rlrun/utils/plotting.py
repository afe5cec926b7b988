"""Learning-curve plots from the ``progress.csv`` files runners write.

Needs matplotlib (``pip install rlrun[plotting]``); it is imported only when a plot is drawn, with
the non-interactive Agg backend so plots work on machines without a display.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Sequence

__all__ = ["read_progress", "find_column", "plot_progress"]

# The prefix runners put before their own columns (Diagnostics/CumSteps), as rlpyt did.
DIAGNOSTICS_PREFIX = "Diagnostics/"


def read_progress(path: str) -> dict[str, list[float]]:
    """Columns of a ``progress.csv`` (or of the one in the run folder ``path``) as float lists.

    Empty cells become NaN, so columns stay aligned with the iteration column.
    """
    if os.path.isdir(path):
        path = os.path.join(path, "progress.csv")
    if not os.path.exists(path):
        raise FileNotFoundError(f"No progress file at {path}; pass a run folder or its progress.csv.")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    columns: dict[str, list[float]] = {}
    for row in rows:
        for key, value in row.items():
            try:
                number = float(value) if value not in ("", None) else math.nan
            except ValueError:
                number = math.nan
            columns.setdefault(key, []).append(number)
    return columns


def find_column(columns: dict[str, list[float]], name: str) -> str | None:
    """The column called ``name``, with or without the runner's ``Diagnostics/`` prefix, or None.

    So ``"CumSteps"`` finds ``Diagnostics/CumSteps`` in rlrun's and rlpyt's files and the bare
    column in files from rlpyt's early versions, which wrote no prefix.
    """
    bare = name.removeprefix(DIAGNOSTICS_PREFIX)
    for candidate in (name, DIAGNOSTICS_PREFIX + bare, bare):
        if candidate in columns:
            return candidate
    return None


def plot_progress(
    runs: str | Sequence[str],
    out_path: str,
    y: str = "ReturnAverage",
    x: str = "CumSteps",
    labels: Sequence[str] | None = None,
    title: str | None = None,
) -> str:
    """Draw ``y`` against ``x`` for one or more run folders (or csv files) into ``out_path`` (PNG).

    Where a ``{y[:-7]}Std`` column exists next to an ``...Average`` column, a band of one standard
    deviation is shaded. ``x`` and ``y`` may leave out the ``Diagnostics/`` prefix (see
    :func:`find_column`). Returns ``out_path``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [runs] if isinstance(runs, str) else list(runs)
    labels = list(labels) if labels is not None else [os.path.basename(os.path.normpath(r)) for r in runs]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for run, label in zip(runs, labels):
        data = read_progress(run)
        x_key, y_key = find_column(data, x), find_column(data, y)
        if x_key is None or y_key is None:
            have = ", ".join(sorted(data))
            raise KeyError(f"{run}: progress has no column {y!r} or {x!r}; it has: {have}.")
        xs, ys = data[x_key], data[y_key]
        pairs = [(a, b) for a, b in zip(xs, ys) if not (math.isnan(a) or math.isnan(b))]
        if not pairs:
            continue
        px, py = zip(*pairs)
        (line,) = ax.plot(px, py, label=label)
        std_key = y_key[: -len("Average")] + "Std" if y_key.endswith("Average") else None
        if std_key and std_key in data:
            band = [(a, b, s) for a, b, s in zip(xs, ys, data[std_key]) if not any(map(math.isnan, (a, b, s)))]
            if band:
                bx, by, bs = zip(*band)
                ax.fill_between(
                    bx,
                    [m - s for m, s in zip(by, bs)],
                    [m + s for m, s in zip(by, bs)],
                    alpha=0.2,
                    color=line.get_color(),
                )
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    if len(runs) > 1:
        ax.legend()
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    fig.savefig(out_path, dpi=100)
    plt.close(fig)
    return out_path
