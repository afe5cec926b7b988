"""Run a trained agent: whole episodes of one env with the agent in eval mode, outside any sampler."""

from __future__ import annotations

import numpy as np
import torch

from rlrun.envs.base import Env
from rlrun.runners.contracts import AgentContract
from rlrun.utils.buffer import buffer_from_example, numpify_buffer, torchify_buffer

__all__ = ["play_episodes"]


def play_episodes(
    agent: AgentContract, env: Env, n_episodes: int = 1, itr: int = 0, max_steps: int | None = None
) -> list[float]:
    """Play ``n_episodes`` episodes of ``env`` with ``agent`` (initialized on ``env.spaces``, weights
    loaded) in eval mode at iteration ``itr`` (its exploration schedule); return each episode's return.

    An episode ends at the env's ``done`` (for Atari envs with ``episodic_lives``, at each life lost) or
    after ``max_steps`` steps. The agent sees what a sampler gives it: the observation, the previous
    action and the previous reward, in batches of one.
    """
    if n_episodes < 1:
        raise ValueError(f"n_episodes must be >= 1, got {n_episodes!r}.")
    first = env.reset()
    observation = buffer_from_example(first, 1)
    observation[0] = first
    action = buffer_from_example(env.action_space.null_value(), 1)
    reward = np.zeros(1, dtype=np.float32)
    obs_pyt, act_pyt, rew_pyt = torchify_buffer((observation, action, reward))
    agent.eval_mode(itr)
    agent.reset()
    returns: list[float] = []
    episode_return, episode_steps = 0.0, 0
    while len(returns) < n_episodes:
        with torch.no_grad():
            action_pyt, _ = agent.step(obs_pyt, act_pyt, rew_pyt)
        action[:] = numpify_buffer(action_pyt)
        o, r, done, _ = env.step(action[0])
        episode_return += float(r)
        episode_steps += 1
        reward[0] = r
        if done or (max_steps is not None and episode_steps >= max_steps):
            returns.append(episode_return)
            episode_return, episode_steps = 0.0, 0
            agent.reset_one(idx=0)
            o = env.reset()
        observation[0] = o
    return returns
