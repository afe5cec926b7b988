"""Train PPO on CartPole-v1 in about a minute on 2 cores, then plot the learning curve.

    python examples/quick_start.py                 # 100k env steps, log folder under ./data/
    python examples/quick_start.py --n_steps 20000 # a shorter run

On a terminal a progress bar shows the steps, the speed, the time left and the latest return; a
short table follows every 10k steps (evaluation over 10 whole episodes). The run leaves
``progress.csv``, ``params.json``, ``debug.log`` and ``learning_curve.png`` in the run folder.
The settings live in ``rlrun/experiments/configs/cartpole.py``; the lines below show the parts.
"""

from __future__ import annotations

import argparse
import os

from rlrun.experiments.configs.cartpole import CONFIGS, build_runner
from rlrun.utils.logging.context import logger_context
from rlrun.utils.plotting import plot_progress


def build_and_train(n_steps: int = 100_000, seed: int = 0, run_ID: int = 0, log_interval_steps: int = 10_000):
    # SerialSampler(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=32, batch_B=8, ...),
    # PPO(**CONFIGS["ppo"]["algo"]), CategoricalPgAgent(), wired by MinibatchRlEval.
    runner = build_runner("ppo", seed=seed, n_steps=n_steps, log_interval_steps=log_interval_steps)
    config = {**CONFIGS["ppo"], "env": "CartPole-v1", "n_steps": n_steps, "seed": seed}
    with logger_context("quick_start", run_ID, "ppo_cartpole", config, snapshot_mode="last") as run_dir:
        result = runner.train()
    png = plot_progress(run_dir, os.path.join(run_dir, "learning_curve.png"), title="PPO on CartPole-v1 (evaluation)")
    print(f"Final evaluation return: {result['ReturnAverage']:.1f} after {int(result['Diagnostics/CumSteps'])} steps")
    print(f"Run folder: {run_dir}\nLearning curve: {png}")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n_steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--run_ID", type=int, default=0)
    parser.add_argument("--log_interval_steps", type=int, default=10_000)
    args = parser.parse_args()
    build_and_train(args.n_steps, args.seed, args.run_ID, args.log_interval_steps)
