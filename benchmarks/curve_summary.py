"""When did a run first reach a score, and how fast did it go: one line per run folder, from its progress.csv.

    python benchmarks/curve_summary.py RUN_DIR [RUN_DIR ...] --target 18

For each run: the env steps and wall time (``CumTime (s)``, evaluation included, as a user waits for it)
of the first log row whose ``ReturnAverage`` reaches ``--target``, or "not reached"; the best and the last
``ReturnAverage``; the steps, wall time and steps per second of the whole run. Runs stopped by a
timeout still have every row they logged. Exit code 0, or 2 when a folder has no readable progress.csv.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rlrun.utils.plotting import find_column, read_progress  # noqa: E402


def read_curve(
    run_dir: str, column: str = "ReturnAverage"
) -> tuple[list[tuple[float, float, float]], list[float], list[float]]:
    """``(rows, steps, times)`` of a run's progress.csv: ``rows`` holds ``(env steps, wall seconds, column)``
    of each log row where ``column`` was logged; ``steps`` and ``times`` cover every row."""
    data = read_progress(run_dir)
    steps, times = data[str(find_column(data, "CumSteps"))], data[str(find_column(data, "CumTime (s)"))]
    rows = [(s, t, r) for s, t, r in zip(steps, times, data[column]) if not math.isnan(r)]
    return rows, steps, times


def summarise(run_dir: str, target: float, column: str = "ReturnAverage") -> str:
    rows, steps, times = read_curve(run_dir, column)
    if not rows:
        return f"{run_dir}: no {column} logged yet ({len(steps)} rows)"
    hit = next(((s, t) for s, t, r in rows if r >= target), None)
    reached = f"reached {target:g} at {hit[0]:,.0f} steps, {hit[1]:.0f} s" if hit else f"{target:g} not reached"
    best = max(r for _, _, r in rows)
    speed = steps[-1] / times[-1] if times[-1] > 0 else math.nan
    return (
        f"{run_dir}: {reached}; best {best:.1f}, last {rows[-1][2]:.1f}; "
        f"{steps[-1]:,.0f} steps in {times[-1]:.0f} s ({speed:,.0f} steps/s)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dirs", nargs="+")
    parser.add_argument("--target", type=float, required=True)
    parser.add_argument("--column", default="ReturnAverage")
    args = parser.parse_args(argv)
    code = 0
    for run_dir in args.run_dirs:
        try:
            print(summarise(run_dir, args.target, args.column))
        except (OSError, KeyError, ValueError) as error:
            print(f"{run_dir}: cannot read its progress.csv ({error})")
            code = 2
    return code


if __name__ == "__main__":
    sys.exit(main())
