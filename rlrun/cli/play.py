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
    import sys

    import gymnasium

    from rlrun.cli.train import resolved_run
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
        run_args, env_choice, config = resolved_run(args.run)
        snapshot = load_snapshot(args.run)
        built = copy.deepcopy(config)
        built["sampler"]["eval_n_envs"] = 0  # one env is built here; the sampler never starts
        for key in ("eval_max_steps", "eval_max_trajectories"):
            built["sampler"].pop(key, None)
        runner = build_runner(run_args.algo, env_choice, built, "serial", run_args.recurrent, seed=run_args.seed)
    except (ConfigError, FileNotFoundError) as error:
        print(f"rlrun play: {error}", file=sys.stderr)
        return 2
    sampler, agent = runner.sampler, runner.agent
    env_kwargs = dict(sampler.eval_env_kwargs or sampler.env_kwargs)
    atari = env_choice.family == "atari"
    if args.render and not atari:
        env_kwargs["render_mode"] = "human"
    if args.video and not atari:
        env_kwargs["render_mode"] = "rgb_array"
    env = None
    try:
        env = sampler.EnvCls(**env_kwargs)  # a Gymnasium env draws at its probe reset with --render
        if args.video:
            env = RecordVideo(env, args.video)
        agent.initialize(env.spaces)
        agent.load_state_dict(snapshot["agent_state_dict"])
        write(f"rlrun play: {run_args.algo} on {env_choice.name}, snapshot of iteration {snapshot['itr']} "
              f"({snapshot['cum_steps']:,} training steps)")  # fmt: skip
        returns = play_episodes(agent, env, args.episodes, itr=snapshot["itr"], max_steps=args.max_steps)
        for episode, episode_return in enumerate(returns, 1):
            write(f"episode {episode}: return {episode_return:g}")
    except gymnasium.error.DependencyNotInstalled:
        print(f"rlrun play --render: Gymnasium draws {env_choice.name} with pygame, which is not installed: "
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
