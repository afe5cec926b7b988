"""The curves behind docs/results.md: record them, then draw the page's plots and compute its table.

    python benchmarks/results_page.py record --env CartPole-v1 --algo ppo --seeds 0 1 2
    python benchmarks/results_page.py record --env Pendulum-v1 --algo sac --seeds 0 1 2
    python benchmarks/results_page.py table      # the table's numbers, from the committed curves
    python benchmarks/results_page.py plots      # docs/img/results/*.png, drawn by `rlrun plot`

``record`` trains rlrun with the settings of the benchmark that measured each pair first
(``learning_cartpole.py``: CartPole-v1 PPO, A2C, DQN and C51, 10 greedy episodes every 5,000 steps;
``learning_pendulum.py``: Pendulum-v1 SAC, TD3 and DDPG, 10 episodes every 1,000 steps) and keeps, per seed, only what the
page needs: ``curves/<env>-<algo>/seed<k>/progress.csv`` with the env steps, the training wall time
(evaluation excluded) and the evaluation's average return, and a ``params.json`` beside it with the run's
name (the label ``rlrun plot`` draws), the command, the commit and the machine's load. The folder layout is
a run folder's, so ``rlrun plot`` reads the curves as it reads any run. The Pong curves are the rows of
their reports' tables, transcribed (``params.json`` names the report).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CURVES = os.path.join(HERE, "results", "curves")
PLOTS = os.path.join(ROOT, "docs", "img", "results")
COLUMNS = ("CumSteps", "CumTrainTime", "ReturnAverage")  # bare names: rlrun's plotting finds them as they are
# The wall time is training only (sampling and optimisation), as the benchmarks report it: evaluation excluded.


@dataclass(frozen=True)
class Pair:
    """One (env, algorithm) row of the page: its budget, evaluation interval and threshold.

    ``reports`` names the committed reports whose tables the transcribed curves copy, one a seed (Pong: the
    runs' own ``progress.csv`` files were not kept; each seed's ``params.json`` names its report); such a
    pair cannot be recorded here. ``runs`` names the script
    that trains a pair as resumable ``rlrun train`` runs over several sittings (MuJoCo at 100k steps), whose
    run folders :func:`import_run` turns into curves. ``x`` is the curve's
    first column: env steps, or Atari frames (4 per agent step) where the report counts frames.
    """

    env: str
    algo: str
    n_steps: int
    eval_every: int
    threshold: float
    x: str = "CumSteps"
    reports: tuple[str, ...] = ()
    runs: str | None = None  # the script whose ``rlrun train`` runs are imported (``import_run``), if not ``record``


PAIRS = {
    (pair.env, pair.algo): pair
    for pair in (
        Pair("CartPole-v1", "ppo", 100_000, 5000, 475.0),
        Pair("CartPole-v1", "a2c", 100_000, 5000, 475.0),
        Pair("CartPole-v1", "dqn", 50_000, 5000, 475.0),
        Pair("CartPole-v1", "catdqn", 50_000, 5000, 475.0),
        Pair("Pendulum-v1", "sac", 20_000, 1000, -200.0),
        Pair("Pendulum-v1", "td3", 20_000, 1000, -200.0),
        Pair("Pendulum-v1", "ddpg", 20_000, 1000, -300.0),
        Pair("HalfCheetah-v5", "sac", 100_000, 10_000, 3000.0, runs="benchmarks/mujoco_seeds.py"),
        Pair("HalfCheetah-v5", "td3", 100_000, 10_000, 3000.0, runs="benchmarks/mujoco_seeds.py"),
        Pair("Hopper-v5", "sac", 100_000, 10_000, 1000.0, runs="benchmarks/mujoco_seeds.py"),
        Pair("Hopper-v5", "td3", 100_000, 10_000, 1000.0, runs="benchmarks/mujoco_seeds.py"),
        Pair(
            "Pong", "ppo-cleanrl", 10_000_000, 1_000_000, 15.0, x="Frames",
            reports=("benchmarks/results/2026-12-03-2cpu-vm-pong-ppo-cleanrl-schedule.md",),
        ),
        Pair(
            "Pong", "ppo-cleanrl-84x84", 10_000_000, 1_000_000, 15.0, x="Frames",
            reports=(
                "benchmarks/results/2026-12-05-2cpu-vm-pong-ppo-cleanrl-84x84-seed1.md",
                "benchmarks/results/2026-12-05-2cpu-vm-pong-ppo-cleanrl-84x84-seed2.md",
                "benchmarks/results/2026-12-06-2cpu-vm-pong-ppo-cleanrl-84x84-seed0.md",
            ),
        ),
        Pair(
            "Pong", "a2c-baselines", 20_000_000, 1_000_000, 15.0, x="Frames",
            reports=("benchmarks/results/2026-12-03-2cpu-vm-pong-a2c-baselines.md",),
        ),
    )
}  # fmt: skip


def curve_dir(env: str, algo: str, seed: int, root: str = CURVES) -> str:
    return os.path.join(root, f"{env}-{algo}", f"seed{seed}")


# ---------------------------------------------------------------------------------------------------
# The table's arithmetic (unit-tested on a fixture: tests/benchmarks/test_results_page.py)


Curve = list[tuple[float, float, float]]  # (env steps, train wall seconds, evaluation return) per evaluation


def read_curve(path: str, x: str = "CumSteps") -> Curve:
    """``(x, wall, return)`` rows of a curve file (or of the ``progress.csv`` in the folder ``path``);
    ``x`` is the column of env steps (or of frames)."""
    if os.path.isdir(path):
        path = os.path.join(path, "progress.csv")
    with open(path, newline="") as f:
        return [(float(row[x]), float(row[COLUMNS[1]]), float(row[COLUMNS[2]])) for row in csv.DictReader(f)]


def first_crossing(curve: Curve, threshold: float) -> tuple[float, float] | None:
    """Steps and wall time of the first evaluation at or above ``threshold``, or None if none got there.

    The evaluation before any training (step 0) does not count: a random policy cannot solve these tasks,
    and the benchmarks that first measured them count from the first trained evaluation too.
    """
    for steps, wall, ret in curve:
        if steps > 0 and ret >= threshold:
            return steps, wall
    return None


@dataclass(frozen=True)
class Row:
    """What the page's table says about one (env, algorithm) over its seeds."""

    seeds: tuple[int, ...]
    budget: float  # the env steps every seed trained for (the smallest, if a run stopped early)
    final_mean: float
    final_std: float  # sample standard deviation over seeds (0 for one seed)
    final_min: float
    final_max: float
    n_reached: int
    median_steps_to_threshold: float | None  # over seeds; None unless every seed reached the threshold
    median_wall_to_threshold: float | None
    median_wall: float  # whole runs' training wall time


