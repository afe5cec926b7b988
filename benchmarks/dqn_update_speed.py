"""Time of DQN's gradient steps on CartPole-v1, rlrun against Stable-Baselines3, same network and batch.

    python benchmarks/dqn_update_speed.py                 # 7 alternating rounds of 128 gradient steps
    python benchmarks/dqn_update_speed.py --rounds 3 --steps 32

Both run the RL Zoo's CartPole settings for 2,048 steps first (so their replays hold data and learning has
begun), then take ``--steps`` gradient steps of batch 64 per round, in turns, on one torch thread. rlrun's
steps are ``DQN.optimize_agent`` with no new samples, SB3's ``DQN.train``. rlrun is timed twice, with the
loss settings of its CartPole config (double DQN, so a third forward pass per step) and with the Zoo's (one
network's argmax, Huber loss), which is the work SB3 does. The number of steps per sampled step (the replay
ratio) is a setting, not a speed, so it is the same here for both. Printed: the median milliseconds per
gradient step of each, and the medians of the per-round ratios. Needs ``pip install stable-baselines3``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

PREFILL = 2048  # sampled steps before timing: past learning_starts (1,000), so training has begun


def rlrun_steps(n_steps: int, zoo_loss: bool) -> Callable[[], None]:
    """``n_steps`` of rlrun's DQN gradient steps, after a short run that fills the replay."""
    import copy

    from rlrun.experiments.configs.cartpole import CONFIGS, build_runner
    from rlrun.utils.logging import logger
    from rlrun.utils.logging.context import logger_context

    algo_kwargs = copy.deepcopy(CONFIGS["dqn"]["algo"])
    if zoo_loss:
        algo_kwargs.update(double_dqn=False, delta_clip=1.0)
    # updates_per_optimize = replay_ratio * 256 / 64; set it to n_steps per call.
    batch = CONFIGS["dqn"]["sampler"]["batch_T"] * CONFIGS["dqn"]["sampler"]["batch_B"]
    algo_kwargs["replay_ratio"] = n_steps * algo_kwargs["batch_size"] / batch
    runner = build_runner("dqn", seed=0, n_steps=PREFILL, log_interval_steps=10**9, overrides={"algo": algo_kwargs})
    with tempfile.TemporaryDirectory() as tmp:
        with logger.quiet_console():
            with logger_context(tmp, 0, "dqn_update_speed", {}, override_prefix=True):
                runner.train()
    algo = runner.algo
    if algo.updates_per_optimize != n_steps:
        raise RuntimeError(f"expected {n_steps} updates per call, got {algo.updates_per_optimize}")
    return lambda: algo.optimize_agent(algo.min_itr_learn + 1, None)


def sb3_steps(n_steps: int) -> Callable[[], None]:
    """``n_steps`` of SB3's DQN gradient steps, after the same short run."""
    from learning_cartpole import sb3_model

    model = sb3_model("dqn", seed=0)
    model.learn(PREFILL)
    return lambda: model.train(gradient_steps=n_steps, batch_size=64)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=128, help="gradient steps per round and library")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)
    runs = {
        "rlrun, its CartPole loss (double DQN)": rlrun_steps(args.steps, zoo_loss=False),
        "rlrun, the Zoo's loss": rlrun_steps(args.steps, zoo_loss=True),
        "SB3": sb3_steps(args.steps),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append((time.perf_counter() - start) / args.steps * 1e3)
    print(f"DQN gradient step (batch 64, 256-unit MLP), {args.rounds} rounds of {args.steps}:")
    for name, values in times.items():
        print(f"  {name:40} {statistics.median(values):7.3f} ms")
    for name in list(runs)[:2]:
        ratio = statistics.median(a / b for a, b in zip(times[name], times["SB3"]))
        print(f"  {name} / SB3: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # learning_cartpole's SB3 settings
    sys.exit(main())
