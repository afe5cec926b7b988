"""SAC, TD3 and DDPG on Pendulum-v1 with the RL Zoo's tuned settings, and a builder for an evaluating runner.

Pendulum-v1 is classic control, not MuJoCo; it lives here as the quick check of the continuous-control
algorithms (a few minutes on one core). :func:`rlrun.envs.gym.make` rescales its torque from
``[-2, 2]`` to the agents' ``[-1, 1]``. The settings are the RL Zoo's for Pendulum-v1 written in rlpyt's
keywords (one env, one step per iteration, one gradient step per env step):

- ``"sac"``: Stable-Baselines3's SAC defaults with learning rate 1e-3: batch 256, replay 1M, learning
  from step 100, tau 0.005, discount 0.99, ``[256, 256]`` networks, learned temperature.
- ``"td3"``: discount 0.98, replay 200k, learning from step 10k, exploration noise 0.1, learning
  rates 1e-3, ``[400, 300]`` networks, batch 256 (SB3's default), tau 0.005, policy delay 2, target
  noise 0.2 clipped at 0.5.
- ``"ddpg"``: the same without twin critics, delay or target noise.

Before learning starts SB3 acts uniformly at random; rlrun's agents keep rlpyt's pretraining
exploration (TD3: noise std 0.5; SAC: std 0.75 before the squash; DDPG: its ``action_std``).

``THRESHOLDS`` are the evaluation returns each reaches within ``n_steps`` for seeds 0, 1 and 2 (10
deterministic episodes; see tests/algos/qpg/test_qpg_learning.py and benchmarks/learning_pendulum.py).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from rlrun.agents.base import BaseAgent
from rlrun.agents.qpg.ddpg_agent import DdpgAgent
from rlrun.agents.qpg.sac_agent import SacAgent
from rlrun.agents.qpg.td3_agent import Td3Agent
from rlrun.algos.qpg.ddpg import DDPG
from rlrun.algos.qpg.sac import SAC
from rlrun.algos.qpg.td3 import TD3
from rlrun.envs.gym import make
from rlrun.runners.minibatch_rl import MinibatchRlEval
from rlrun.samplers.serial.sampler import SerialSampler

__all__ = ["CONFIGS", "THRESHOLDS", "build_runner"]

ENV_ID = "Pendulum-v1"
THRESHOLDS = {"sac": -200.0, "td3": -200.0, "ddpg": -300.0}

_DDPG_FAMILY = dict(
    discount=0.98,
    batch_size=256,
    replay_ratio=256,
    replay_size=200_000,
    min_steps_learn=10_000,
    target_update_tau=0.005,
    learning_rate=1e-3,
    q_learning_rate=1e-3,
)

CONFIGS: dict[str, dict[str, Any]] = {
    "sac": dict(
        n_steps=20_000,
        algo=dict(
            discount=0.99,
            batch_size=256,
            replay_ratio=256,
            replay_size=int(1e6),
            min_steps_learn=100,
            target_update_tau=0.005,
            learning_rate=1e-3,
        ),
        agent=dict(model_kwargs=dict(hidden_sizes=[256, 256]), q_model_kwargs=dict(hidden_sizes=[256, 256])),
    ),
    "td3": dict(
        n_steps=20_000,
        algo=dict(_DDPG_FAMILY, target_update_interval=2, policy_update_interval=2),
        agent=dict(
            action_std=0.1,
            target_noise_std=0.2,
            target_noise_clip=0.5,
            model_kwargs=dict(hidden_sizes=[400, 300]),
            q_model_kwargs=dict(hidden_sizes=[400, 300]),
        ),
    ),
    "ddpg": dict(
        n_steps=20_000,
        algo=dict(_DDPG_FAMILY, target_update_interval=1, policy_update_interval=1),
        agent=dict(
            action_std=0.1, model_kwargs=dict(hidden_sizes=[400, 300]), q_model_kwargs=dict(hidden_sizes=[400, 300])
        ),
    ),
}

_CLASSES: dict[str, tuple[type, type]] = {"sac": (SAC, SacAgent), "td3": (TD3, Td3Agent), "ddpg": (DDPG, DdpgAgent)}


def build_runner(
    algo: str,
    seed: int = 0,
    n_steps: int | None = None,
    log_interval_steps: int = 1000,
    eval_episodes: int = 10,
    overrides: Mapping[str, Mapping[str, object]] | None = None,
    affinity: dict[str, Any] | None = None,
) -> MinibatchRlEval[BaseAgent]:
    """A MinibatchRlEval runner for ``algo`` ("sac", "td3" or "ddpg") on Pendulum-v1 with a SerialSampler.

    Evaluates ``eval_episodes`` whole episodes (200 steps each), greedily, every ``log_interval_steps``
    from the first training iteration on. ``overrides`` updates the config's ``algo`` and ``agent``
    keyword dicts. ``affinity=None`` means one torch thread in the training process.
    """
    if algo not in CONFIGS:
        raise KeyError(f"No Pendulum config for {algo!r}; choose from {sorted(CONFIGS)}.")
    config = copy.deepcopy(CONFIGS[algo])
    for part, kwargs in (overrides or {}).items():
        config[part].update(kwargs)
    AlgoCls, AgentCls = _CLASSES[algo]
    eval_n_envs = min(5, eval_episodes)
    sampler = SerialSampler(
        EnvCls=make,
        env_kwargs=dict(id=ENV_ID),
        batch_T=1,
        batch_B=1,
        max_decorrelation_steps=0,
        eval_n_envs=eval_n_envs,
        eval_max_steps=(eval_episodes // eval_n_envs + 1) * 201 * eval_n_envs,
        eval_max_trajectories=eval_episodes,
    )
    return MinibatchRlEval(
        algo=AlgoCls(**config["algo"]),
        agent=AgentCls(**config["agent"]),
        sampler=sampler,
        n_steps=n_steps if n_steps is not None else config["n_steps"],
        seed=seed,
        log_interval_steps=log_interval_steps,
        affinity=dict(master_torch_threads=1) if affinity is None else affinity,
    )