def summarize(curves: dict[int, Curve], threshold: float) -> Row:
    """The table's numbers for one (env, algorithm) from its seeds' curves (``{seed: curve}``)."""
    if not curves or any(not curve for curve in curves.values()):
        raise ValueError("summarize needs at least one seed, and a curve with at least one evaluation per seed.")
    seeds = tuple(sorted(curves))
    finals = [curves[s][-1][2] for s in seeds]
    crossings = [first_crossing(curves[s], threshold) for s in seeds]
    reached = [c for c in crossings if c is not None]
    every = len(reached) == len(seeds)
    return Row(
        seeds=seeds,
        budget=min(curves[s][-1][0] for s in seeds),
        final_mean=statistics.mean(finals),
        final_std=statistics.stdev(finals) if len(finals) > 1 else 0.0,
        final_min=min(finals),
        final_max=max(finals),
        n_reached=len(reached),
        median_steps_to_threshold=statistics.median(c[0] for c in reached) if every else None,
        median_wall_to_threshold=statistics.median(c[1] for c in reached) if every else None,
        median_wall=statistics.median(curves[s][-1][1] for s in seeds),
    )


def duration(seconds: float) -> str:
    """``"42 s"`` under ten minutes, ``"140 min"`` above: the precision a wall time on a shared machine has."""
    return f"{seconds:,.0f} s" if seconds < 600 else f"{seconds / 60:,.0f} min"


