"""rlpyt's MuJoCo env ids (v2, v3, v4) mapped to Gymnasium's current v5.

rlpyt's scripts name ``Hopper-v3`` and the like. Gymnasium keeps those ids registered, but its v2 and
v3 envs need the retired ``mujoco-py`` and v4 is deprecated; v5 runs the same tasks on the maintained
``mujoco`` bindings (``pip install rlrun[mujoco]``) and takes the same keywords for the common options
(``ctrl_cost_weight``, ``reset_noise_scale``, ...). :func:`rlrun.envs.gym.make` calls
:func:`current_mujoco_id`, which warns once per id and process.
"""

from __future__ import annotations

import re
import warnings

__all__ = ["MUJOCO_TASKS", "CURRENT_VERSION", "current_mujoco_id"]

MUJOCO_TASKS = (
    "Ant",
    "HalfCheetah",
    "Hopper",
    "Humanoid",
    "HumanoidStandup",
    "InvertedDoublePendulum",
    "InvertedPendulum",
    "Pusher",
    "Reacher",
    "Swimmer",
    "Walker2d",
)
CURRENT_VERSION = 5

_OLD_ID = re.compile(rf"^(?P<task>{'|'.join(MUJOCO_TASKS)})-v(?P<version>[234])$")
_warned: set[str] = set()


def current_mujoco_id(env_id: str) -> str:
    """``"<Task>-v5"`` for a MuJoCo id of version 2, 3 or 4 (with one warning per id); any other id
    unchanged."""
    match = _OLD_ID.match(env_id)
    if match is None:
        return env_id
    new_id = f"{match['task']}-v{CURRENT_VERSION}"
    if env_id not in _warned:
        _warned.add(env_id)
        warnings.warn(
            f"rlrun.envs.gym.make: {env_id} runs as {new_id}. Gymnasium's MuJoCo v2/v3 envs need the retired "
            f"mujoco-py and v4 is deprecated; v5 is the same task on the maintained mujoco bindings; its rewards and "
            f"observation sizes can differ from {env_id}'s (see Gymnasium's MuJoCo docs), so results need not "
            f"match curves published for {env_id}. Write {new_id!r} to silence this.",
            UserWarning,
            stacklevel=3,
        )
    return new_id
