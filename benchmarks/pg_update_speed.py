"""Time of one PPO and one A2C training iteration on CartPole-v1, rlrun against Stable-Baselines3.

    python benchmarks/pg_update_speed.py                    # PPO and A2C, 7 alternating rounds
    python benchmarks/pg_update_speed.py --algos ppo --rounds 3 --iterations 10

Both libraries run the RL Zoo's CartPole settings (rlrun's copy: rlrun/experiments/configs/cartpole.py)
for a few iterations, so that each holds a real batch, and then repeat the update on that batch, in
turns, on one torch thread. One PPO iteration is 20 epochs of one 256-step minibatch (20 gradient steps);
one A2C iteration is one gradient step on 8 envs x 5 steps. rlrun's update is ``algo.optimize_agent``,
SB3's is ``model.train()``. rlrun is timed twice: as it runs (torch's multi-tensor optimiser kernels,
:mod:`rlrun.algos.optim`) and with torch's default CPU optimiser (``foreach=False``), to show what the
kernels save. Printed: the median milliseconds per iteration of each, and the medians of the per-round
ratios. Needs ``pip install stable-baselines3``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable


def rlrun_update(algo: str, plain_optimizer: bool) -> Callable[[], None]:
    """An rlrun update on a sampled batch, after a short run that fills it."""
    import copy

    from rlrun.experiments.configs.cartpole import CONFIGS, build_runner
    from rlrun.utils.logging import logger
    from rlrun.utils.logging.context import logger_context

    config = CONFIGS[algo]
    batch = config["sampler"]["batch_T"] * config["sampler"]["batch_B"]
    overrides = {"algo": copy.deepcopy(config["algo"])}
    if plain_optimizer:  # torch's default on the CPU: a Python loop over the tensors
        overrides["algo"]["optim_kwargs"] = {**overrides["algo"].get("optim_kwargs", {}), "foreach": False}
    runner = build_runner(
        algo, seed=0, n_steps=4 * batch, log_interval_steps=10**9, overrides=overrides, affinity=dict(master_torch_threads=1)
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        with logger.quiet_console():
            with logger_context(tmp, 0, f"{algo}_update_speed", {}, override_prefix=True):
                runner.train()
    samples, _traj_infos = runner.sampler.obtain_samples(4)
    return lambda: runner.algo.optimize_agent(4, samples)


def sb3_update(algo: str) -> Callable[[], None]:
    """An SB3 update on its rollout buffer, after a short run that fills it."""
    from stable_baselines3 import A2C, PPO
    from stable_baselines3.common.env_util import make_vec_env

    env = make_vec_env("CartPole-v1", n_envs=8, seed=0)
    if algo == "ppo":
        model = PPO(
            "MlpPolicy", env, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0,
            learning_rate=lambda f: 1e-3 * f, clip_range=lambda f: 0.2 * f, seed=0, device="cpu",
        )  # fmt: skip
        model.learn(4 * 256)
    else:
        model = A2C("MlpPolicy", env, ent_coef=0.0, seed=0, device="cpu")
        model.learn(4 * 40)
    return model.train


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algos", nargs="+", default=["ppo", "a2c"], choices=["ppo", "a2c"])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--iterations", type=int, default=None, help="per round and library (PPO 25, A2C 500)")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    for algo in args.algos:
        iterations = args.iterations or {"ppo": 25, "a2c": 500}[algo]
        updates = {
            "rlrun": rlrun_update(algo, plain_optimizer=False),
            "rlrun, torch's default optimiser": rlrun_update(algo, plain_optimizer=True),
            "SB3": sb3_update(algo),
        }
        times: dict[str, list[float]] = {name: [] for name in updates}
        for _ in range(args.rounds):
            for name, update in updates.items():
                start = time.perf_counter()
                for _ in range(iterations):
                    update()
                times[name].append((time.perf_counter() - start) / iterations * 1e3)
        ratio = statistics.median(a / b for a, b in zip(times["rlrun"], times["SB3"]))
        plain = statistics.median(a / b for a, b in zip(times["rlrun, torch's default optimiser"], times["SB3"]))
        steps = "20 gradient steps on 256" if algo == "ppo" else "1 gradient step on 40"
        print(f"{algo.upper()} iteration ({steps}), {args.rounds} rounds of {iterations}:")
        for name, values in times.items():
            print(f"  {name:34} {statistics.median(values):7.3f} ms")
        print(f"  {algo.upper()}: rlrun / SB3 {ratio:.2f}   (with torch's default optimiser: {plain:.2f})")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    sys.exit(main())