def count(steps: float) -> str:
    """``"19,456"``, or ``"5.1M"`` from a million on (the Pong reports give frames to 0.1M)."""
    return f"{steps:,.0f}" if steps < 1_000_000 else f"{steps / 1e6:.1f}M"


def format_row(pair: Pair, row: Row, machine: str, source: str) -> str:
    """One markdown row: env, algorithm, seeds, budget, final return (mean ± std, lowest to highest), seeds
    reaching the threshold and their median steps and wall time to it, the machine and the source."""
    unit = "frames" if pair.x == "Frames" else "steps"
    seeds = ", ".join(str(s) for s in row.seeds)
    if len(row.seeds) == 1:
        final = f"{row.final_mean:,.1f} (one seed)"
    else:
        final = f"{row.final_mean:,.1f} ± {row.final_std:,.1f} ({row.final_min:,.1f} to {row.final_max:,.1f})"
    reached = f"{row.n_reached}/{len(row.seeds)}"
    steps = "-" if row.median_steps_to_threshold is None else count(row.median_steps_to_threshold)
    wall = "-" if row.median_wall_to_threshold is None else duration(row.median_wall_to_threshold)
    return (
        f"| {pair.env} | {pair.algo} | {seeds} | {count(row.budget)} {unit} | {final} | {pair.threshold:g}: "
        f"{reached}, {steps} | {wall} ({duration(row.median_wall)}) | {machine} | {source} |"
    )


def machine_of(runs: list[dict]) -> str:
    """The machine column for the seeds of one pair (their ``params.json`` contents)."""
    if all("load_average_before" in p for p in runs):
        loads = [p[key][0] for p in runs for key in ("load_average_before", "load_average_after")]
        low, high = f"{min(loads):.0f}", f"{max(loads):.0f}"
        return f"2-core VM, shared: load {low}" + (f"-{high}" if high != low else "")
    machines = list(dict.fromkeys(str(p.get("machine", "")) for p in runs))
    if len(machines) == 1:
        return machines[0]
    return "; ".join(f"seed {p.get('seed', '?')}: {p.get('machine', '')}" for p in runs)  # each seed's own


def load_pair(pair: Pair, root: str = CURVES) -> dict[int, Curve]:
    """``{seed: curve}`` of every seed recorded for ``pair`` under ``root``."""
    folder = os.path.join(root, f"{pair.env}-{pair.algo}")
    seeds = sorted(int(name.removeprefix("seed")) for name in os.listdir(folder) if name.startswith("seed"))
    return {seed: read_curve(curve_dir(pair.env, pair.algo, seed, root), pair.x) for seed in seeds}


HEADER = [
    "| env | algo | seeds | budget | final return: mean ± std (lowest to highest) | threshold: seeds reaching it, "
    "median steps to it | median wall to it (whole run) | machine | source |",
    "|---|---|---|---|---|---|---|---|---|",
]


def table(root: str = CURVES, pairs: Sequence[Pair] = tuple(PAIRS.values())) -> list[str]:
    """The markdown table of every pair with curves under ``root``."""
    lines = list(HEADER)
    for pair in pairs:
        folder = os.path.join(root, f"{pair.env}-{pair.algo}")
        if not os.path.isdir(folder):
            continue
        curves = load_pair(pair, root)
        params = []
        for seed in curves:
            with open(os.path.join(curve_dir(pair.env, pair.algo, seed, root), "params.json")) as f:
                params.append(json.load(f))
        source = ", ".join(f"`{r}`" for r in pair.reports) if pair.reports else f"`{os.path.relpath(folder, ROOT)}/`"
        lines.append(format_row(pair, summarize(curves, pair.threshold), machine_of(params), source))
    return lines


# ---------------------------------------------------------------------------------------------------
# Plots: one per env and algorithm, every seed a curve, drawn by `rlrun plot`


