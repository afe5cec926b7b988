"""SAC and TD3 on HalfCheetah-v5 and Hopper-v5, three seeds each at 100k steps, spread over as many sittings as it takes.

    python benchmarks/mujoco_seeds.py run --out-dir /work/runs/mujoco              # rlrun: every run, resumed where it was
    python benchmarks/mujoco_seeds.py run --out-dir /work/runs/mujoco --seeds 2    # a second stream, on its own core
    python benchmarks/mujoco_seeds.py run --out-dir /work/runs/mujoco --lib sb3    # SB3 on seed 0 of each pair
    python benchmarks/mujoco_seeds.py run --out-dir /work/runs/mujoco --lib sb3 --seeds 1 2 --pairs td3:Hopper-v5
    python benchmarks/mujoco_seeds.py run --out-dir /work/runs/sac-uniform --pairs sac:HalfCheetah-v5 \
        --set agent.uniform_warmup=True                                           # a variant, in its own folder
    python benchmarks/mujoco_seeds.py status --out-dir /work/runs/mujoco           # what is done, what is left
    python benchmarks/mujoco_seeds.py report --out-dir /work/runs/mujoco           # the report, and the finished
                                                                                   # runs' curves for docs/results.md

Each rlrun run is an ordinary ``rlrun train`` run in ``<out-dir>/<algo>_<env>/run_<seed>``, with the RL Zoo's
settings for these tasks: SAC with rlpyt's (= SB3's) defaults, learning from step 10k; TD3 with batch 256, one
gradient step per env step, [400, 300] networks and Gaussian exploration noise of 0.1. Every 10k steps the
deterministic policy plays 10 evaluation episodes. A run checkpoints after each log row with its replay buffer, so a
sitting stopped at any point (Ctrl-C, SIGTERM, the end of a session) loses at most one log row: ``run`` continues each
unfinished run with ``rlrun train --resume`` and skips the finished ones. Runs go seed-major (seed 0 of every pair
first), so a partial campaign already covers each pair. Two streams may share an out-dir: each run holds a lock file
beside its folder while it trains (a lock whose process is gone is taken over), and a stream skips runs another holds.

SB3 (``--lib sb3``) runs the same budget with the RL Zoo's hyperparameters and the same evaluation, on seed 0 of each
pair; its curve goes to ``<out-dir>/sb3_<algo>_<env>/seed_<seed>.json``. An SB3 run cannot resume: it restarts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rlrun.utils.plotting import find_column, read_progress  # noqa: E402

ALGOS = ("sac", "td3")
ENVS = ("HalfCheetah-v5", "Hopper-v5")
SEEDS = (0, 1, 2)
N_STEPS = 100_000
EVAL_EVERY = 10_000
EVAL_EPISODES = 10
# The RL Zoo's TD3 settings for MuJoCo where they differ from rlpyt's (batch 100): batch 256 and one
# gradient step per env step (replay_ratio = batch_size). SAC's zoo settings are rlpyt's defaults.
ZOO_SETS = {"sac": [], "td3": ["algo.batch_size=256", "algo.replay_ratio=256"]}


# Published returns at 100k env steps, read from the sources' data (not by eye unless said), for each pair:
# (source, env version and setup, seeds, mean, std over seeds or None).
TD3_PAPER = "sfujim/TD3 learning_curves/*.npy @34770ccd (the TD3 paper's curves; batch 100, gym v1)"
TIANSHOU = "thu-ml/tianshou examples/mujoco/benchmark/*/result.json @63f0e9a0 (v3; SAC lr 1e-3 and fixed alpha 0.2)"
SPINNINGUP = "openai/spinningup docs/images/plots/pyt/*_performance.svg @038665d6 (v3; an 11-evaluation moving average)"
ZOO_AGENTS = "DLR-RM/rl-trained-agents <algo>/<env>-v3_1/evaluations.npz @6da6faf9 (the RL Zoo's agents; one seed)"
REFERENCES: dict[tuple[str, str], list[tuple[str, int, float, float | None]]] = {
    ("td3", "HalfCheetah-v5"): [(TD3_PAPER, 10, 5513.5, 553.7), (TIANSHOU, 10, 5335.8, 376.5),
                                (SPINNINGUP, 10, 5240.0, None), (ZOO_AGENTS, 1, 5217.0, None)],
    ("td3", "Hopper-v5"): [(TD3_PAPER, 10, 659.5, 752.3), (TIANSHOU, 10, 596.5, 287.8),
                           (SPINNINGUP, 10, 785.0, None), (ZOO_AGENTS, 1, 350.4, None)],
    ("sac", "HalfCheetah-v5"): [(TIANSHOU, 10, 6514.6, 514.2), (SPINNINGUP, 10, 6080.0, None),
                                (ZOO_AGENTS, 1, 4960.8, None)],
    ("sac", "Hopper-v5"): [(TIANSHOU, 10, 2613.5, 990.8), (SPINNINGUP, 10, 1160.0, None),
                           (ZOO_AGENTS, 1, 897.0, None)],
}  # fmt: skip


def run_dir(out_dir: Path, algo: str, env: str, seed: int) -> Path:
    return out_dir / f"{algo}_{env}" / f"run_{seed}"


def steps_done(folder: Path) -> int:
    """The env steps of the last log row in ``folder``'s progress.csv (0 when it has none yet)."""
    if not (folder / "progress.csv").exists():
        return 0
    try:
        data = read_progress(str(folder))
    except (OSError, KeyError, ValueError):
        return 0
    steps = data[str(find_column(data, "CumSteps"))]
    return int(steps[-1]) if steps else 0


