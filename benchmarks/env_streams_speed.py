"""What per-env random streams cost per agent step, against torch's global RNG.

Prints, for each agent and batch size, the microseconds of one ``agent.step`` without and with
``seed_env_streams``, and of the stream draw alone. Times are CPU time of this process (so other
load on the machine inflates them less), the best of several repeats, one torch thread.

    PYTHONPATH=. python benchmarks/env_streams_speed.py
"""

from __future__ import annotations

import time
import timeit

import numpy as np
import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.agents.pg.gaussian import GaussianPgAgent
from rlrun.envs.gym import make


def microseconds(fn, number: int = 2000, repeat: int = 5) -> float:
    fn()
    return min(timeit.Timer(fn, timer=time.process_time).repeat(repeat=repeat, number=number)) / number * 1e6


def main() -> None:
    torch.set_num_threads(1)
    print(
        f"{'agent':20s} {'B':>4s} {'global RNG':>11s} {'streams':>9s} {'extra':>7s} {'draw only':>10s}  (µs per step)"
    )
    for AgentCls, env_id in [
        (CategoricalPgAgent, "CartPole-v1"),
        (DqnAgent, "CartPole-v1"),
        (GaussianPgAgent, "Pendulum-v1"),
    ]:
        env = make(env_id)
        for B in (1, 8, 16, 64):
            agent = AgentCls()
            agent.initialize(env.spaces)
            agent.sample_mode(0)
            observation = torch.zeros(B, *env.spaces.observation.shape)
            prev_action = torch.as_tensor(np.stack([np.asarray(env.spaces.action.null_value())] * B))
            prev_reward = torch.zeros(B)

            def step(agent=agent, observation=observation, prev_action=prev_action, prev_reward=prev_reward):
                agent.step(observation, prev_action, prev_reward)

            global_rng = microseconds(step)
            agent.seed_env_streams(0, list(range(B)))
            streams = microseconds(step)
            n = agent.distribution.n_uniforms
            draw = microseconds(lambda agent=agent, n=n: agent._sample_streams.uniform(n))
            print(
                f"{AgentCls.__name__:20s} {B:4d} {global_rng:11.1f} {streams:9.1f} {streams - global_rng:7.1f} {draw:10.1f}"
            )
        env.close()


if __name__ == "__main__":
    main()
