"""Learning speed on CartPole-v1: rlrun and Stable-Baselines3, tuned settings, same machine, one run.

    python benchmarks/learning_cartpole.py                       # PPO, A2C, DQN x seeds 0 1 2, both libraries
    python benchmarks/learning_cartpole.py --algos ppo --libs rlrun --seeds 0
    python benchmarks/learning_cartpole.py --algos dqn dqn_pri catdqn   # DQN family; SB3 has only DQN
    python benchmarks/learning_cartpole.py --algos dqn --libs rlrun --seeds 0 1 2 3 4 5 --set algo.replay_ratio=32

SB3 runs the RL Zoo's tuned CartPole-v1 settings, rlrun its own tuned configs
(rlrun/experiments/configs/cartpole.py: the Zoo's for PPO and A2C; DQN with the Zoo's network, learning
rate, batch, replay and exploration, and its own loss, target updates and replay ratio). Both are
evaluated every ``--eval_every`` steps on 10 whole episodes, one in each of 10 envs, greedily (SB3:
deterministic=True; rlrun: the PG agents' greedy_eval=True, DQN's eps_eval=0.001). rlrun and SB3 take
turns seed by seed.
Reported per run: the first evaluated step count with a return >= 475 ("steps to solve") and the
training wall time up to that evaluation, the final evaluation return, the average over the last 20% of the
evaluations ("last 20%": does the run stay solved, or waver?), and the whole run's wall time, evaluation
excluded; per algorithm, the ratios of the median steps and wall times to solve, and of the
mean whole-run wall times (the time per step, which three seeds' solving times measure only coarsely).
``--set SECTION.KEY=VALUE`` (sections ``sampler``, ``algo``, ``agent``; the value a Python literal) changes
rlrun's config for a sweep, as ``rlrun train --set`` does; SB3's settings stay the Zoo's.
SB3 needs `pip install stable-baselines3`.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time

SOLVED = 475.0
EVAL_EPISODES = 10  # whole episodes per evaluation, in both libraries
SB3_ALGOS = ("ppo", "a2c", "dqn")  # rlrun also has "dqn_pri" (prioritized replay) and "catdqn" (C51)


def run_rlrun(algo: str, seed: int, eval_every: int, n_steps: int | None = None, overrides: dict | None = None) -> dict:
    import torch

    from rlrun.experiments.configs.cartpole import CONFIGS, build_runner
    from rlrun.utils.logging import logger
    from rlrun.utils.logging.context import logger_context
    from rlrun.utils.plotting import find_column, read_progress

    torch.set_num_threads(1)
    n_steps = CONFIGS[algo]["n_steps"] if n_steps is None else n_steps
    runner = build_runner(
        algo,
        seed=seed,
        n_steps=n_steps,
        log_interval_steps=eval_every,
        affinity=dict(master_torch_threads=1),
        eval_n_envs=EVAL_EPISODES,  # one episode per env: each policy forward serves all of them
        overrides=overrides,
    )
    with tempfile.TemporaryDirectory() as tmp:
        with logger.quiet_console(), logger_context(tmp, seed, f"{algo}_cartpole", {}, override_prefix=True) as run_dir:
            runner.train()
        data = read_progress(run_dir)
    steps, returns = data[str(find_column(data, "CumSteps"))], data["ReturnAverage"]
    walls = data[str(find_column(data, "CumTrainTime"))]  # sampling and optimisation, evaluation excluded
    return dict(curve=list(zip(steps, returns, walls)), wall=walls[-1], n_steps=n_steps)


SB3_BUDGETS = {"ppo": 100_000, "a2c": 100_000, "dqn": 50_000}


def sb3_model(algo: str, seed: int):
    """SB3's PPO, A2C or DQN with the RL Zoo's CartPole-v1 settings (also used by dqn_update_speed.py)."""
    from stable_baselines3 import A2C, DQN, PPO
    from stable_baselines3.common.env_util import make_vec_env

    if algo == "ppo":
        env = make_vec_env("CartPole-v1", n_envs=8, seed=seed)
        return PPO(
            "MlpPolicy", env, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0,
            learning_rate=lambda f: 1e-3 * f, clip_range=lambda f: 0.2 * f, seed=seed, device="cpu",
        )  # fmt: skip
    if algo == "a2c":
        env = make_vec_env("CartPole-v1", n_envs=8, seed=seed)
        return A2C("MlpPolicy", env, ent_coef=0.0, seed=seed, device="cpu")
    env = make_vec_env("CartPole-v1", n_envs=1, seed=seed)
    return DQN(
        "MlpPolicy", env, learning_rate=2.3e-3, batch_size=64, buffer_size=100_000, learning_starts=1000,
        gamma=0.99, target_update_interval=10, train_freq=256, gradient_steps=128, exploration_fraction=0.16,
        exploration_final_eps=0.04, policy_kwargs=dict(net_arch=[256, 256]), seed=seed, device="cpu",
    )  # fmt: skip


def run_sb3(algo: str, seed: int, eval_every: int, n_steps: int | None = None) -> dict:
    import torch
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    torch.set_num_threads(1)
    model = sb3_model(algo, seed)
    budget = SB3_BUDGETS[algo]
    n_steps = budget if n_steps is None else n_steps
    # One episode in each of 10 envs (evaluate_policy splits the episodes over the envs): the same 10 whole
    # episodes as 10 in one env, in a tenth of the predict calls, which took most of this script's time.
    eval_env = make_vec_env("CartPole-v1", n_envs=EVAL_EPISODES, seed=seed + 1000)
    curve, wall, done = [], 0.0, 0
    while done < n_steps:
        chunk = min(eval_every, n_steps - done)
        start = time.perf_counter()
        model.learn(chunk, reset_num_timesteps=False)
        wall += time.perf_counter() - start
        done = model.num_timesteps
        mean, _ = evaluate_policy(model, eval_env, n_eval_episodes=EVAL_EPISODES, deterministic=True)
        curve.append((done, mean, wall))
    return dict(curve=curve, wall=wall, n_steps=n_steps)


def summarise(result: dict) -> tuple[float | None, float | None, float]:
    """Steps and training wall time at the first evaluation >= 475, and the final return."""
    solved, wall = next(((s, w) for s, r, w in result["curve"] if r >= SOLVED), (None, None))
    return solved, wall, result["curve"][-1][1]


def last_fraction_average(result: dict, fraction: float = 0.2) -> float:
    """The average evaluation return over the evaluations in the last ``fraction`` of the run's steps."""
    start = result["curve"][-1][0] * (1 - fraction)
    returns = [r for s, r, _ in result["curve"] if s > start]
    return statistics.mean(returns)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algos", nargs="+", default=["ppo", "a2c", "dqn"])
    parser.add_argument("--libs", nargs="+", default=["rlrun", "sb3"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--eval_every", type=int, default=5000)
    parser.add_argument("--n_steps", type=int, default=None, help="instead of each config's budget (smoke runs)")
    parser.add_argument(
        "--set", dest="assignments", action="append", default=[], metavar="SECTION.KEY=VALUE",
        help="change rlrun's config (sampler, algo or agent keywords), e.g. --set algo.replay_ratio=32",
    )  # fmt: skip
    args = parser.parse_args()
    overrides = parse_overrides(args.assignments)
    if overrides:
        print(f"rlrun's configs changed by --set: {overrides}")
    runners = {"rlrun": run_rlrun, "sb3": run_sb3}
    print(
        f"{'algo':7} {'lib':6} {'seed':>4} {'steps to 475':>13} {'wall to 475':>12} {'final return':>13} "
        f"{'last 20%':>9} {'wall (s)':>9}"
    )
    table: dict[tuple[str, str], list] = {}
    for algo in args.algos:
        libs = [lib for lib in args.libs if lib != "sb3" or algo in SB3_ALGOS]
        # The libraries take turns seed by seed, so a drift in the machine's speed falls on both alike.
        for seed in args.seeds:
            for lib in libs:
                kwargs = dict(overrides=overrides) if lib == "rlrun" else {}
                result = runners[lib](algo, seed, args.eval_every, args.n_steps, **kwargs)
                solved, solved_wall, final = summarise(result)
                last = last_fraction_average(result)
                table.setdefault((algo, lib), []).append((solved, final, result["wall"], solved_wall, last))
                solved_text = "-" if solved is None else f"{int(solved)}"
                wall_text = "-" if solved_wall is None else f"{solved_wall:.1f}"
                print(
                    f"{algo:7} {lib:6} {seed:>4} {solved_text:>13} {wall_text:>12} {final:>13.1f} {last:>9.1f} "
                    f"{result['wall']:>9.1f}",
                    flush=True,
                )
        if "sb3" in args.libs and algo not in SB3_ALGOS:
            print(f"{algo:7} {'sb3':6}    - (Stable-Baselines3 has no {algo})")
    print("\nsummary (mean over seeds):")
    for (algo, lib), rows in table.items():
        n_solved = sum(row[1] >= SOLVED for row in rows)
        n_stayed = sum(row[4] >= 450 for row in rows)
        wall = statistics.mean(row[2] for row in rows)
        print(
            f"{algo:7} {lib:6} final>=475 in {n_solved}/{len(rows)} seeds, last 20% >= 450 in "
            f"{n_stayed}/{len(rows)}, mean wall {wall:.1f} s"
        )
    print("\nrlrun / SB3, medians over seeds (a seed that never reached 475 counts as slowest):")
    for algo in args.algos:
        if (algo, "rlrun") in table and (algo, "sb3") in table:
            ours, theirs = table[algo, "rlrun"], table[algo, "sb3"]
            wall = median_ratio([r[3] for r in ours], [r[3] for r in theirs])
            steps = median_ratio([r[0] for r in ours], [r[0] for r in theirs])
            per_step = statistics.mean(r[2] for r in ours) / statistics.mean(r[2] for r in theirs)
            print(
                f"{algo:7} wall to 475 ratio {_fmt(wall)}, steps to 475 ratio {_fmt(steps)}, "
                f"time per step ratio {per_step:.2f} (whole runs)"
            )
    return 0


def parse_overrides(assignments: list[str]) -> dict[str, dict] | None:
    """``["algo.replay_ratio=16", ...]`` -> ``{"algo": {"replay_ratio": 16}}`` for ``build_runner``."""
    from rlrun.experiments.registry import parse_assignment

    overrides: dict[str, dict] = {}
    for text in assignments:
        keys, value = parse_assignment(text)
        if len(keys) != 2 or keys[0] not in ("sampler", "algo", "agent"):
            raise SystemExit(f"--set {text!r}: write sampler.KEY=VALUE, algo.KEY=VALUE or agent.KEY=VALUE.")
        overrides.setdefault(keys[0], {})[keys[1]] = value
    return overrides or None


def median_ratio(ours: list[float | None], theirs: list[float | None]) -> float | None:
    """median(ours) / median(theirs), None for infinity; unsolved seeds (None) sort last."""
    a, b = (statistics.median(math.inf if x is None else x for x in xs) for xs in (ours, theirs))
    return None if math.isinf(a) or math.isinf(b) or b == 0 else a / b


def _fmt(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.2f}"


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    sys.exit(main())