def rlrun_command(out_dir: Path, algo: str, env: str, seed: int, sets: tuple[str, ...] = ()) -> list[str]:
    """A fresh run's command (the RL Zoo's settings, then ``sets``), or ``--resume`` of the run in its folder."""
    folder = run_dir(out_dir, algo, env, seed)
    if (folder / "checkpoints").is_dir() and any((folder / "checkpoints").glob("*.ckpt")):
        return [sys.executable, "-m", "rlrun", "train", "--resume", str(folder), "--no-progress-bar"]
    command = [
        sys.executable, "-m", "rlrun", "train", "--algo", algo, "--env", env, "--seed", str(seed),
        "--steps", str(N_STEPS), "--log-interval", str(EVAL_EVERY), "--sampler", "serial",
        "--torch-threads", "1", "--log-dir", str(folder.parent), "--run-id", str(seed),
        "--checkpoint-replay", "--no-progress-bar", "--set", f"sampler.eval_max_trajectories={EVAL_EPISODES}",
    ]  # fmt: skip
    for item in (*ZOO_SETS[algo], *sets):
        command += ["--set", item]
    return command


def claim(folder: Path) -> bool:
    """Take ``folder``'s run for this process: False while another live process holds its lock file."""
    lock = folder.parent / f"{folder.name}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                holder = int(lock.read_text() or "0")
            except (OSError, ValueError):
                holder = 0
            if holder and holder != os.getpid() and psutil.pid_exists(holder):
                return False
            lock.unlink(missing_ok=True)  # stale: its stream was killed mid-run
            continue
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        return True
    return False


def release(folder: Path) -> None:
    (folder.parent / f"{folder.name}.lock").unlink(missing_ok=True)


def selected(seeds: tuple[int, ...], pairs: tuple[str, ...]) -> Iterator[tuple[int, str, str]]:
    """``(seed, env, algo)`` in the campaign's order (seed-major), only the ``pairs`` (``algo:env``) when given."""
    for seed in seeds:
        for env in ENVS:
            for algo in ALGOS:
                if not pairs or f"{algo}:{env}" in pairs:
                    yield seed, env, algo


def run_rlrun(
    out_dir: Path, seeds: tuple[int, ...] = SEEDS, pairs: tuple[str, ...] = (), sets: tuple[str, ...] = ()
) -> int:
    """rlrun on ``seeds`` of every pair, or of ``pairs`` only (``algo:env``), with ``sets`` after the RL Zoo's
    settings (a variant: give it its own ``out_dir``); finished runs are skipped, unfinished ones resumed."""
    for seed, env, algo in selected(seeds, pairs):
        folder = run_dir(out_dir, algo, env, seed)
        if steps_done(folder) >= N_STEPS:
            continue
        if not claim(folder):
            print(f"{algo} {env} seed {seed}: another stream holds it; skipped", flush=True)
            continue
        try:
            command = rlrun_command(out_dir, algo, env, seed, sets)
            print(f"[{time.strftime('%H:%M:%S')}] {algo} {env} seed {seed}: {' '.join(command[2:])}", flush=True)
            with open(out_dir / "campaign.log", "a") as log:
                env_vars = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's rlrun, from out_dir
                code = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT, cwd=out_dir, env=env_vars)
        finally:
            release(folder)
        if code != 0:
            print(f"  exit {code} at {steps_done(folder):,} steps; see {out_dir / 'campaign.log'}", flush=True)
            return code
    return 0


