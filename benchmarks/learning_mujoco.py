"""SAC on a MuJoCo task: rlrun (rlpyt's example_2 settings) beside Stable-Baselines3, same step count, one run.

    python benchmarks/learning_mujoco.py                                 # HalfCheetah-v5, 50k steps, seed 0
    python benchmarks/learning_mujoco.py --env_id Hopper-v5 --seeds 0 1 2
    python benchmarks/learning_mujoco.py --libs rlrun --n_steps 2000 --min_steps_learn 500 --eval_every 1000

rlrun runs examples/example_2.py's ``build_and_train``: SAC's defaults (rlpyt's: batch 256, one
gradient step per env step, Adam at 3e-4, learned temperature, a 1M replay, learning from step 10k).
SB3's SAC runs with its defaults and the RL Zoo's ``learning_starts=10000`` for MuJoCo, which match
those. Every ``--eval_every`` steps both play ``--eval_episodes`` whole episodes with the
deterministic policy. Printed per run: the return at each evaluation and the training wall time
(evaluation excluded). Needs ``pip install -e ".[mujoco]" stable-baselines3``; MuJoCo writes
MUJOCO_LOG.TXT into a temporary working directory.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def run_rlrun(args: argparse.Namespace, seed: int) -> list[tuple[int, float, float]]:
    """``[(steps, eval return, train wall seconds so far)]`` at each evaluation (after the first update)."""
    import torch

    from rlrun.utils.logging import logger
    from rlrun.utils.plotting import find_column, read_progress

    torch.set_num_threads(1)
    spec = importlib.util.spec_from_file_location("example_2", os.path.join(ROOT, "examples", "example_2.py"))
    assert spec is not None and spec.loader is not None
    example_2 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example_2)
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            with logger.quiet_console():
                example_2.build_and_train(
                    env_id=args.env_id,
                    run_ID=seed,
                    n_steps=args.n_steps,
                    log_interval_steps=args.eval_every,
                    min_steps_learn=args.min_steps_learn,
                    eval_max_trajectories=args.eval_episodes,
                    seed=seed,
                )
        finally:
            os.chdir(cwd)
        (run_dir,) = [root for root, _, files in os.walk(tmp) if "progress.csv" in files]
        data = read_progress(run_dir)
    steps = data[str(find_column(data, "CumSteps"))]
    walls = data[str(find_column(data, "CumTrainTime"))]
    rows = zip(steps, data["ReturnAverage"], walls)
    return [(int(s), float(r), float(w)) for s, r, w in rows if r == r]  # NaN: no evaluation before learning


def run_sb3(args: argparse.Namespace, seed: int) -> list[tuple[int, float, float]]:
    import gymnasium
    import torch
    from stable_baselines3 import SAC
    from stable_baselines3.common.evaluation import evaluate_policy

    torch.set_num_threads(1)
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            model = SAC("MlpPolicy", gymnasium.make(args.env_id), learning_starts=args.min_steps_learn, seed=seed, device="cpu")  # fmt: skip
            eval_env = gymnasium.make(args.env_id)
            eval_env.reset(seed=seed + 1000)
            curve, wall = [], 0.0
            while model.num_timesteps < args.n_steps:
                start = time.perf_counter()
                model.learn(min(args.eval_every, args.n_steps - model.num_timesteps), reset_num_timesteps=False)
                wall += time.perf_counter() - start
                if model.num_timesteps >= args.min_steps_learn:
                    mean, _ = evaluate_policy(model, eval_env, n_eval_episodes=args.eval_episodes, deterministic=True)
                    curve.append((model.num_timesteps, float(mean), wall))
        finally:
            os.chdir(cwd)
    return curve


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env_id", default="HalfCheetah-v5")
    parser.add_argument("--libs", nargs="+", default=["rlrun", "sb3"], choices=["rlrun", "sb3"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--n_steps", type=int, default=50_000)
    parser.add_argument("--min_steps_learn", type=int, default=10_000)
    parser.add_argument("--eval_every", type=int, default=10_000)
    parser.add_argument("--eval_episodes", type=int, default=5)
    args = parser.parse_args()
    runners = {"rlrun": run_rlrun, "sb3": run_sb3}
    finals: dict[str, list[tuple[float, float]]] = {}
    for lib in args.libs:
        for seed in args.seeds:
            curve = runners[lib](args, seed)
            finals.setdefault(lib, []).append((curve[-1][1], curve[-1][2]))
            points = "  ".join(f"{s}:{r:.0f}" for s, r, _ in curve)
            print(f"{args.env_id} {lib:6} seed {seed}: returns {points}  (train wall {curve[-1][2]:.0f} s)", flush=True)
    print(f"\nat {args.n_steps} steps (medians over seeds {args.seeds}):")
    for lib, rows in finals.items():
        ret, wall = statistics.median(r for r, _ in rows), statistics.median(w for _, w in rows)
        print(f"{lib:6} return {ret:.0f}, train wall {wall:.0f} s")
    if len(finals) == 2:
        (r_ours, w_ours), (r_sb3, w_sb3) = (
            [statistics.median(c) for c in zip(*finals[lib])] for lib in ("rlrun", "sb3")
        )
        print(f"rlrun / sb3: return {r_ours / r_sb3:.2f}, train wall {w_ours / w_sb3:.2f}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main())
