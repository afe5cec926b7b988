"""``rlrun train --algo ALGO --env ENV``: a training run from a ready-made config, without a script.

    rlrun train --algo ppo --env CartPole-v1 --sampler cpu --n-envs 8 --steps 100000
    rlrun train --algo sac --env Pendulum-v1 --steps 20000
    rlrun train --algo dqn --env pong --sampler gpu --n-envs 8 --steps 1000000

The config comes from the algorithm and the env's family (discrete Gymnasium envs: the tuned CartPole
configs; continuous: the Pendulum configs, or rlpyt's MuJoCo configs for MuJoCo ids; Atari games:
rlpyt's Atari configs). The options below override it, then each ``--set SECTION.KEY=VALUE`` (a Python
literal; sections env, sampler, algo, optim, agent, model, runner), e.g.
``--set algo.learning_rate=1e-3 --set sampler.batch_T=64``. The run logs to its own folder like a
script's (``./data/local/<date>/<time>/<log-dir>/run_<run-id>``; an absolute ``--log-dir`` is used as
given) and ends with ``learning_curve.png`` there.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
from collections.abc import Callable
from typing import Any

from rlrun.experiments.builder import SAMPLERS, build_runner
from rlrun.experiments.registry import (
    ALGOS,
    ConfigError,
    EnvChoice,
    apply_assignment,
    eval_settings,
    resolve_env,
    select_config,
)

__all__ = ["add_arguments", "main", "resolve_config", "format_config"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--algo", required=True, choices=ALGOS)
    parser.add_argument("--env", required=True, help="a Gymnasium id (CartPole-v1, Pendulum-v1, Hopper-v5) or an ALE game (pong)")  # fmt: skip
    parser.add_argument("--sampler", default="serial", choices=SAMPLERS, help="(default: %(default)s)")
    parser.add_argument("--steps", type=_count, default=None, help="env steps to train (runner.n_steps)")
    parser.add_argument("--n-envs", type=_positive, default=None, help="training envs (sampler.batch_B)")
    parser.add_argument("--batch-T", type=_positive, default=None, help="steps per env per batch (sampler.batch_T)")
    parser.add_argument("--log-interval", type=_positive, default=None, help="env steps between log rows")
    parser.add_argument("--eval-envs", type=int, default=None, help="evaluation envs; 0 disables evaluation")
    parser.add_argument("--workers", type=_positive, default=None, help="worker processes of a parallel sampler")
    parser.add_argument("--cuda-idx", type=int, default=None, help="the GPU to train on (default: the CPU)")
    parser.add_argument("--recurrent", action="store_true", help="the LSTM agent (a2c, ppo)")
    parser.add_argument(
        "--set", dest="assignments", action="append", default=[], metavar="SECTION.KEY=VALUE",
        help="override one config value (repeatable), e.g. algo.learning_rate=1e-3",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=None, help="(default: drawn, and logged in params.json)")
    parser.add_argument("--log-dir", default=None, help="(default: ALGO_ENV)")
    parser.add_argument("--run-id", default="0", help="the run folder is run_<run-id> (default: %(default)s)")
    parser.add_argument("--name", default=None, help="the experiment's name in params.json (default: ALGO_ENV)")


def _count(text: str) -> int:
    value = int(float(text))  # 1e6 as well as 1000000
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of steps")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def resolve_config(args: argparse.Namespace) -> tuple[EnvChoice, str, dict[str, Any]]:
    """``(env, source, config)``: the selected config with the options and then each ``--set`` applied."""
    env = resolve_env(args.env)
    source, config = select_config(args.algo, env, recurrent=args.recurrent, parallel=args.sampler != "serial")
    sampler, runner = config["sampler"], config["runner"]
    for value, section, key in (
        (args.steps, runner, "n_steps"),
        (args.log_interval, runner, "log_interval_steps"),
        (args.n_envs, sampler, "batch_B"),
        (args.batch_T, sampler, "batch_T"),
    ):
        if value is not None:
            section[key] = value
    if args.eval_envs is not None:
        if args.eval_envs <= 0 or "eval_max_steps" not in sampler:
            episodes = sampler.get("eval_max_trajectories") or 10
            sampler.update(eval_settings(args.eval_envs, env.episode_steps, episodes))
        else:
            sampler["eval_n_envs"] = args.eval_envs
    for assignment in args.assignments:
        apply_assignment(config, assignment)
    return env, source, config


def format_config(config: dict[str, Any]) -> list[str]:
    """One line per non-empty section: ``  algo: discount=0.99 learning_rate=0.001 ...``."""
    lines = []
    for section, values in config.items():
        if values:
            items = " ".join(f"{k}={getattr(v, '__name__', None) or v!r}" for k, v in values.items())
            lines.append(f"  {section}: {items}")
    return lines


def main(args: argparse.Namespace, write: Callable[[str], Any] = print) -> int:
    from rlrun.utils.logging import logger
    from rlrun.utils.logging.context import logger_context
    from rlrun.utils.plotting import plot_progress
    from rlrun.utils.seed import make_seed

    try:
        env, source, config = resolve_config(args)
        seed = make_seed() if args.seed is None else args.seed
        recurrent = args.recurrent or args.algo == "r2d1"
        write(f"rlrun train: {args.algo} on {env.name} ({env.family}), config {source}, {args.sampler} sampler, seed {seed}")  # fmt: skip
        for line in format_config(config):
            write(line)
        runner = build_runner(
            args.algo, env, copy.deepcopy(config), args.sampler, recurrent, args.workers, args.cuda_idx, seed
        )
    except ConfigError as error:
        print(f"rlrun train: {error}", file=sys.stderr)
        return 2
    default_name = f"{args.algo}_{env.short_name}".replace("/", "_")
    name = args.name or default_name
    params = dict(
        config,
        command=dict(algo=args.algo, env=env.name, family=env.family, config=source, sampler=args.sampler, seed=seed),
    )
    with logger_context(args.log_dir or default_name, args.run_id, name, params) as run_dir:
        runner.train()
        logger.log(f"Run folder: {run_dir}")
    curve = os.path.join(run_dir, "learning_curve.png")
    try:
        plot_progress(run_dir, curve, title=f"{name} (run {args.run_id})")
    except (KeyError, ValueError) as error:  # no column to plot, e.g. no episode ended yet
        write(f"rlrun train: no learning curve drawn ({error})")
    write(f"run folder: {run_dir}")
    return 0