def run_sb3(out_dir: Path, algo: str, env_id: str, seed: int) -> list[tuple[int, float, float]]:
    """SB3 with the RL Zoo's hyperparameters; ``[(steps, eval return, train wall seconds)]`` every 10k steps."""
    import gymnasium
    import numpy as np
    import torch
    from stable_baselines3 import SAC, TD3
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.noise import NormalActionNoise

    torch.set_num_threads(1)
    env = gymnasium.make(env_id)
    if algo == "sac":
        model = SAC("MlpPolicy", env, learning_starts=10_000, seed=seed, device="cpu")
    else:
        n_actions = env.action_space.shape[0]
        noise = NormalActionNoise(np.zeros(n_actions), 0.1 * np.ones(n_actions))
        model = TD3(
            "MlpPolicy", env, learning_starts=10_000, action_noise=noise, batch_size=256,
            policy_kwargs=dict(net_arch=[400, 300]), seed=seed, device="cpu",
        )  # fmt: skip
    eval_env = gymnasium.make(env_id)
    eval_env.reset(seed=seed + 1000)
    curve: list[tuple[int, float, float]] = []
    wall = 0.0
    while model.num_timesteps < N_STEPS:
        start = time.perf_counter()
        model.learn(EVAL_EVERY, reset_num_timesteps=False)
        wall += time.perf_counter() - start
        mean, _ = evaluate_policy(model, eval_env, n_eval_episodes=EVAL_EPISODES, deterministic=True)
        curve.append((int(model.num_timesteps), float(mean), wall))
        print(f"  sb3 {algo} {env_id} seed {seed}: {curve[-1][0]:,} steps, return {mean:.0f}", flush=True)
    return curve


def sb3_path(out_dir: Path, algo: str, env: str, seed: int) -> Path:
    return out_dir / f"sb3_{algo}_{env}" / f"seed_{seed}.json"


def run_sb3_all(out_dir: Path, seeds: tuple[int, ...] = (0,), pairs: tuple[str, ...] = ()) -> int:
    """SB3 on ``seeds`` of every pair, or of ``pairs`` only (``algo:env``), skipping the finished ones."""
    for seed, env, algo in selected(seeds, pairs):
        path = sb3_path(out_dir, algo, env, seed)
        if path.exists():
            continue
        print(f"[{time.strftime('%H:%M:%S')}] sb3 {algo} {env} seed {seed}", flush=True)
        curve = run_sb3(out_dir, algo, env, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"steps_return_wall": curve}))
    return 0


def eval_curve(folder: Path) -> list[tuple[int, float, float]]:
    """``[(steps, evaluation return, training wall seconds)]`` of an rlrun run's log rows (training: sampling and
    optimisation, evaluation excluded, summed over the run's sittings)."""
    data = read_progress(str(folder))
    steps = data[str(find_column(data, "CumSteps"))]
    walls = data[str(find_column(data, "CumTrainTime"))]
    return [(int(s), float(r), float(w)) for s, r, w in zip(steps, data["ReturnAverage"], walls) if not math.isnan(r)]


def status(out_dir: Path) -> int:
    for env in ENVS:
        for algo in ALGOS:
            for seed in SEEDS:
                folder = run_dir(out_dir, algo, env, seed)
                done = steps_done(folder)
                last = eval_curve(folder)[-1] if done else None
                tail = f", return {last[1]:.0f} at {last[0]:,}, {last[2] / 60:.0f} min" if last else ""
                print(f"rlrun {algo} {env} seed {seed}: {done:,}/{N_STEPS:,} steps{tail}")
            for seed in SEEDS:
                curve = sb3_curve(out_dir, algo, env, seed)
                if curve is not None:
                    s, r, w = curve[-1]
                    print(f"sb3   {algo} {env} seed {seed}: return {r:.0f} at {s:,}, {w / 60:.0f} min")
    return 0


def sb3_curve(out_dir: Path, algo: str, env: str, seed: int = 0) -> list[tuple[int, float, float]] | None:
    path = sb3_path(out_dir, algo, env, seed)
    if not path.exists():
        return None
    return [(int(s), float(r), float(w)) for s, r, w in json.loads(path.read_text())["steps_return_wall"]]


