"""Train PPO on CartPole-v1 in about a minute on 2 cores, then plot the learning curve.

    python examples/quick_start.py                 # 100k env steps, log folder under ./data/
    python examples/quick_start.py --n_steps 20000 # a shorter run

Prints a progress table every 10k steps (evaluation returns over 10 episodes), and leaves
``progress.csv``, ``params.json``, ``debug.log`` and ``learning_curve.png`` in the run folder.
"""

from __future__ import annotations

import argparse
import os

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.ppo import PPO
from rlrun.envs.gym import make
from rlrun.runners.minibatch_rl import MinibatchRlEval
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context
from rlrun.utils.plotting import plot_progress

# RL Zoo's tuned CartPole-v1 settings: many short rollouts, 20 epochs on each full batch.
PPO_CARTPOLE = dict(
    discount=0.98,
    gae_lambda=0.8,
    learning_rate=1e-3,
    value_loss_coeff=0.5,
    entropy_loss_coeff=0.0,
    epochs=20,
    minibatches=1,
    ratio_clip=0.2,
    clip_grad_norm=0.5,
    linear_lr_schedule=True,
)


def build_and_train(n_steps: int = 100_000, seed: int = 0, run_ID: int = 0, log_interval_steps: int = 10_000):
    sampler = SerialSampler(
        EnvCls=make,
        env_kwargs=dict(id="CartPole-v1"),
        batch_T=32,
        batch_B=8,
        max_decorrelation_steps=0,
        eval_n_envs=5,
        eval_max_steps=int(10 * 501),
        eval_max_trajectories=10,
    )
    algo = PPO(**PPO_CARTPOLE)
    agent = CategoricalPgAgent()
    runner = MinibatchRlEval(
        algo=algo, agent=agent, sampler=sampler, n_steps=n_steps, seed=seed, log_interval_steps=log_interval_steps
    )
    config = dict(env="CartPole-v1", algo=PPO_CARTPOLE, n_steps=n_steps, seed=seed)
    with logger_context("quick_start", run_ID, "ppo_cartpole", config, snapshot_mode="last"):
        result = runner.train()
        run_dir = logger.get_snapshot_dir()
    png = plot_progress(run_dir, os.path.join(run_dir, "learning_curve.png"), title="PPO on CartPole-v1 (evaluation)")
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
