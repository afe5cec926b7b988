"""The CPU benchmark suite in one command, written up as a Markdown report with a plot of the ratios.

Every benchmark here measures rlrun beside a peer or a bound in the same run and prints ratios; this script
runs each as a subprocess with a time limit, keeps its whole output, pulls its headline ratios out, and
writes ``benchmarks/results/<date>-<machine>.md`` (and ``...-ratios.png``) with the machine's facts: cores,
load before and after each step, torch threads, and the versions of the libraries compared.

    python benchmarks/run_all.py                   # the suite (about 15-20 minutes on an idle 2-core machine)
    python benchmarks/run_all.py --only framework_overhead,atari_env_speed
    python benchmarks/run_all.py --quick --out-dir /tmp/bench   # a smoke run of every step, seconds each

Absolute rates on a shared machine are noise; the ratios, measured side by side within one step, are the
figures to read. A step that fails or times out is reported as such and the others still run.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib.metadata
import os
import platform
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclasses.dataclass(frozen=True)
class Headline:
    """One figure a step prints: found by ``pattern`` (its first group), compared with ``target``."""

    label: str
    pattern: str
    target: float | None = None
    higher_is_better: bool = True

    def find(self, output: str) -> float | None:
        matches = re.findall(self.pattern, output, re.MULTILINE)
        return float(matches[-1].replace(",", "")) if matches else None

    def met(self, value: float | None) -> bool | None:
        if value is None or self.target is None:
            return None
        return value >= self.target if self.higher_is_better else value <= self.target


@dataclasses.dataclass(frozen=True)
class Step:
    name: str
    args: tuple[str, ...]
    quick_args: tuple[str, ...]
    headlines: tuple[Headline, ...]
    timeout: float = 600.0
    what: str = ""
    quick_timeout: float = 300.0


STEPS: tuple[Step, ...] = (
    Step(
        "framework_overhead",
        ("benchmarks/framework_overhead.py",),
        ("--repeats", "1", "--seconds", "0.3", "--batch-T", "8"),
        (Headline("SerialSampler / bare loop (CartPole, B=8)", r"rlrun / bare: ([\d.]+)", 0.85),),
        timeout=180,
        what="what collectors and buffers cost per env step",
    ),
    Step(
        "atari_env_speed",
        ("benchmarks/atari_env_speed.py",),
        ("--seconds", "0.3", "--repeats", "1"),
        (Headline("AtariEnv / raw ALE (Pong frames/s)", r"ratio AtariEnv / raw ALE.*: ([\d.]+)", 0.90),),
        timeout=180,
        what="rlrun's Atari env against the bare emulator",
    ),
    Step(
        "step_check_cost",
        ("benchmarks/step_check_cost.py",),
        ("--seconds", "0.2", "--repeats", "1", "--warmup", "0.1"),
        (
            Headline(
                "per-step checks, % of Pong's env step",
                r"Pong: the checks cost ([\d.]+)% of AtariEnv",
                3.0,
                higher_is_better=False,
            ),
        ),
        timeout=300,
        what="the bad-value checks on the hot path",
    ),
    Step(
        "sampler_speed",
        ("benchmarks/sampler_speed.py", "--only", "serial,cpu,alternating,gym_sync,gym_async"),
        ("--seconds", "0.3", "--repeats", "1", "--warmup", "0.2", "--only", "serial,cpu"),
        (
            Headline("CpuSampler / SerialSampler (Pong, B=16)", r"CpuSampler / SerialSampler\s+([\d.]+)", 1.7),
            Headline("CpuSampler / AsyncVectorEnv", r"CpuSampler / AsyncVectorEnv\s+([\d.]+)", 2.0),
            Headline("CpuSampler / 2-core ceiling", r"CpuSampler / ceiling\s+([\d.]+)", 0.85),
            Headline("AlternatingSampler / CpuSampler", r"AlternatingSampler / CpuSampler\s+([\d.]+)", 0.95),
        ),
        timeout=600,
        what="samplers beside Gymnasium's vector envs and the cores' ceiling",
    ),
    Step(
        "auto_layout",
        ("benchmarks/auto_layout.py",),
        ("--quick", "--only", "cartpole,busy2ms"),
        (
            Headline(
                "sampler=auto / best layout measured (least over workloads)",
                r"auto's least share of the best: ([\d.]+)",
                0.95,
            ),  # fmt: skip
            Headline(
                "largest prediction error, %", r"largest prediction error: ([\d.]+)%", 20.0, higher_is_better=False
            ),  # fmt: skip
        ),
        timeout=900,
        what="sampler=auto's choice against every layout of the grid, quiet and beside 2 busy processes",
    ),
    Step(
        "qpg_update_speed",
        ("benchmarks/qpg_update_speed.py", "--rounds", "5"),
        ("--rounds", "1", "--steps", "5"),
        (Headline("SAC gradient step, rlrun / SB3 (time)", r"rlrun / SB3 ([\d.]+)", 1.0, higher_is_better=False),),
        timeout=600,
        what="one SAC gradient step against Stable-Baselines3's",
    ),
    Step(
        "pg_update_speed",
        ("benchmarks/pg_update_speed.py", "--rounds", "7"),
        ("--rounds", "1", "--iterations", "2"),
        (
            Headline(
                "PPO iteration on CartPole, rlrun / SB3 (time)",
                r"PPO: rlrun / SB3 ([\d.]+)",
                1.0,
                higher_is_better=False,
            ),
            Headline(
                "A2C iteration on CartPole, rlrun / SB3 (time)",
                r"A2C: rlrun / SB3 ([\d.]+)",
                1.0,
                higher_is_better=False,
            ),
        ),
        timeout=600,
        what="one PPO and one A2C training iteration against Stable-Baselines3's",
    ),
    Step(
        "a2c_floor",
        ("benchmarks/a2c_floor.py",),
        ("--rounds", "1", "--iterations", "2"),
        (
            Headline("A2C CartPole training loop, rlrun / SB3 (time per step)", r"rlrun / sb3: ([\d.]+)"),
            Headline("the least any framework can do / SB3 (time per step)", r"bare / sb3: ([\d.]+)"),
        ),
        timeout=300,
        what="A2C's whole training loop against SB3's and a bare loop: the floor under the wall-time ratio",
    ),
    Step(
        "dqn_update_speed",
        ("benchmarks/dqn_update_speed.py", "--rounds", "7"),
        ("--rounds", "1", "--steps", "2"),
        (
            Headline(
                "DQN gradient step on CartPole, the Zoo's loss, rlrun / SB3 (time)",
                r"the Zoo's loss / SB3: ([\d.]+)",
                1.0,
                higher_is_better=False,
            ),
            Headline("the same with rlrun's double DQN (3 forward passes)", r"double DQN\) / SB3: ([\d.]+)"),
        ),
        timeout=600,
        what="DQN's gradient steps against Stable-Baselines3's, same network, batch and loss",
    ),
    Step(
        "async_dqn_speed",
        (
            "benchmarks/async_dqn_speed.py",
            "--batch_T",
            "8",
            "--replay_ratio",
            "0.5",
            "--n_steps",
            "20000",
            "--min_steps_learn",
            "4000",
        ),
        ("--batch_T", "8", "--replay_ratio", "0.5", "--n_steps", "640", "--min_steps_learn", "192"),
        (
            Headline(
                "async / sync DQN steps/s (Pong, replay ratio 0.5)", r"async / sync steps per second: ([\d.]+)", 1.3
            ),
            Headline("bound on that ratio from sync's phases", r"bound from the sync phases on \d+ cores: ([\d.]+)"),
        ),
        timeout=400,
        what="AsyncRl against MinibatchRl + CpuSampler at the same replay ratio, beside the bound overlap allows",
    ),
    Step(
        "learning_cartpole",
        ("benchmarks/learning_cartpole.py", "--algos", "ppo", "a2c", "dqn", "--seeds", "0", "1", "2"),
        ("--algos", "ppo", "--seeds", "0", "--n_steps", "2048", "--eval_every", "1024"),
        tuple(
            headline
            for algo in ("ppo", "a2c", "dqn")
            for headline in (
                Headline(
                    f"{algo.upper()} wall time to 475, rlrun / SB3",
                    rf"^{algo}\s+wall to 475 ratio ([\d.]+)",
                    0.5,
                    False,
                ),
                Headline(
                    f"{algo.upper()} steps to 475, rlrun / SB3", rf"^{algo}\s+.*steps to 475 ratio ([\d.]+)", 1.0, False
                ),
            )
        ),
        timeout=1800,
        what="steps and wall time to solve CartPole-v1 beside Stable-Baselines3 (RL Zoo settings)",
    ),
)


def machine_facts() -> dict[str, str]:
    facts = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "host": socket.gethostname(),
        "cores": str(os.cpu_count()),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "load average at start": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    for package in ("torch", "numpy", "gymnasium", "ale-py", "stable-baselines3", "mujoco"):
        try:
            facts[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            facts[package] = "not installed"
    facts["torch threads"] = "1 in every benchmark process (each sets it), workers 1 each"
    return facts


def machine_label(cores: int | str, host: str) -> str:
    """``<cores>cpu-<host>``, the machine part of a report's file name."""
    return f"{cores}cpu-{re.sub(r'[^A-Za-z0-9]+', '-', host).strip('-')}"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


