"""Time of one SAC gradient step, rlrun against Stable-Baselines3, same networks and batch, in one process.

    python benchmarks/qpg_update_speed.py                 # 256-unit networks, 7 alternating rounds
    python benchmarks/qpg_update_speed.py --hidden 64 --rounds 3 --steps 50

Both train on Pendulum-v1 for a few hundred steps first (so their replays hold data), then take
``--steps`` gradient steps (batch 256) per round, alternately, on one torch thread. rlrun's step is
``SAC.train_step`` on a replay batch plus its target update; SB3's is ``SAC.train(gradient_steps=1)``.
Printed: the median milliseconds per step of each, and the median of the per-round ratios. Needs
``pip install stable-baselines3``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hidden", type=int, default=256, help="units in each of the two hidden layers")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=100, help="gradient steps per round and library")
    args = parser.parse_args()

    import gymnasium
    import stable_baselines3
    import torch

    from rlrun.experiments.configs.mujoco.qpg.pendulum import build_runner
    from rlrun.utils.logging import logger
    from rlrun.utils.logging.context import logger_context

    torch.set_num_threads(1)
    hidden = [args.hidden, args.hidden]
    sb3 = stable_baselines3.SAC("MlpPolicy", gymnasium.make("Pendulum-v1"), learning_rate=1e-3, learning_starts=100, seed=0,
                 device="cpu", policy_kwargs=dict(net_arch=hidden))  # fmt: skip
    sb3.learn(600)
    overrides = dict(algo=dict(min_steps_learn=100), agent=dict(model_kwargs=dict(hidden_sizes=hidden), q_model_kwargs=dict(hidden_sizes=hidden)))  # fmt: skip
    runner = build_runner("sac", seed=0, n_steps=600, log_interval_steps=10**6, overrides=overrides)
    with tempfile.TemporaryDirectory() as tmp:
        with logger.quiet_console():
            with logger_context(tmp, 0, "sac_update_speed", {}, override_prefix=True):
                runner.train()
    algo = runner.algo
    opt_info = algo.empty_opt_info()

    def rlrun_step() -> None:
        algo.update_counter += 1
        algo.train_step(algo.sample_replay(), opt_info)
        algo.agent.update_target(algo.target_update_tau)

    def sb3_step() -> None:
        sb3.train(gradient_steps=1, batch_size=256)

    def ms_per_step(step) -> float:
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        return (time.perf_counter() - start) / args.steps * 1e3

    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(ms_per_step(rlrun_step))
        theirs.append(ms_per_step(sb3_step))
    ratio = statistics.median(a / b for a, b in zip(ours, theirs))
    print(f"SAC gradient step, {args.hidden}-unit networks, batch 256, {args.rounds} rounds of {args.steps}:")
    print(f"rlrun {statistics.median(ours):.2f} ms   SB3 {statistics.median(theirs):.2f} ms   rlrun / SB3 {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    sys.exit(main())
