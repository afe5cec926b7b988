"""``rlrun play RUN_DIR``: load the agent a ``rlrun train`` run saved and play whole episodes with it.

    rlrun play data/local/20261202/061500/a2c_CartPole-v1/run_0 --episodes 5
    rlrun play RUN_DIR --render                # watch it (Gymnasium's render_mode="human")
    rlrun play RUN_DIR --video play.mp4        # record it, headless (rgb_array frames, ffmpeg)

The agent, its model and the env are rebuilt from the run's ``params.json`` (the command that started
it), the weights come from its newest snapshot (``params.pkl``). The agent acts in eval mode at the
snapshot's iteration; one line per episode gives its return. For a run made by a script, follow the
recipe in docs/checkpoints.md, which does the same in a few lines.
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlrun.agents.base import BaseAgent
    from rlrun.envs.base import Env

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN_DIR", help="the run folder that `rlrun train` printed")
    parser.add_argument("--episodes", type=int, default=5, help="episodes to play (default: %(default)s)")
    parser.add_argument("--max-steps", type=int, default=None, help="end an episode after this many steps")
    parser.add_argument("--render", action="store_true", help="show the env (render_mode='human'; not for Atari)")
    parser.add_argument(
        "--video", default=None, metavar="PATH.mp4",
        help="record the episodes into this mp4, one frame per step, without a display (Atari too)",
    )  # fmt: skip


def main(args: argparse.Namespace, write: Callable[[str], object] = print) -> int:
    import os
    import sys

    import gymnasium

    from rlrun.cli.train import resolved_run, train_command_args
    from rlrun.envs.video import RecordVideo
    from rlrun.experiments.builder import build_runner
    from rlrun.experiments.registry import ConfigError
    from rlrun.runners.play import play_episodes
    from rlrun.utils.logging.snapshot import load_snapshot

    if args.episodes < 1:
        print(f"rlrun play: --episodes {args.episodes}: play at least one.", file=sys.stderr)
        return 2
    if args.render and args.video:
        print("rlrun play: give --render (a window) or --video (a file), not both.", file=sys.stderr)
        return 2
    try:
        if train_command_args(args.run) is not None or not os.path.isfile(os.path.join(args.run, "params.json")):
            run_args, env_choice, config = resolved_run(args.run, purpose="play")
            snapshot = load_snapshot(args.run)
            built = copy.deepcopy(config)
            built["sampler"]["eval_n_envs"] = 0  # one env is built here; the sampler never starts
            for key in ("eval_max_steps", "eval_max_trajectories"):
                built["sampler"].pop(key, None)
            runner = build_runner(run_args.algo, env_choice, built, "serial", run_args.recurrent, seed=run_args.seed)
            sampler = runner.sampler
            from rlrun.agents.base import BaseAgent

            agent = runner.agent
            if not isinstance(agent, BaseAgent):  # the runner holds it as a contract; play needs initialize()
                raise TypeError(f"build_runner gave a {type(agent).__name__}, not an rlrun agent.")
            EnvCls, env_kwargs = sampler.EnvCls, dict(sampler.eval_env_kwargs or sampler.env_kwargs)
            atari, what, initialize = env_choice.family == "atari", f"{run_args.algo} on {env_choice.name}", True
        else:  # a script's run: the agent and env its runner recorded (run.json, agent.pt)
            agent, EnvCls, env_kwargs, what = _recorded_run(args.run)
            snapshot = load_snapshot(args.run)
            atari, initialize = "game" in env_kwargs and "id" not in env_kwargs, False
    except (ConfigError, FileNotFoundError) as error:
        print(f"rlrun play: {error}", file=sys.stderr)
        return 2
    if args.render and not atari:
        env_kwargs["render_mode"] = "human"
    if args.video and not atari:
        env_kwargs["render_mode"] = "rgb_array"
    env = None
    try:
        env = EnvCls(**env_kwargs)  # a Gymnasium env draws at its probe reset with --render
        if args.video:
            env = RecordVideo(env, args.video)
        if initialize:
            agent.initialize(env.spaces)
        agent.load_state_dict(snapshot["agent_state_dict"])
        write(f"rlrun play: {what}, snapshot of iteration {snapshot['itr']} "
              f"({snapshot['cum_steps']:,} training steps)")  # fmt: skip
        returns = play_episodes(agent, env, args.episodes, itr=snapshot["itr"], max_steps=args.max_steps)
        for episode, episode_return in enumerate(returns, 1):
            write(f"episode {episode}: return {episode_return:g}")
    except gymnasium.error.DependencyNotInstalled:
        print(f"rlrun play --render: Gymnasium draws {env_kwargs.get('id', 'this env')} with pygame, which is not installed: "
              "pip install 'rlrun[video]'", file=sys.stderr)  # fmt: skip
        return 2
    except ImportError as error:  # the video extra is missing
        print(f"rlrun play --video: {error}", file=sys.stderr)
        return 2
    finally:
        if env is not None:
            env.close()
    write(f"average return over {len(returns)} episodes: {sum(returns) / len(returns):g}")
    if isinstance(env, RecordVideo):
        write(f"video: {env.writer.path} ({env.frames} frames at {env.writer.fps:g} fps)")
    return 0


def _recorded_run(run_dir: str) -> tuple[BaseAgent, Callable[..., Env], dict[str, object], str]:
    """``(agent, EnvCls, env_kwargs, description)`` of a script's run, from its run.json and agent.pt.

    agent.pt is unpickled whole (it is the run's own agent object, written by its runner): only play runs
    from folders you trust, as with any pickle."""
    import os

    import torch

    from rlrun.agents.base import BaseAgent
    from rlrun.experiments.registry import ConfigError
    from rlrun.runners.run_record import AGENT_FILE, import_qualified, read_run_record

    record = read_run_record(run_dir)
    agent_path = os.path.join(run_dir, AGENT_FILE)
    if record is None or not os.path.isfile(agent_path):
        raise ConfigError(
            f"{run_dir}: the run was started by a script, and its folder holds no {AGENT_FILE} (a run of an older "
            "rlrun, or one without snapshots: snapshot_mode='none'). Load its params.pkl into its agent as "
            "docs/checkpoints.md shows (Running a trained agent from its snapshot)."
        )
    agent = torch.load(agent_path, map_location="cpu", weights_only=False)
    if not isinstance(agent, BaseAgent):
        raise ConfigError(
            f"{agent_path} holds a {type(agent).__name__}, not an rlrun agent; it was not written by a runner."
        )
    env_kwargs = dict(record["env_kwargs"])
    env_name = env_kwargs.get("id") or env_kwargs.get("game") or record["env"].rsplit(".", 1)[-1]
    what = f"{record['algo'].rsplit('.', 1)[-1]} on {env_name} (a script's run)"
    return agent, import_qualified(record["env"]), env_kwargs, what