@dataclasses.dataclass
class Outcome:
    step: Step
    command: str
    returncode: int | None  # None: timed out
    timeout: float
    seconds: float
    output: str
    load_before: float
    load_after: float
    values: list[float | None]


def run_step(step: Step, quick: bool) -> Outcome:
    argv = [sys.executable, *step.args, *(step.quick_args if quick else ())]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    timeout = step.quick_timeout if quick else step.timeout
    load_before, start = os.getloadavg()[0], time.perf_counter()
    try:
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        returncode, output = proc.returncode, proc.stdout + (f"\n[stderr]\n{proc.stderr}" if proc.returncode else "")
    except subprocess.TimeoutExpired as e:
        returncode = None
        output = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    command = " ".join(["python", *step.args, *(step.quick_args if quick else ())])
    values = [h.find(output) for h in step.headlines]
    seconds = time.perf_counter() - start
    return Outcome(step, command, returncode, timeout, seconds, output, load_before, os.getloadavg()[0], values)


def _status(outcome: Outcome) -> str:
    if outcome.returncode is None:
        return f"timed out after {outcome.timeout:.0f} s"
    # Benchmarks with --check exit 1 on a missed target; run without it, any non-zero exit is a failure.
    return "ok" if outcome.returncode == 0 else f"failed (exit {outcome.returncode})"


