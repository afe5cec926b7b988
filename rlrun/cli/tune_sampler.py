"""``rlrun tune-sampler --algo ALGO --env ENV``: what ``--sampler auto`` would measure and pick, without training.

    rlrun tune-sampler --algo ppo --env CartPole-v1 --full
    rlrun tune-sampler --algo ppo --env CartPole-v1 --steps 5e6
    rlrun tune-sampler --algo a2c --env pong --n-envs 16 --batch-T 5
    rlrun tune-sampler --algo ppo --env pong --cuda-idx 0 --workers 15

It first times the run's SerialSampler for a few batches, and for a run too short for the full probes
to pay (``--steps``, default the config's ``n_steps``) stops there and keeps serial, as ``rlrun train``
does. Otherwise, or with ``--full``, it builds one env and the config's agent, times them for a few
seconds (env step and reset, the agent's call at every batch size the layouts would make, a round trip
to worker processes, a served step, the CPU the machine leaves free) and prints each layout's predicted
steps per second, the choice and why. The options select and override the config as ``rlrun train``'s do.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from rlrun.cli import train
from rlrun.experiments.builder import agent_and_algo_classes, agent_kwargs_of, env_class
from rlrun.experiments.registry import ALGOS, ConfigError

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--algo", choices=ALGOS, required=True)
    parser.add_argument("--env", required=True, help="a Gymnasium id or an ALE game, as for rlrun train")
    parser.add_argument("--n-envs", "--batch-B", "--batch_B", type=train._positive, default=None, help="training envs (default: the config's)")  # fmt: skip
    parser.add_argument("--batch-T", "--batch_T", type=train._positive, default=None, help="steps per env per batch (default: the config's)")  # fmt: skip
    parser.add_argument("--steps", "--n-steps", "--n_steps", type=train._count, default=None, help="env steps of the run (default: the config's); a short run keeps serial without the full probes")  # fmt: skip
    parser.add_argument("--full", action="store_true", help="measure every layout, however short the run")
    parser.add_argument("--workers", type=train._positive, default=None, help="keep this many workers (parallel layouts only)")  # fmt: skip
    parser.add_argument("--cuda-idx", "--cuda_idx", type=int, default=None, help="the GPU the agent would act on")
    parser.add_argument("--recurrent", action="store_true", help="the LSTM agent (a2c, ppo)")
    parser.add_argument("--async", dest="asynchronous", action="store_true", help="keep a core for an asynchronous optimiser")  # fmt: skip
    parser.add_argument(
        "--set", dest="assignments", action="append", default=[], metavar="SECTION.KEY=VALUE",
        help="override one config value (repeatable), as for rlrun train",
    )  # fmt: skip


def main(args: argparse.Namespace, write: Callable[[str], object] = print) -> int:
    from rlrun.samplers.auto.run import choose_for_run

    options = train.build_defaults()
    for key in ("algo", "env", "steps", "n_envs", "batch_T", "workers", "cuda_idx", "recurrent", "assignments"):
        setattr(options, key, getattr(args, key))
    try:
        env, source, config = train.resolve_config(options)
        _, AgentCls = agent_and_algo_classes(args.algo, env.family, args.recurrent)
        write(f"rlrun tune-sampler: {args.algo} on {env.name} ({env.family}), config {source}")
        choice = choose_for_run(
            env_class(env),
            dict(config["env"]),
            AgentCls,
            agent_kwargs_of(config),
            config["sampler"],
            args.workers,
            args.cuda_idx,
            args.asynchronous,
            write,
            n_steps=None if args.full else int(config["runner"]["n_steps"]),
        )
        if choice.costs is None:
            write("  (--full measures every layout anyway; --steps N judges a run of N steps)")
    except (ConfigError, TypeError, ValueError) as error:
        print(f"rlrun tune-sampler: {error}", file=sys.stderr)
        return 2
    return 0
