"""Continuous actions in ``[-1, 1]``: the one place where an env's action bounds are handled.

:func:`rlrun.envs.gym.make` passes every Gymnasium env through :func:`rescale_actions_to_unit`. An env
whose action space is a float ``Box`` with finite bounds other than ``[-1, 1]`` (Pendulum's torque in
``[-2, 2]``, Humanoid's ``[-0.4, 0.4]``) gets Gymnasium's ``RescaleAction``: it declares ``[-1, 1]``
and maps each action linearly onto the env's bounds (``-1 -> low``, ``1 -> high``). Agents, replays
and logs therefore see actions in ``[-1, 1]``, which the continuous-control agents (DDPG, TD3, SAC)
require and which suits Gaussian policy gradients too. Spaces with an infinite bound, and discrete
spaces, are left as they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["needs_rescale", "rescale_actions_to_unit"]


def needs_rescale(action_space: Any) -> bool:
    """True for a float Gymnasium ``Box`` with all bounds finite and not already ``[-1, 1]``."""
    if type(action_space).__name__ != "Box" or not np.issubdtype(action_space.dtype, np.floating):
        return False
    low, high = np.asarray(action_space.low), np.asarray(action_space.high)
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        return False
    return not (np.all(low == -1) and np.all(high == 1))


def rescale_actions_to_unit(env: Any) -> Any:
    """``env`` wrapped in ``gymnasium.wrappers.RescaleAction(env, -1, 1)`` when :func:`needs_rescale`,
    else ``env`` itself."""
    if not needs_rescale(env.action_space):
        return env
    from gymnasium.wrappers import RescaleAction

    space = env.action_space
    low = np.full(space.shape, -1, dtype=space.dtype)
    high = np.full(space.shape, 1, dtype=space.dtype)
    return RescaleAction(env, low, high)
