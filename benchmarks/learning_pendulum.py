"""Learning speed on Pendulum-v1: rlrun's SAC, TD3 and DDPG beside Stable-Baselines3's, same settings, one run.

    python benchmarks/learning_pendulum.py                          # sac td3 ddpg x seeds 0 1 2, both libraries
    python benchmarks/learning_pendulum.py --algos sac --libs rlrun --seeds 0
    python benchmarks/learning_pendulum.py --n_steps 600 --eval_every 300   # smoke run

Both libraries use the RL Zoo's tuned Pendulum-v1 settings (rlrun's copy, in rlpyt's keywords, is
rlrun/experiments/configs/mujoco/qpg/pendulum.py): one env, one gradient step per env step, 20k
steps. Every ``--eval_every`` steps each is evaluated on 10 whole episodes with its deterministic
policy (SB3: deterministic=True; rlrun: the agents' eval mode, the policy's mean).

Per run: the first evaluated step count whose average return is >= the threshold (-200 for SAC and
TD3, -300 for DDPG: the issue's targets), the training wall time up to that evaluation, and the final
return. Wall time counts sampling and optimisation and excludes evaluation in both libraries. Both
run with one torch thread. SB3 needs ``pip install stable-baselines3``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

THRESHOLDS = {"sac": -200.0, "td3": -200.0, "ddpg": -300.0}
N_STEPS = 20_000


def run_rlrun(algo: str, seed: int, eval_every: int, n_steps: int) -> list[tuple[int, float, float]]:
    """``[(steps, eval return, train wall seconds so far)]`` at each evaluation."""
    import torch

    from rlrun.experiments.configs.mujoco.qpg.pendulum import build_runner
    from rlrun.utils.logging import logger
    from rlrun.utils.logging.context import logger_context
    from rlrun.utils.plotting import find_column, read_progress

    torch.set_num_threads(1)
    overrides = {}
    if n_steps < N_STEPS:  # smoke runs: learn from the start
        overrides = dict(algo=dict(min_steps_learn=min(100, n_steps // 2)))
    runner = build_runner(algo, seed=seed, n_steps=n_steps, log_interval_steps=eval_every, overrides=overrides)
    with tempfile.TemporaryDirectory() as tmp:
        with logger.quiet_console():
            with logger_context(tmp, seed, f"{algo}_pendulum", {}, override_prefix=True) as run_dir:
                runner.train()
        data = read_progress(run_dir)
    steps = data[str(find_column(data, "CumSteps"))]
    walls = data[str(find_column(data, "CumTrainTime"))]
    return [(int(s), float(r), float(w)) for s, r, w in zip(steps, data["ReturnAverage"], walls)]


def sb3_model(algo: str, env, seed: int):
    """SB3's model with the RL Zoo's Pendulum-v1 hyperparameters."""
    import numpy as np
    from stable_baselines3 import DDPG, SAC, TD3
    from stable_baselines3.common.noise import NormalActionNoise

    if algo == "sac":
        return SAC("MlpPolicy", env, learning_rate=1e-3, seed=seed, device="cpu")
    action_noise = NormalActionNoise(mean=np.zeros(1), sigma=0.1 * np.ones(1))
    Cls = TD3 if algo == "td3" else DDPG
    return Cls(
        "MlpPolicy", env, gamma=0.98, buffer_size=200_000, learning_starts=10_000, action_noise=action_noise,
        gradient_steps=1, train_freq=1, learning_rate=1e-3, policy_kwargs=dict(net_arch=[400, 300]), seed=seed,
        device="cpu",
    )  # fmt: skip


def run_sb3(algo: str, seed: int, eval_every: int, n_steps: int) -> list[tuple[int, float, float]]:
    import gymnasium
    import torch
    from stable_baselines3.common.evaluation import evaluate_policy

    torch.set_num_threads(1)
    model = sb3_model(algo, gymnasium.make("Pendulum-v1"), seed)
    if n_steps < N_STEPS:
        model.learning_starts = min(100, n_steps // 2)
    eval_env = gymnasium.make("Pendulum-v1")
    eval_env.reset(seed=seed + 1000)
    curve, wall = [], 0.0
    while model.num_timesteps < n_steps:
        start = time.perf_counter()
        model.learn(min(eval_every, n_steps - model.num_timesteps), reset_num_timesteps=False)
        wall += time.perf_counter() - start
        mean, _ = evaluate_policy(model, eval_env, n_eval_episodes=10, deterministic=True)
        curve.append((model.num_timesteps, float(mean), wall))
    return curve


def to_threshold(curve: list[tuple[int, float, float]], threshold: float) -> tuple[int | None, float | None]:
    """Steps and wall seconds at the first evaluation at or above ``threshold``."""
    for steps, ret, wall in curve:
        if ret >= threshold:
            return steps, wall
    return None, None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algos", nargs="+", default=["sac", "td3", "ddpg"], choices=sorted(THRESHOLDS))
    parser.add_argument("--libs", nargs="+", default=["rlrun", "sb3"], choices=["rlrun", "sb3"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--eval_every", type=int, default=1000)
    parser.add_argument("--n_steps", type=int, default=N_STEPS)
    args = parser.parse_args()
    runners = {"rlrun": run_rlrun, "sb3": run_sb3}
    print(f"{'algo':5} {'lib':6} {'seed':>4} {'target':>7} {'steps to it':>11} {'wall to it':>10} "
          f"{'final return':>12} {'wall (s)':>8}")  # fmt: skip
    table: dict[tuple[str, str], list] = {}
    for algo in args.algos:
        threshold = THRESHOLDS[algo]
        for seed in args.seeds:
            for lib in args.libs:  # the libraries alternate, so that a change in the machine's load hits both
                curve = runners[lib](algo, seed, args.eval_every, args.n_steps)
                steps, wall = to_threshold(curve, threshold)
                final, total = curve[-1][1], curve[-1][2]
                table.setdefault((algo, lib), []).append((steps, wall, final, total))
                steps_text = "-" if steps is None else str(steps)
                wall_text = "-" if wall is None else f"{wall:.1f}"
                print(f"{algo:5} {lib:6} {seed:>4} {threshold:>7.0f} {steps_text:>11} {wall_text:>10} "
                      f"{final:>12.1f} {total:>8.1f}", flush=True)  # fmt: skip
    print("\nsummary (medians over seeds; '-' where a seed never reached the target):")
    for (algo, lib), rows in table.items():
        reached = [r for r in rows if r[0] is not None]
        med_steps = statistics.median(r[0] for r in reached) if len(reached) == len(rows) else None
        med_wall = statistics.median(r[1] for r in reached) if len(reached) == len(rows) else None
        print(
            f"{algo:5} {lib:6} reached {THRESHOLDS[algo]:.0f} in {len(reached)}/{len(rows)} seeds; median steps "
            f"{'-' if med_steps is None else int(med_steps)}, median wall "
            f"{'-' if med_wall is None else f'{med_wall:.1f} s'}, median final {statistics.median(r[2] for r in rows):.1f}"
        )
    for algo in args.algos:
        ours, theirs = table.get((algo, "rlrun")), table.get((algo, "sb3"))
        if ours and theirs and all(r[1] is not None for r in ours + theirs):
            ratio = statistics.median(r[1] for r in ours) / statistics.median(r[1] for r in theirs)
            print(f"{algo:5} wall to target, rlrun / sb3: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    sys.exit(main())