def write_plot(outcomes: list[Outcome], path: Path) -> bool:
    """Each headline as a bar, its target as a tick; False when matplotlib is missing or nothing was measured."""
    rows = [
        (h.label, v, h.target, h.higher_is_better)
        for o in outcomes
        for h, v in zip(o.step.headlines, o.values)
        if v is not None
    ]
    if not rows:
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(rows) + 1.2))
    ys = range(len(rows))
    colors = []
    for _label, value, target, higher in rows:
        if target is None:
            colors.append("tab:gray")  # a figure shown for context, with nothing to meet
        else:
            colors.append("tab:green" if (value >= target if higher else value <= target) else "tab:red")
    ax.barh(list(ys), [r[1] for r in rows], color=colors)
    for y, (_label, _value, target, _higher) in zip(ys, rows):
        if target is not None:
            ax.plot([target, target], [y - 0.4, y + 0.4], color="black", linewidth=2)
    ax.set_yticks(list(ys), [f"{r[0]}{'' if r[3] else ' (lower is better)'}" for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("measured (bar) and target (black tick); green: target met, grey: no target")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(outcomes: list[Outcome], facts: dict[str, str], path: Path, quick: bool) -> None:
    plot = path.with_name(path.stem + "-ratios.png")
    has_plot = write_plot(outcomes, plot)
    lines = [f"# rlrun CPU benchmarks, {facts['date']} on {facts['host']}", ""]
    if quick:
        lines += ["**Quick (smoke) run: the figures below are not measurements.**", ""]
    lines += ["| fact | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in facts.items()]
    lines += ["", "## Headlines", "", "| benchmark | figure | measured | target | met |", "|---|---|---|---|---|"]
    for o in outcomes:
        if not o.step.headlines:
            lines.append(f"| {o.step.name} | see its output below | | | |")
        for h, v in zip(o.step.headlines, o.values):
            target = "" if h.target is None else f"{'>=' if h.higher_is_better else '<='} {h.target:g}"
            met = {True: "yes", False: "**no**", None: ""}[h.met(v)]
            lines.append(f"| {o.step.name} | {h.label} | {'n/a' if v is None else f'{v:g}'} | {target} | {met} |")
    total = sum(o.seconds for o in outcomes)
    lines += ["", f"The {len(outcomes)} steps took {int(total // 60)} min {total % 60:.0f} s in all."]
    if has_plot:
        lines += ["", f"![headline ratios]({plot.name})"]
    lines += ["", "## Steps", ""]
    for o in outcomes:
        lines += [
            f"### {o.step.name}: {o.step.what}",
            "",
            f"`{o.command}`: {_status(o)} in {o.seconds:.0f} s; 1-minute load average "
            f"{o.load_before:.2f} before, {o.load_after:.2f} after.",
            "",
            "```text",
            o.output.rstrip(),
            "```",
            "",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=None, help=f"comma-separated subset of {[s.name for s in STEPS]}")
    parser.add_argument("--quick", action="store_true", help="tiny settings: checks that every step runs")
    parser.add_argument("--out-dir", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args(argv)
    names = [s.name for s in STEPS]
    chosen = names if args.only is None else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        parser.error(f"unknown step(s) {unknown}; choose from {names}")

    facts = machine_facts()
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    machine = machine_label(facts["cores"], facts["host"])
    report = out_dir / f"{datetime.date.today().isoformat()}-{machine}{'-quick' if args.quick else ''}.md"

    outcomes = []
    for step in STEPS:
        if step.name not in chosen:
            continue
        print(f"[{time.strftime('%H:%M:%S')}] {step.name} ...", flush=True)
        outcome = run_step(step, args.quick)
        outcomes.append(outcome)
        figures = ", ".join(f"{h.label}: {v}" for h, v in zip(step.headlines, outcome.values))
        print(f"    {_status(outcome)} in {outcome.seconds:.0f} s. {figures}", flush=True)
        write_report(outcomes, facts, report, args.quick)  # after every step: a cut-off run keeps what it had
    print(f"report: {report}")
    return 0 if all(o.returncode == 0 for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
