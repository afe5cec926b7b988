"""Learning-curve plots from the ``progress.csv`` files runners write.

Needs matplotlib (``pip install rlrun[plotting]``); it is imported only when a plot is drawn, with
the non-interactive Agg backend so plots work on machines without a display.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["read_progress", "find_column", "plot_progress", "find_runs", "group_runs", "plot_runs"]

# The prefix runners put before their own columns (Diagnostics/CumSteps), as rlpyt did.
DIAGNOSTICS_PREFIX = "Diagnostics/"


def read_progress(path: str) -> dict[str, list[float]]:
    """Columns of a ``progress.csv`` (or of the one in the run folder ``path``) as float lists.

    Empty cells become NaN, so columns stay aligned with the iteration column; so do the cells a row
    lacks (the last row of a run killed while writing it). A row with more cells than the header is
    an error: the file was written by two processes at once, and its numbers cannot be trusted.
    """
    if os.path.isdir(path):
        path = os.path.join(path, "progress.csv")
    if not os.path.exists(path):
        raise FileNotFoundError(f"No progress file at {path}; pass a run folder or its progress.csv.")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = []
        for row in reader:
            if None in row:  # DictReader keeps the cells beyond the header under the key None
                n_header = len(reader.fieldnames or ())
                raise ValueError(
                    f"{path}, line {reader.line_num}: {n_header + len(row[None])} cells under a header of "
                    f"{n_header}. Two processes wrote this file at once (two runs given the same run folder, "
                    "or one resumed while the other still ran), so its rows cannot be trusted: start the run "
                    "again in a new folder."
                )
            rows.append(row)
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

    Next to an ``...Average`` column the band between its ``...Min`` and ``...Max`` columns is shaded
    (the spread of the episodes behind each point; it never leaves the range of returns seen), or one
    standard deviation where only ``...Std`` exists. ``x`` and ``y`` may leave out the
    ``Diagnostics/`` prefix (see :func:`find_column`). Returns ``out_path``.
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
        bounds = _episode_band(data, y_key)
        if bounds is not None:
            band = [(a, lo, hi) for a, lo, hi in zip(xs, *bounds) if not any(map(math.isnan, (a, lo, hi)))]
            if band:
                bx, blo, bhi = zip(*band)
                ax.fill_between(bx, blo, bhi, alpha=0.2, color=line.get_color(), label=BAND_LABEL)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    if len(runs) > 1 or ax.collections:  # name the runs, and say what a shaded band is
        _legend(ax)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    fig.savefig(out_path, dpi=100)
    plt.close(fig)
    return out_path


# What the shaded band around a single run's curve is: the log row's episodes, lowest to highest.
BAND_LABEL = "shaded: min to max of each row's episodes"


def _legend(ax: Axes) -> None:
    """A legend in which the band's explanation appears once, however many runs have a band."""
    handles, labels = ax.get_legend_handles_labels()
    kept, seen = [], set()
    for handle, label in zip(handles, labels):
        if label not in seen:
            seen.add(label)
            kept.append((handle, label))
    if kept:
        ax.legend(*zip(*kept), fontsize="small")


def _episode_band(data: dict[str, list[float]], y_key: str) -> tuple[list[float], list[float]] | None:
    """Lower and upper edges of the band around an ``...Average`` column: its Min and Max columns, else
    plus or minus its Std; None for other columns."""
    if not y_key.endswith("Average"):
        return None
    stem = y_key[: -len("Average")]
    if stem + "Min" in data and stem + "Max" in data:
        return data[stem + "Min"], data[stem + "Max"]
    if stem + "Std" in data:
        mean, std = data[y_key], data[stem + "Std"]
        return [m - s for m, s in zip(mean, std)], [m + s for m, s in zip(mean, std)]
    return None


def find_runs(paths: Sequence[str]) -> list[str]:
    """Run folders (folders holding a ``progress.csv``) at or below each of ``paths``, sorted; a path
    may also be a ``progress.csv`` itself."""
    runs: list[str] = []
    for path in paths:
        if os.path.isfile(path):
            runs.append(os.path.dirname(os.path.abspath(path)))
            continue
        if not os.path.isdir(path):
            raise FileNotFoundError(f"{path}: no such run folder or progress.csv.")
        found = sorted(root for root, _, files in os.walk(path) if "progress.csv" in files)
        if not found:
            raise FileNotFoundError(f"{path}: no progress.csv in it or below it; pass a run folder.")
        runs.extend(found)
    return runs


