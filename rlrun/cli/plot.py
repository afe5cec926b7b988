"""``rlrun plot RUN_DIR... -o curve.png``: learning curves from runs' ``progress.csv`` files.

Each argument is a run folder, a ``progress.csv``, or a folder searched for run folders. Runs that
share a name (the ``name`` given to ``logger_context``, kept in ``params.json``: the seeds of one
experiment) are drawn as one curve, their mean, with a band from the lowest to the highest run; a
name with one run shows the band of its evaluation episodes (their Min and Max). One panel plots
against env steps, one against wall time.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from rlrun.utils.plotting import find_runs, group_runs, plot_runs

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs", nargs="+", metavar="RUN_DIR", help="run folders, progress.csv files, or folders holding runs"
    )
    parser.add_argument("-o", "--out", default="learning_curve.png", help="the PNG to write (default: %(default)s)")
    parser.add_argument("--y", default="ReturnAverage", help="the column to plot (default: %(default)s)")
    parser.add_argument(
        "--x",
        nargs="+",
        default=["CumSteps", "CumTime (s)"],
        help="one panel per column (default: steps and wall time)",
    )
    parser.add_argument("--separate", action="store_true", help="one curve per run instead of one per name")
    parser.add_argument("--title", default=None)


def main(args: argparse.Namespace, write: Callable[[str], object] = print) -> int:
    runs = find_runs(args.runs)
    groups = {run: [run] for run in runs} if args.separate else group_runs(runs)
    out = plot_runs(groups, args.out, y=args.y, xs=args.x, title=args.title)
    summary = ", ".join(f"{name} ({len(members)} run{'s' * (len(members) > 1)})" for name, members in groups.items())
    write(f"{out}: {args.y} of {summary}")
    return 0