def plot_commands(root: str = CURVES, out_dir: str = PLOTS) -> list[list[str]]:
    """The ``rlrun plot`` command line (as ``python -m rlrun plot``) for each recorded (env, algorithm)."""
    commands = []
    for pair in PAIRS.values():
        folder = os.path.join(root, f"{pair.env}-{pair.algo}")
        if not os.path.isdir(folder):
            continue
        out = os.path.join(out_dir, f"{pair.env}-{pair.algo}.png".lower())
        what = "training return, last 100 episodes" if pair.reports else "evaluation return"
        title = f"{pair.algo} on {pair.env}: every seed ({what})"
        command = [sys.executable, "-m", "rlrun", "plot", folder, "-o", out, "--x", pair.x, "CumTrainTime"]
        command += ["--title", title]
        commands.append(command)
    return commands


def run_plot(command: list[str]) -> str:
    """Run one ``rlrun plot`` command with this checkout's rlrun; returns what it printed."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    return subprocess.run(command, check=True, capture_output=True, text=True, env=env, timeout=120).stdout


# ---------------------------------------------------------------------------------------------------
# Recording


def _runner(pair: Pair, seed: int):
    """The runner the first benchmark of this pair built, with its settings."""
    if pair.env == "CartPole-v1":
        from rlrun.experiments.configs.cartpole import build_runner

        return build_runner(
            pair.algo,
            seed=seed,
            n_steps=pair.n_steps,
            log_interval_steps=pair.eval_every,
            affinity=dict(master_torch_threads=1),
            eval_n_envs=10,  # as learning_cartpole.py: one whole episode per eval env
        )
    if pair.env == "Pendulum-v1":
        from rlrun.experiments.configs.mujoco.qpg.pendulum import build_runner as build_pendulum

        return build_pendulum(pair.algo, seed=seed, n_steps=pair.n_steps, log_interval_steps=pair.eval_every)
    if pair.runs is not None:
        raise ValueError(f"{pair.env} {pair.algo}: trained by {pair.runs} over several sittings, not recorded here.")
    raise ValueError(f"{pair.env} {pair.algo}: transcribed from {', '.join(pair.reports)}, not recorded here.")


def _commit() -> str:
    out = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip()


def write_curve(out: str, data: dict[str, list[float]], params: dict[str, object]) -> str:
    """Write a curve folder: ``progress.csv`` with :data:`COLUMNS` taken from a run's progress ``data``
    (as :func:`rlrun.utils.plotting.read_progress` returns it), and ``params`` as ``params.json``."""
    from rlrun.utils.plotting import find_column

    columns = [data[str(find_column(data, name))] for name in COLUMNS]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "progress.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        for steps, wall, ret in zip(*columns):
            if ret == ret:  # NaN: a log row without an evaluation
                writer.writerow([int(steps), f"{wall:.2f}", f"{ret:.2f}"])
    with open(os.path.join(out, "params.json"), "w") as f:
        json.dump(params, f, indent=1)
        f.write("\n")
    return out


def record(env: str, algo: str, seed: int, root: str = CURVES) -> str:
    """Train one seed and write its curve folder; returns the folder."""
    import torch

    from rlrun.utils.logging import logger
    from rlrun.utils.logging.context import logger_context
    from rlrun.utils.plotting import read_progress

    pair = PAIRS[env, algo]
    torch.set_num_threads(1)
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    runner = _runner(pair, seed)
    with tempfile.TemporaryDirectory() as tmp:
        with logger.quiet_console(), logger_context(tmp, seed, f"{algo}_{env}", {}, override_prefix=True) as run_dir:
            runner.train()
        data = read_progress(run_dir)
    command = f"python benchmarks/results_page.py record --env {env} --algo {algo} --seeds {seed}"
    params = _params(
        env, algo, seed, command, started, f"{os.cpu_count()}-core VM, torch {torch.__version__}, 1 torch thread"
    )
    params["load_average_before"] = [round(x, 2) for x in load_before]
    params["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return write_curve(curve_dir(env, algo, seed, root), data, params)


def import_run(env: str, algo: str, seed: int, run_dir: str, machine: str, root: str = CURVES) -> str:
    """Turn a finished ``rlrun train`` run folder of a ``runs`` pair into its curve folder; returns the folder.

    Refuses a run that stopped short of the pair's budget, so that every seed of a row has the same budget.
    """
    from rlrun.utils.plotting import find_column, read_progress

    pair = PAIRS[env, algo]
    data = read_progress(run_dir)
    steps = data[str(find_column(data, "CumSteps"))]
    if not steps or steps[-1] < pair.n_steps:
        done = int(steps[-1]) if steps else 0
        raise ValueError(f"{run_dir}: {done:,} of {pair.n_steps:,} steps; finish it first (`{pair.runs} run`).")
    with open(os.path.join(run_dir, "run.json")) as f:
        record = json.load(f)
    started = (record.get("first_start") or record).get("started", "")  # a resumed run: its very first start
    codes = list(dict.fromkeys(s["code"] for s in record.get("sittings", []) if "code" in s))
    out = curve_dir(env, algo, seed, root)
    commit = ", then ".join(codes) if codes else _earlier_commit(out, started)
    command = f"python {pair.runs} run --out-dir OUT_DIR (this seed: {os.path.basename(run_dir)})"
    return write_curve(out, data, _params(env, algo, seed, command, started, machine, commit))


def _earlier_commit(curve: str, started: str) -> str:
    """For a run whose ``run.json`` predates code versions: the commit an earlier import of the same run
    recorded (kept by hand where it was known), else says it is unknown, rather than naming today's commit."""
    try:
        with open(os.path.join(curve, "params.json")) as f:
            earlier = json.load(f)
    except FileNotFoundError:
        return "not recorded by the run"
    same_run = earlier.get("started") == started
    return str(earlier["commit"]) if same_run and "commit" in earlier else "not recorded by the run"