def run_name(run: str) -> str:
    """The run's ``name`` from its ``params.json`` (what ``logger_context`` was given), else its folder's name."""
    try:
        with open(os.path.join(run, "params.json")) as f:
            name = json.load(f).get("name")
    except (OSError, ValueError, AttributeError):
        name = None
    return str(name) if name else os.path.basename(os.path.normpath(run))


def group_runs(runs: Sequence[str]) -> dict[str, list[str]]:
    """Runs grouped by :func:`run_name`: the seeds of one experiment share a name."""
    groups: dict[str, list[str]] = {}
    for run in runs:
        groups.setdefault(run_name(run), []).append(run)
    return groups


def _curve(run: str, x: str, y: str) -> tuple[list[float], list[float]]:
    data = read_progress(run)
    x_key, y_key = find_column(data, x), find_column(data, y)
    if x_key is None or y_key is None:
        raise KeyError(f"{run}: progress has no column {y!r} or {x!r}; it has: {', '.join(sorted(data))}.")
    pairs = [(a, b) for a, b in zip(data[x_key], data[y_key]) if not (math.isnan(a) or math.isnan(b))]
    return [a for a, _ in pairs], [b for _, b in pairs]


def _interpolate(xs: list[float], ys: list[float], at: list[float]) -> list[float]:
    """``ys`` linearly interpolated at each of ``at`` (NaN outside ``xs``'s range)."""
    out, j = [], 0
    for a in at:
        if not xs or a < xs[0] or a > xs[-1]:
            out.append(math.nan)
            continue
        while j + 1 < len(xs) and xs[j + 1] < a:
            j += 1
        if xs[j] == a or j + 1 == len(xs):
            out.append(ys[j])
        else:
            x0, x1, y0, y1 = xs[j], xs[j + 1], ys[j], ys[j + 1]
            out.append(y0 + (y1 - y0) * (a - x0) / (x1 - x0))
    return out


def plot_runs(
    groups: Mapping[str, Sequence[str]],
    out_path: str,
    y: str = "ReturnAverage",
    xs: Sequence[str] = ("CumSteps", "CumTime (s)"),
    title: str | None = None,
) -> str:
    """One panel per column in ``xs`` (by default env steps and wall time), one curve per group.

    A group of one run is drawn as in :func:`plot_progress`. A group of several runs (seeds) is drawn
    as their mean, with the band from the lowest to the highest run at each point; runs are
    interpolated onto the union of their x values and the mean is taken where all of them have data.
    Returns ``out_path``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(xs), figsize=(6.0 * len(xs), 4.0), squeeze=False)
    for ax, x in zip(axes[0], xs):
        for name, runs in groups.items():
            curves = [_curve(run, x, y) for run in runs]
            curves = [c for c in curves if c[0]]
            if not curves:
                continue
            if len(curves) == 1:
                data = read_progress(runs[0])
                (line,) = ax.plot(*curves[0], label=name)
                y_key = find_column(data, y)
                bounds = _episode_band(data, y_key) if y_key else None
                if bounds is not None:
                    x_all = data[str(find_column(data, x))]
                    band = [(a, lo, hi) for a, lo, hi in zip(x_all, *bounds) if not any(map(math.isnan, (a, lo, hi)))]
                    if band:
                        bx, blo, bhi = zip(*band)
                        ax.fill_between(bx, blo, bhi, alpha=0.2, color=line.get_color(), label=BAND_LABEL)
                continue
            grid = sorted({a for cx, _ in curves for a in cx})
            columns = [_interpolate(cx, cy, grid) for cx, cy in curves]
            points = [(g, vals) for g, vals in zip(grid, zip(*columns)) if not any(math.isnan(v) for v in vals)]
            if not points:
                continue
            gx = [g for g, _ in points]
            (line,) = ax.plot(gx, [sum(v) / len(v) for _, v in points], label=f"{name} (mean of {len(curves)})")
            ax.fill_between(
                gx,
                [min(v) for _, v in points],
                [max(v) for _, v in points],
                alpha=0.2,
                color=line.get_color(),
                label=f"{name}: lowest to highest run",
            )
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.grid(alpha=0.3)
        _legend(ax)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    fig.savefig(out_path, dpi=100)
    plt.close(fig)
    return out_path
