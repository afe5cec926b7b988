"""``rlrun info RUN_DIR``: what a run is, how far it got, its latest return, and the commands to go on with it.

    rlrun info data/local/20261204/101500/quick_start/run_0

It works on any run folder: one from ``rlrun train``, from a bundled example, or from a script under
``logger_context``. It reads ``run.json`` (written by the runner: its parts, planned steps and the
command line that started it), ``params.json``, ``progress.csv``, the checkpoints and a ``FAILED``
file, and prints the commands that apply to this run: how to resume it, play it and plot it.
"""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Callable

__all__ = ["add_arguments", "main", "describe_run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN_DIR", help="a run folder (the one a run printed, with progress.csv)")


def _last_row(run_dir: str) -> tuple[dict[str, str], int]:
    """The last row of ``progress.csv`` and the number of rows (``({}, 0)`` without one)."""
    from rlrun.utils.plotting import read_progress

    path = os.path.join(run_dir, "progress.csv")
    if not os.path.isfile(path):
        return {}, 0
    data = read_progress(run_dir)
    n_rows = max((len(v) for v in data.values()), default=0)
    return {k: str(v[-1]) for k, v in data.items() if v}, n_rows


def _column(row: dict[str, str], name: str) -> float | None:
    for key in (name, f"Diagnostics/{name}"):
        if key in row:
            try:
                value = float(row[key])
            except ValueError:
                return None
            return None if value != value else value  # nan: no value in that row
    return None


def _short(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1]


def describe_run(run_dir: str) -> list[str]:
    """The lines ``rlrun info`` prints for ``run_dir``; raises FileNotFoundError when it is no run folder."""
    from rlrun.cli.train import train_command_args
    from rlrun.runners.checkpoint import checkpoint_dir, list_checkpoints
    from rlrun.runners.run_record import read_run_record

    run_dir = os.path.abspath(run_dir)
    if not os.path.isdir(run_dir) or not (
        os.path.isfile(os.path.join(run_dir, "params.json")) or os.path.isfile(os.path.join(run_dir, "progress.csv"))
    ):
        raise FileNotFoundError(f"{run_dir} is not a run folder (it has no params.json or progress.csv).")
    record = read_run_record(run_dir)
    cli_args = train_command_args(run_dir)
    by_cli = cli_args is not None
    lines = [f"run: {run_dir}"]
    if record is not None:
        env = record["env_kwargs"].get("id") or record["env_kwargs"].get("game") or _short(record["env"])
        lines.append(
            f"what: {_short(record['algo'])} with {_short(record['agent'])} on {env}, {_short(record['sampler'])}, "
            f"{_short(record['runner'])}"
        )
        start = "rlrun train" if by_cli else "a script"
        first = record.get("first_start") or record
        lines.append(f"started by: {start}: {shlex.join(first['argv'])} (in {first['cwd']}, {first['started']})")
        sittings = record.get("sittings", [])
        codes = list(dict.fromkeys(s["code"] for s in sittings if "code" in s))  # distinct, in order
        if len(sittings) > 1 or codes:
            code = f"; code: {', then '.join(codes)}" if codes else ""
            lines.append(f"sittings: {len(sittings) or 1}, the latest at {record['started']}{code}")
    elif cli_args is not None:
        lines.append(f"what: {cli_args.get('algo')} on {cli_args.get('env')} (rlrun train)")
    row, n_rows = _last_row(run_dir)
    steps = _column(row, "CumSteps")
    planned = record["n_steps"] if record is not None else None
    done_steps = f"{int(steps):,}" if steps is not None else "no"
    of_planned = f" of {planned:,} ({100 * (steps or 0) / planned:.0f}%)" if planned else ""
    itr = _column(row, "Iteration")
    lines.append(
        f"progress: {n_rows} log rows, {done_steps} env steps{of_planned}"
        + (f", iteration {int(itr)}" if itr is not None else "")
    )
    returns = _column(row, "ReturnAverage")
    lines.append(
        "latest return: "
        + (f"{returns:g} (ReturnAverage of the last log row)" if returns is not None else "none logged yet")
    )
    checkpoints = list_checkpoints(checkpoint_dir(run_dir))
    failed = os.path.join(run_dir, "FAILED")
    finished = planned is not None and steps is not None and steps >= planned
    if os.path.isfile(failed):
        with open(failed, encoding="utf-8") as f:
            last = [line for line in f.read().strip().splitlines() if line.strip()][-1:]
        state = f"failed: {last[0] if last else 'see FAILED'} (traceback in {failed})"
    elif finished:
        state = "finished"
    else:
        state = "stopped before its end (interrupted, killed, or still running)"
    lines.append(f"state: {state}")
    if checkpoints:
        newest = checkpoints[-1]
        lines.append(
            f"checkpoints: {len(checkpoints)}, newest after iteration {newest.itr} ({newest.cum_steps:,} steps)"
        )
    else:
        lines.append("checkpoints: none")
    lines.append("next:")
    quoted = shlex.quote(run_dir)
    if not finished:
        if by_cli and checkpoints:
            lines.append(f"  resume: rlrun train --resume {quoted}")
        elif record is not None and checkpoints:
            again = shlex.join(["python", *record["argv"]])
            lines.append(
                f"  resume: cd {shlex.quote(record['cwd'])} && {again} with resume (the bundled examples take "
                "--resume; a script passes resume=True to logger_context and the runner: docs/checkpoints.md)"
            )
        else:
            lines.append("  resume: not possible, it wrote no checkpoint; start it again")
    playable = os.path.isfile(os.path.join(run_dir, "params.pkl")) and (
        by_cli or os.path.isfile(os.path.join(run_dir, "agent.pt"))
    )
    if playable:
        lines.append(f"  play: rlrun play {quoted}  (--video play.mp4 to record it)")
    else:
        lines.append("  play: not possible, it saved no snapshot (snapshot_mode='none')")
    lines.append(f"  plot: rlrun plot {quoted} -o {shlex.quote(os.path.join(run_dir, 'learning_curve.png'))}")
    return lines


def main(args: argparse.Namespace, write: Callable[[str], object] = print) -> int:
    import sys

    try:
        lines = describe_run(args.run)
    except FileNotFoundError as error:
        print(f"rlrun info: {error}", file=sys.stderr)
        return 2
    for line in lines:
        write(line)
    return 0
