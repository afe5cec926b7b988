"""rlrun: deep reinforcement learning in PyTorch, with rlpyt's names and shared-memory samplers.

The classes a training script needs are importable from here (``from rlrun import SerialSampler``) as
well as from rlpyt's module paths (``rlrun.samplers.serial.sampler.SerialSampler``). They are loaded
on first use, so ``import rlrun`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from rlrun.compat.star_imports import install as _install_rlpyt_star_imports

__version__ = "0.1.0"

_install_rlpyt_star_imports()  # the edge: rlpyt's star imports (rlrun.compat); the core never imports it

_EXPORTS = {
    "make": "rlrun.envs.gym",
    "GymEnvWrapper": "rlrun.envs.gym",
    "AtariEnv": "rlrun.envs.atari.atari_env",
    "AtariTrajInfo": "rlrun.envs.atari.atari_env",
    "IntBox": "rlrun.spaces.int_box",
    "FloatBox": "rlrun.spaces.float_box",
    "Composite": "rlrun.spaces.composite",
    "TrajInfo": "rlrun.samplers.collections",
    "SerialSampler": "rlrun.samplers.serial.sampler",
    "CpuSampler": "rlrun.samplers.parallel.cpu.sampler",
    "CategoricalPgAgent": "rlrun.agents.pg.categorical",
    "GaussianPgAgent": "rlrun.agents.pg.gaussian",
    "AtariFfAgent": "rlrun.agents.pg.atari",
    "MujocoFfAgent": "rlrun.agents.pg.mujoco",
    "DqnAgent": "rlrun.agents.dqn.dqn_agent",
    "AtariDqnAgent": "rlrun.agents.dqn.atari.atari_dqn_agent",
    "A2C": "rlrun.algos.pg.a2c",
    "PPO": "rlrun.algos.pg.ppo",
    "DQN": "rlrun.algos.dqn.dqn",
    "MinibatchRl": "rlrun.runners.minibatch_rl",
    "MinibatchRlEval": "rlrun.runners.minibatch_rl",
    "SyncRl": "rlrun.runners.sync_rl",
    "SyncRlEval": "rlrun.runners.sync_rl",
    "logger_context": "rlrun.utils.logging.context",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rlrun' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