def pair_lines(out_dir: Path, algo: str, env: str) -> list[str]:
    """The report's table for one (algorithm, env): each finished seed, their median, and SB3's seeds and median."""
    lines = [f"### {algo.upper()} on {env}", "", "| run | return at 100k | best evaluation | training wall |"]
    lines.append("|---|---|---|---|")
    finals = []
    for seed in SEEDS:
        folder = run_dir(out_dir, algo, env, seed)
        done = steps_done(folder)
        if done < N_STEPS:
            lines.append(f"| rlrun seed {seed} | not finished ({done:,} steps) | | |")
            continue
        curve = eval_curve(folder)
        finals.append(curve[-1][1])
        best = max(r for _, r, _ in curve)
        lines.append(f"| rlrun seed {seed} | {curve[-1][1]:,.0f} | {best:,.0f} | {curve[-1][2] / 60:.0f} min |")
    sb3_finals = []
    for seed in SEEDS:
        sb3 = sb3_curve(out_dir, algo, env, seed)
        if sb3 is None:
            continue
        sb3_finals.append(sb3[-1][1])
        best = max(r for _, r, _ in sb3)
        lines.append(f"| SB3 seed {seed} | {sb3[-1][1]:,.0f} | {best:,.0f} | {sb3[-1][2] / 60:.0f} min |")
    lines.append("")
    if finals:
        median = statistics.median(finals)
        spread = f", mean {statistics.mean(finals):,.0f} ± {statistics.stdev(finals):,.0f}" if len(finals) > 1 else ""
        line = f"rlrun median over {len(finals)} seed(s): {median:,.0f}{spread}"
        if sb3_finals:
            sb3_median = statistics.median(sb3_finals)
            verdict = "at or above" if median >= sb3_median else "below"
            over = f"median over {len(sb3_finals)} seeds, " if len(sb3_finals) > 1 else ""
            line += f"; {verdict} SB3's {over}{sb3_median:,.0f}"
            line += f" (ratio {median / sb3_median:.2f})"
        lines += [line + ".", ""]
    lines += ["Published at 100k steps:", ""]
    for source, n_seeds, mean, std in REFERENCES[algo, env]:
        spread = f" ± {std:,.0f}" if std is not None else ""
        lines.append(f"- {mean:,.0f}{spread} over {n_seeds} seed{'s' if n_seeds > 1 else ''}: {source}")
    lines.append("")
    return lines


def report(out_dir: Path, curves: bool) -> int:
    """Print the markdown report; with ``curves``, also write the finished runs' curves for docs/results.md."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import results_page
    import stable_baselines3
    import torch

    lines = [f"# SAC and TD3 on MuJoCo at {N_STEPS:,} steps: rlrun's seeds beside SB3", ""]
    lines += [
        f"`python benchmarks/mujoco_seeds.py run --out-dir {out_dir}` (rlrun, resumed over sittings) and the same with",
        f"`--lib sb3` (Stable-Baselines3 {stable_baselines3.__version__}); this report: `report --curves`. Machine:",
        f"{os.cpu_count()} CPUs, torch {torch.__version__}, one torch thread per run. The RL Zoo's settings:",
        "SAC with its defaults (batch 256, Adam 3e-4, learned temperature, learning from step 10k); TD3 with",
        "batch 256, one gradient step per env step, [400, 300] networks, exploration noise 0.1. Every 10k steps",
        f"the deterministic policy plays {EVAL_EPISODES} episodes; a run's return at 100k is its last evaluation.",
        "Training wall time excludes evaluation. The runs shared the machine with other work (at `nice 19`)",
        "and were paused (SIGSTOP) for quiet measurements at times, so it is not rlrun's speed.",
        "",
    ]
    for env in ENVS:
        for algo in ALGOS:
            lines += pair_lines(out_dir, algo, env)
            if not curves:
                continue
            for seed in SEEDS:
                folder = run_dir(out_dir, algo, env, seed)
                if steps_done(folder) >= N_STEPS:
                    machine = "2-core VM, shared (see the report)"
                    results_page.import_run(env, algo, seed, str(folder), machine)
    print("\n".join(lines))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["run", "status", "report"])
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--lib", choices=["rlrun", "sb3"], default="rlrun")
    parser.add_argument("--curves", action="store_true", help="report: also write benchmarks/results/curves/")
    parser.add_argument("--seeds", type=int, nargs="+", help="run: only these seeds (rlrun: all; sb3: 0)")
    parser.add_argument("--pairs", nargs="+", default=[], help="run: only these pairs, as algo:env")
    parser.add_argument(
        "--set", dest="sets", action="append", default=[], metavar="SECTION.KEY=VALUE",
        help="run (rlrun): a setting after the RL Zoo's, as rlrun train's --set; give the variant its own --out-dir",
    )  # fmt: skip
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.what == "status":
        return status(args.out_dir)
    if args.what == "report":
        return report(args.out_dir, args.curves)
    if args.lib == "sb3":
        return run_sb3_all(args.out_dir, tuple(args.seeds or (0,)), tuple(args.pairs))
    return run_rlrun(args.out_dir, tuple(args.seeds or SEEDS), tuple(args.pairs), tuple(args.sets))


if __name__ == "__main__":
    sys.exit(main())