def _params(
    env: str, algo: str, seed: int, command: str, started: str, machine: str, commit: str | None = None
) -> dict[str, object]:
    """A curve's ``params.json``: ``name`` is the label ``rlrun plot`` draws; ``commit`` the code that made it
    (by default this checkout's, for a curve trained here and now)."""
    return dict(
        name=f"{algo} seed {seed}", env=env, algo=algo, seed=seed, command=command,
        commit=_commit() if commit is None else commit, started=started, machine=machine,
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="train seeds and keep their curves")
    rec.add_argument("--env", required=True, choices=sorted({env for env, _ in PAIRS}))
    rec.add_argument("--algo", required=True, choices=sorted({algo for _, algo in PAIRS}))
    rec.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    rec.add_argument("--again", action="store_true", help="re-run seeds that already have a curve")
    sub.add_parser("table", help="print the table's rows from the committed curves")
    sub.add_parser("plots", help="draw docs/img/results/*.png with rlrun plot")
    args = parser.parse_args(argv)
    if args.command == "record":
        pair = PAIRS.get((args.env, args.algo))
        if pair is None or pair.reports or pair.runs is not None:
            recordable = sorted(key for key, p in PAIRS.items() if not p.reports and p.runs is None)
            parser.error(f"{args.env} {args.algo} cannot be recorded here; choose one of {recordable}")
        for seed in args.seeds:
            if not args.again and os.path.exists(os.path.join(curve_dir(args.env, args.algo, seed), "params.json")):
                print(f"{curve_dir(args.env, args.algo, seed)}: recorded already (--again re-runs it)", flush=True)
                continue
            t0 = time.time()
            out = record(args.env, args.algo, seed)
            row = summarize({seed: read_curve(out)}, pair.threshold)
            print(
                f"{out}: final {row.final_mean:.1f}, reached in {row.n_reached}/1, {time.time() - t0:.0f} s", flush=True
            )
    elif args.command == "table":
        print("\n".join(table()))
    else:
        for command in plot_commands():
            print(run_plot(command), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
