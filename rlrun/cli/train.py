"""``rlrun train --algo ALGO --env ENV``: a training run from a ready-made config, without a script.

    rlrun train --algo ppo --env CartPole-v1 --n-envs 8 --steps 100000
    rlrun train --algo sac --env Pendulum-v1 --steps 20000
    rlrun train --algo dqn --env pong --sampler gpu --n-envs 8 --steps 1000000

The config comes from the algorithm and the env's family (discrete Gymnasium envs: the tuned CartPole
configs; continuous: the Pendulum configs, or rlpyt's MuJoCo configs for MuJoCo ids; Atari games:
rlpyt's Atari configs). The options below override it, then each ``--set SECTION.KEY=VALUE`` (a Python
literal; sections env, sampler, algo, optim, agent, model, runner), e.g.
``--set algo.learning_rate=1e-3 --set sampler.batch_T=64``. The run logs to its own folder like a
script's (``./data/local/<date>/<time>/<log-dir>/run_<run-id>``; an absolute ``--log-dir`` is used as
given) and ends with ``learning_curve.png`` there.

It writes a checkpoint after every log row (``--checkpoint-every``), so that a run stopped by Ctrl-C,
SIGTERM or a crash continues where it was with ``rlrun train --resume RUN_DIR``, which reads the
command from the run's ``params.json`` and appends to its ``progress.csv``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

from rlrun.agents.base import BaseAgent
from rlrun.experiments.builder import SAMPLERS, build_runner, choose_auto
from rlrun.experiments.registry import (
    ALGOS,
    ConfigError,
    EnvChoice,
    apply_assignment,
    eval_settings,
    resolve_env,
    select_config,
)
from rlrun.runners.contracts import AlgorithmContract

__all__ = [
    "add_arguments",
    "main",
    "resolve_config",
    "check_can_learn",
    "format_config",
    "resumed_args",
    "stored_args",
    "train_command_args",
    "resolved_run",
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--algo", choices=ALGOS, help="(required, unless --resume)")
    parser.add_argument("--env", help="a Gymnasium id (CartPole-v1, Pendulum-v1, Hopper-v5) or an ALE game (pong) (required, unless --resume)")  # fmt: skip
    parser.add_argument(
        "--sampler", "--sample_mode", default="auto", choices=SAMPLERS,
        help="auto times the run's serial sampler, and for a run long enough to pay for it measures the env and "
        "the agent for a few seconds and picks the fastest layout, printing its table (`rlrun tune-sampler` prints "
        "it without training; docs/choosing_a_sampler.md) (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--steps", "--n-steps", "--n_steps", type=_count, default=None,
        help="env steps to train (runner.n_steps; default: the config's, printed at the start, e.g. 100k on CartPole)",
    )  # fmt: skip
    parser.add_argument("--n-envs", "--batch-B", "--batch_B", type=_positive, default=None, help="training envs (sampler.batch_B; default: the config's)")  # fmt: skip
    parser.add_argument("--batch-T", "--batch_T", type=_positive, default=None, help="steps per env per batch (sampler.batch_T; default: the config's)")  # fmt: skip
    parser.add_argument(
        "--log-interval", "--log-interval-steps", "--log_interval_steps", type=_positive, default=None,
        help="env steps between log rows (default: the config's)",
    )  # fmt: skip
    parser.add_argument("--eval-envs", "--eval_n_envs", type=int, default=None, help="evaluation envs; 0 disables evaluation (default: the config's)")  # fmt: skip
    parser.add_argument("--workers", "--n_parallel", type=_positive, default=None, help="worker processes of a parallel sampler (default: one per usable CPU, at most one per env)")  # fmt: skip
    parser.add_argument(
        "--cuda-idx", "--cuda_idx", type=int, default=None, help="the GPU to train on (default: the CPU)"
    )
    parser.add_argument(
        "--torch-threads", type=_positive, default=None, metavar="N",
        help="torch threads of the training process (default: 1 for MLPs; for Atari networks, the CPUs the "
        "sampler's workers leave, at least 1). A synchronous sampler's workers wait while the model trains, so "
        "on an otherwise idle machine a convolutional network trains faster on every CPU (docs/performance.md)",
    )  # fmt: skip
    parser.add_argument("--recurrent", action="store_true", help="the LSTM agent (a2c, ppo)")
    parser.add_argument(
        "--set", dest="assignments", action="append", default=[], metavar="SECTION.KEY=VALUE",
        help="override one config value (repeatable), e.g. algo.learning_rate=1e-3",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=None, help="(default: drawn, and logged in params.json)")
    parser.add_argument("--log-dir", "--log_dir", default=None, help="(default: ALGO_ENV)")
    parser.add_argument("--run-id", "--run_ID", default="0", help="the run folder is run_<run-id> (default: %(default)s)")  # fmt: skip
    parser.add_argument("--name", default=None, help="the experiment's name in params.json (default: ALGO_ENV)")
    parser.add_argument(
        "--checkpoint-every", type=int, default=1, metavar="LOG_ROWS",
        help="write a checkpoint after every LOG_ROWS log rows and at the end; 0 writes none (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--checkpoint-replay", action=argparse.BooleanOptionalAction, default=True,
        help="keep the replay buffer in checkpoints (an Atari replay of 1M steps is about 8 GB) (default: keep it)",
    )  # fmt: skip
    parser.add_argument(
        "--resume", default=None, metavar="RUN_DIR",
        help="continue the run in RUN_DIR from its newest checkpoint, with the command in its params.json "
        "(--steps may raise the total; other options are taken from the first command)",
    )  # fmt: skip
    parser.add_argument(
        "--video-every", type=_positive, default=None, metavar="LOG_ROWS",
        help="every LOG_ROWS log rows, record one evaluation episode to RUN_DIR/videos/itr_<itr>.mp4 (and to W&B "
        "with --wandb); the video extra",
    )  # fmt: skip
    parser.add_argument(
        "--tensorboard", action="store_true",
        help="also write TensorBoard event files into the run folder (the tensorboard extra); view them with "
        "`tensorboard --logdir RUN_DIR`",
    )  # fmt: skip
    parser.add_argument(
        "--wandb", nargs="?", const="rlrun", default=None, metavar="PROJECT",
        help="also track the run with Weights & Biases, in PROJECT (default: $WANDB_PROJECT, else rlrun); the "
        "wandb extra; WANDB_MODE=offline keeps it in the run folder for a later `wandb sync`",
    )  # fmt: skip
    parser.add_argument(
        "--worker-restarts", type=_non_negative, default=0, metavar="N",
        help="replace a parallel sampler's worker that crashes, hangs or is stopped, up to N times in the run; the "
        "batch it was collecting is collected again (progress.csv: WorkerRestarts; docs/parallel_sampling.md) "
        "(default: 0, the first fault ends the run)",
    )  # fmt: skip
    parser.add_argument(
        "--progress-bar", action=argparse.BooleanOptionalAction, default=None,
        help="show the progress bar (default: on a terminal only, or as RLRUN_PROGRESS says)",
    )  # fmt: skip


# What a resumed run takes from the command line rather than from the first command.
_RESUME_OPTIONS = ("resume", "steps", "progress_bar", "torch_threads")
# What a config prints by name: classes and functions (EnvCls, OptimCls, ...).
_NAMED = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def train_command_args(run_dir: str) -> dict[str, Any] | None:
    """The options of the ``rlrun train`` command that made ``run_dir`` as its ``params.json`` keeps them;
    None when no ``rlrun train`` made it (a script's run, or no params.json)."""
    path = os.path.join(run_dir, "params.json")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        command = json.load(f).get("command")
    args = command.get("args") if isinstance(command, dict) else None
    return args if isinstance(args, dict) else None


def stored_args(run_dir: str, purpose: str = "resume") -> argparse.Namespace:
    """The options of the ``rlrun train`` command that made ``run_dir``, from its ``params.json``;
    ``purpose`` ("resume" or "play") picks the advice for a folder that no ``rlrun train`` made."""
    if not os.path.isfile(os.path.join(run_dir, "params.json")):
        raise ConfigError(f"{run_dir}: no params.json there; give the run folder that `rlrun train` printed.")
    stored = train_command_args(run_dir)
    if stored is None:
        advice = (
            "continue it by running its script again with resume (the bundled examples take --resume; a script "
            "passes resume=True to logger_context and the runner: docs/checkpoints.md); `rlrun info "
            f"{run_dir}` shows the command line that started it"
            if purpose == "resume"
            else "rlrun play rebuilds the runs of `rlrun train` only; load this run's params.pkl into its agent "
            "as docs/checkpoints.md shows (Running a trained agent from its snapshot)"
        )
        raise ConfigError(
            f"{run_dir}: its params.json does not hold the options of an `rlrun train` command (the run was "
            f"started by a script or by an older rlrun): {advice}."
        )
    return argparse.Namespace(**{**vars(build_defaults()), **stored})


def resolved_run(run_dir: str, purpose: str = "resume") -> tuple[argparse.Namespace, EnvChoice, dict[str, Any]]:
    """``(options, env, config)`` of the ``rlrun train`` run in ``run_dir``, as its command resolved them."""
    args = stored_args(run_dir, purpose)
    env, _, config = resolve_config(args)
    return args, env, config


def resumed_args(args: argparse.Namespace) -> argparse.Namespace:
    """The first command's options, read from ``RUN_DIR/params.json``, with ``--resume`` and ``--steps``."""
    run_dir = os.path.abspath(args.resume)
    if not os.path.basename(run_dir).startswith("run_"):
        raise ConfigError(f"--resume {args.resume}: a run folder is named run_<run-id>.")
    merged = vars(stored_args(run_dir))
    for key in _RESUME_OPTIONS:
        value = getattr(args, key)
        if value is not None:
            merged[key] = value
    merged["resume"] = run_dir
    return argparse.Namespace(**merged)


def build_defaults() -> argparse.Namespace:
    """The options' defaults (for a params.json written before an option existed)."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args([])


def _count(text: str) -> int:
    value = int(float(text))  # 1e6 as well as 1000000
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of steps")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number >= 0")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def resolve_config(args: argparse.Namespace) -> tuple[EnvChoice, str, dict[str, Any]]:
    """``(env, source, config)``: the selected config with the options and then each ``--set`` applied."""
    env = resolve_env(args.env)
    source, config = select_config(
        args.algo, env, recurrent=args.recurrent, parallel=args.sampler not in ("serial", "auto")
    )
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


def check_can_learn(algo_name: str, algo: AlgorithmContract[BaseAgent], config: dict[str, Any]) -> None:
    """Refuse a run that would end without one gradient step: fewer steps than one batch, or than the
    replay algorithms' ``min_steps_learn``."""
    n_steps = int(config["runner"]["n_steps"])
    batch = int(config["sampler"]["batch_T"]) * int(config["sampler"]["batch_B"])
    if n_steps < batch:
        raise ConfigError(
            f"--steps {n_steps:,} is less than one batch ({batch:,} = batch_T x batch_B): the run would not "
            f"train. Give --steps {batch:,} or more, or a smaller --batch-T / --n-envs."
        )
    learn_from = algo.min_steps_learn  # the replay algorithms' warm-up; 0 for A2C and PPO
    if learn_from and learn_from >= n_steps:
        raise ConfigError(
            f"{algo_name} starts learning after {int(learn_from):,} env steps (algo.min_steps_learn), but the run "
            f"has {n_steps:,} (--steps): it would end without one gradient step. Give --steps above "
            f"{int(learn_from):,}, or start learning sooner with --set algo.min_steps_learn=N."
        )


def format_config(config: Mapping[str, Mapping[str, object]]) -> list[str]:
    """One line per non-empty section: ``  algo: discount=0.99 learning_rate=0.001 ...``."""
    lines = []
    for section, values in config.items():
        if values:
            # Classes and functions in a config print by name, other values by repr.
            items = " ".join(f"{k}={v.__name__ if isinstance(v, _NAMED) else repr(v)}" for k, v in values.items())
            lines.append(f"  {section}: {items}")
    return lines


def main(args: argparse.Namespace, write: Callable[[str], object] = print) -> int:
    from rlrun.runners.checkpoint import CheckpointPolicy, NothingToResumeError
    from rlrun.samplers.auto.run import check_speed
    from rlrun.utils.logging import logger
    from rlrun.utils.logging.context import logger_context
    from rlrun.utils.logging.run_lock import RunFolderBusyError
    from rlrun.utils.plotting import plot_progress
    from rlrun.utils.seed import make_seed

    try:
        if args.resume is not None:
            args = resumed_args(args)
        elif args.algo is None or args.env is None:
            raise ConfigError("--algo and --env are required (or --resume RUN_DIR to continue a run).")
        if args.checkpoint_every < 0:
            raise ConfigError(f"--checkpoint-every {args.checkpoint_every}: give a number of log rows, or 0 for none.")  # fmt: skip
        env, source, config = resolve_config(args)
        seed = make_seed() if args.seed is None else args.seed
        args.seed = seed  # kept in params.json, so that --resume rebuilds the same run
        recurrent = args.recurrent or args.algo == "r2d1"
        verb = f"resuming {args.resume}:" if args.resume else "rlrun train:"
        write(f"{verb} {args.algo} on {env.name} ({env.family}), config {source}, {args.sampler} sampler, seed {seed}")  # fmt: skip
        for line in format_config(config):
            write(line)
        built = copy.deepcopy(config)
        if args.checkpoint_every > 0:
            built["runner"]["checkpoint"] = CheckpointPolicy(every_logs=args.checkpoint_every, replay=args.checkpoint_replay)  # fmt: skip
        else:
            built["runner"]["checkpoint"] = False
        built["runner"]["resume"] = args.resume is not None
        built["runner"]["progress_bar"] = args.progress_bar
        if args.video_every is not None:
            built["runner"]["video_every"] = args.video_every
        choice, sampler, workers = None, args.sampler, args.workers
        if args.sampler == "auto":
            # Measured once, when the run starts; params.json keeps the layout (auto_layout), so that a
            # resumed run samples as the first start did rather than measuring again.
            layout = vars(args).get("auto_layout")  # a resumed run's, from params.json
            if layout is None:
                choice = choose_auto(args.algo, env, config, recurrent, args.workers, args.cuda_idx)
                layout = [choice.layout.kind, choice.layout.workers or None]
                args.auto_layout = layout
            else:
                write(f"sampler=auto: the layout this run started with, {layout[0]} with {layout[1] or 0} workers")
            sampler, workers = layout
        if args.worker_restarts:
            if sampler == "serial":
                write(f"--worker-restarts {args.worker_restarts}: the serial sampler has no workers to restart; ignored.")  # fmt: skip
            else:
                built["sampler"]["worker_restarts"] = args.worker_restarts
        runner = build_runner(
            args.algo, env, built, sampler, recurrent, workers, args.cuda_idx, seed, args.torch_threads
        )
        if choice is not None:
            check_speed(runner.sampler, choice)  # a warning in the log if the first batches run 20% off
        check_can_learn(args.algo, runner.algo, config)
        if args.tensorboard:
            try:
                import torch.utils.tensorboard  # noqa: F401
            except ImportError as error:
                raise ConfigError("--tensorboard needs TensorBoard: pip install 'rlrun[tensorboard]'.") from error
        if args.wandb:
            try:
                import wandb  # noqa: F401  (checked before any folder is made)
            except ImportError as error:
                raise ConfigError("--wandb needs Weights & Biases: pip install 'rlrun[wandb]'.") from error
    except ConfigError as error:
        print(f"rlrun train: {error}", file=sys.stderr)
        return 2
    default_name = f"{args.algo}_{env.short_name}".replace("/", "_")
    name = args.name or default_name
    stored_args = {k: v for k, v in vars(args).items() if k not in ("command", "resume", "progress_bar")}
    params = dict(
        config,
        command=dict(
            algo=args.algo, env=env.name, family=env.family, config=source, sampler=args.sampler, seed=seed,
            args=stored_args,
        ),
    )  # fmt: skip
    project = None if args.wandb in (None, "rlrun") else args.wandb  # "rlrun": --wandb alone ($WANDB_PROJECT)
    tracking: bool | dict[str, Any] = bool(args.wandb) and (dict(project=project) if project else True)
    if args.resume:
        log_dir, run_id = os.path.dirname(args.resume), os.path.basename(args.resume).removeprefix("run_")
        context = logger_context(
            log_dir, run_id, name, params, snapshot_mode="last", resume=True, use_summary_writer=args.tensorboard,
            wandb=tracking,
        )  # fmt: skip
    else:  # a snapshot of the agent at each log row, for `rlrun play`
        context = logger_context(
            args.log_dir or default_name, args.run_id, name, params, snapshot_mode="last",
            use_summary_writer=args.tensorboard, wandb=tracking,
        )  # fmt: skip
    try:
        with context as run_dir:
            runner.train()
            logger.log(f"Run folder: {run_dir}")
    except (NothingToResumeError, RunFolderBusyError) as error:
        print(f"rlrun train --resume: {error}", file=sys.stderr)
        return 2
    curve = os.path.join(run_dir, "learning_curve.png")
    try:
        plot_progress(run_dir, curve, title=f"{name} (run {args.run_id})")
    except (KeyError, ValueError) as error:  # no column to plot, e.g. no episode ended yet
        write(f"rlrun train: no learning curve drawn ({error})")
    write(f"run folder: {run_dir}")
    return 0
