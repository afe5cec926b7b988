"""Train PPO on CartPole-v1 in about a minute on 2 cores, then plot the learning curve.

    python examples/quick_start.py                 # 100k env steps, log folder under ./data/
    python examples/quick_start.py --n_steps 20000 # a shorter run
    python examples/quick_start.py --resume        # continue after Ctrl-C, from the checkpoint
    python examples/quick_start.py --sampler serial  # name the sampler instead of measuring (auto)

On a terminal a progress bar shows the steps, the speed, the time left and the latest return; a
short table follows every 10k steps (evaluation over 10 whole episodes). The run leaves
``progress.csv``, ``params.json``, ``run.json``, ``debug.log``, its checkpoints and ``learning_curve.png``
in the run folder; ``rlrun info RUN_DIR`` says where it stands.
The settings live in ``rlrun/experiments/configs/cartpole.py``; the lines below show the parts.
"""

from __future__ import annotations

import argparse
import glob
import os

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.gym import make
from rlrun.experiments.configs.cartpole import CONFIGS, build_runner
from rlrun.samplers.auto.apply import layout_affinity, sampler_class
from rlrun.samplers.auto.cost_model import Layout
from rlrun.samplers.auto.run import check_speed, choose_for_run
from rlrun.utils.logging.context import logger_context
from rlrun.utils.plotting import plot_progress

LOG_DIR = os.path.join("data", "quick_start")  # one fixed folder, so that --resume finds the run again


def newest_run(run_ID: int) -> str:
    """The ID of the newest run folder of ``run_ID`` under LOG_DIR (``0``, ``0-2``, ...)."""
    runs = glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}")) + glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}-*"))
    if not runs:
        return str(run_ID)
    return os.path.basename(max(runs, key=os.path.getmtime)).removeprefix("run_")


def build_and_train(
    n_steps: int = 100_000,
    seed: int = 0,
    run_ID: int = 0,
    log_interval_steps: int = 10_000,
    resume: bool = False,
    sampler: str = "auto",
):
    # sampler="auto" times this run's SerialSampler for a few batches; for a run long enough to pay for it,
    # it then measures CartPole, the agent and the machine for a few seconds and prints which sampler layout
    # it predicts fastest (docs/choosing_a_sampler.md). "serial" or "cpu" name one instead.
    choice = None
    if sampler == "auto":
        choice = choose_for_run(make, dict(id="CartPole-v1"), CategoricalPgAgent, CONFIGS["ppo"]["agent"], CONFIGS["ppo"]["sampler"], n_steps=n_steps)  # fmt: skip
        layout = choice.layout
    else:
        layout = Layout("serial") if sampler == "serial" else Layout("cpu", 2)
    # SerialSampler (or the chosen one)(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=32, batch_B=8,
    # ...), PPO(**CONFIGS["ppo"]["algo"]), CategoricalPgAgent(), wired by MinibatchRlEval; a checkpoint after
    # every log row, so that Ctrl-C loses nothing and --resume continues from the newest one.
    runner = build_runner(
        "ppo", seed=seed, n_steps=n_steps, log_interval_steps=log_interval_steps, checkpoint=True, resume=resume,
        SamplerCls=sampler_class(layout.kind), affinity=layout_affinity(layout),
    )  # fmt: skip
    if choice is not None:
        check_speed(runner.sampler, choice)  # a warning in the log if the first batches run 20% off
    config = {**CONFIGS["ppo"], "env": "CartPole-v1", "n_steps": n_steps, "seed": seed}
    run_name = newest_run(run_ID) if resume else run_ID  # a later run of the same ID took run_<ID>-2, -3, ...
    with logger_context(LOG_DIR, run_name, "ppo_cartpole", config, snapshot_mode="last", resume=resume) as run_dir:
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
    parser.add_argument("--resume", action="store_true", help="continue run_<run_ID> from its newest checkpoint")
    parser.add_argument("--sampler", choices=["auto", "serial", "cpu"], default="auto", help="(default: auto)")
    args = parser.parse_args()
    build_and_train(args.n_steps, args.seed, args.run_ID, args.log_interval_steps, args.resume, args.sampler)
