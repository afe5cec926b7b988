"""``rlrun play RUN_DIR``: load the agent a ``rlrun train`` run saved and play whole episodes with it.

    rlrun play data/local/20261202/061500/a2c_CartPole-v1/run_0 --episodes 5
    rlrun play RUN_DIR --render                # watch it (Gymnasium's render_mode="human")

The agent, its model and the env are rebuilt from the run's ``params.json`` (the command that started
it), the weights come from its newest snapshot (``params.pkl``). The agent acts in eval mode at the
snapshot's iteration; one line per episode gives its return. For a run made by a script, follow the
recipe in docs/checkpoints.md, which does the same in a few lines.
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Callable
from typing import Any

__all__ = ["add_arguments", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN_DIR", help="the run folder that `rlrun train` printed")
    parser.add_argument("--episodes", type=int, default=5, help="episodes to play (default: %(default)s)")
    parser.add_argument("--max-steps", type=int, default=None, help="end an episode after this many steps")
    parser.add_argument("--render", action="store_true", help="show the env (render_mode='human'; not for Atari)")


def main(args: argparse.Namespace, write: Callable[[str], Any] = print) -> int:
    import sys

    from rlrun.cli.train import resolved_run
    from rlrun.experiments.builder import build_runner
    from rlrun.experiments.registry import ConfigError
    from rlrun.runners.play import play_episodes
    from rlrun.utils.logging.snapshot import load_snapshot

    if args.episodes < 1:
        print(f"rlrun play: --episodes {args.episodes}: play at least one.", file=sys.stderr)
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
    env_kwargs = dict(getattr(sampler, "eval_env_kwargs", None) or sampler.env_kwargs)
    if args.render:
        env_kwargs["render_mode"] = "human"
    env = sampler.EnvCls(**env_kwargs)
    try:
        agent.initialize(env.spaces)
        agent.load_state_dict(snapshot["agent_state_dict"])
        write(f"rlrun play: {run_args.algo} on {env_choice.name}, snapshot of iteration {snapshot['itr']} "
              f"({snapshot['cum_steps']:,} training steps)")  # fmt: skip
        returns = play_episodes(agent, env, args.episodes, itr=snapshot["itr"], max_steps=args.max_steps)
        for episode, episode_return in enumerate(returns, 1):
            write(f"episode {episode}: return {episode_return:g}")
    finally:
        env.close()
    write(f"average return over {len(returns)} episodes: {sum(returns) / len(returns):g}")
    return 0
