"""Checks that an env's outputs agree with its declared spaces, with errors a user can act on.

Samplers call :func:`validate_env` on the first env they build, so a custom env whose observation
does not match its declared space fails at startup with one line naming the env class, the field,
and the declared and actual shapes, instead of deep inside a model much later.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from rlrun.spaces.base import Space
from rlrun.utils.collections import fields_of, is_namedtuple

if TYPE_CHECKING:
    from rlrun.envs.base import Env

__all__ = [
    "EnvValidationError",
    "env_name",
    "validate_env",
    "check_observation",
    "check_action",
    "check_reward",
    "check_finite",
]


class EnvValidationError(ValueError):
    """An env produced or was given a value that disagrees with its declared spaces.

    Errors raised while sampling also say which env, which value and when: ``env_rank``, ``field``
    (``"observation"``, ``"observation.<name>"`` or ``"reward"``) and ``where`` (e.g.
    ``"step() at itr 3, t 7"``); they are None for errors found at start-up.
    """

    def __init__(
        self, message: str, *, env_rank: int | None = None, field: str | None = None, where: str | None = None
    ) -> None:
        super().__init__(message)
        self.env_rank = env_rank
        self.field = field
        self.where = where


def env_name(env: object) -> str:
    """The env's class, with the wrapped Gymnasium env's id where there is one: ``GymEnvWrapper(CartPole-v1)``."""
    # Any object may be an env here (a user's, not an rlrun Env), and only wrappers hold an inner env (.env).
    inner = getattr(env, "env", None)
    name = type(env).__name__
    if inner is not None and not isinstance(inner, (str, bytes)):
        name += f"({gym_spec(inner)[0] or type(inner).__name__})"
    return name


def gym_spec(env: object) -> tuple[str | None, int | None]:
    """``(id, max_episode_steps)`` of a Gymnasium (or old gym) env's spec (``("CartPole-v1", 500)``), each
    None where the env has none."""
    # A foreign object: old gym envs and plain env classes carry no spec.
    spec = getattr(env, "spec", None)
    if spec is None:
        return None, None
    # Gymnasium's EnvSpec and old gym's both have id and max_episode_steps; a hand-made spec may not.
    try:
        return spec.id, spec.max_episode_steps
    except AttributeError:
        return None, None


_env_name = env_name  # the name this module's messages use


def check_observation(env: object, observation: object, space: Space, where: str, check_nan: bool = True) -> None:
    """Raise :class:`EnvValidationError` if ``observation`` is not a value of ``space``."""
    why = space.mismatch(observation)
    if why is not None:
        raise EnvValidationError(
            f"{_env_name(env)}: the observation from {where} does not match the declared observation space: "
            f"{why}. Declared: {space!r}. Fix the env's observation or its declared space."
        )
    if check_nan:
        check_finite(env, observation, where)


def check_finite(env: object, observation: object, where: str, name: str = "observation") -> None:
    """Raise if any floating field of ``observation`` holds NaN or infinity."""
    if isinstance(observation, tuple) and hasattr(observation, "_fields"):  # a namedtuple: check each field
        for field, value in zip(observation._fields, observation):
            check_finite(env, value, where, f"{name}.{field}")
        return
    arr = np.asarray(observation)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise EnvValidationError(
            f"{_env_name(env)}: {name} from {where} holds NaN or infinite values "
            f"({int(np.sum(~np.isfinite(arr)))} of {arr.size}). Check the env's dynamics or its reward/obs scaling."
        )


def check_action(env: object, action: object, space: Space) -> None:
    """Raise if ``action`` is not in the env's action space."""
    why = space.mismatch(action)
    if why is not None:
        raise EnvValidationError(
            f"{_env_name(env)}: action {action!r} is not in the action space: {why}. Declared: {space!r}. "
            "Check the agent's output (its distribution and the action space it was initialised with)."
        )


def check_reward(env: object, reward: Any) -> None:
    """Raise if ``reward`` is not one finite real number (Python or numpy scalar, or 0-d array)."""
    if isinstance(reward, (bool, np.bool_)) or not (
        isinstance(reward, numbers.Real)
        or (isinstance(reward, np.ndarray) and reward.shape == () and reward.dtype.kind in "iuf")
    ):
        shape = f" of shape {tuple(reward.shape)}" if hasattr(reward, "shape") else ""
        raise EnvValidationError(
            f"{_env_name(env)}: the reward must be one real number (a Python or numpy scalar), got "
            f"{type(reward).__name__}{shape}: {reward!r}. Return a float, e.g. float(reward.sum()) for a "
            "vector of rewards."
        )
    if not np.isfinite(float(reward)):  # a real number, checked above
        raise EnvValidationError(
            f"{_env_name(env)}: the reward is {reward!r}, not a finite number. Check the env's reward computation."
        )


def _check_done(env: object, done: Any) -> None:
    arr = np.asarray(done)
    if arr.shape != () or arr.dtype.kind not in "biu":
        raise EnvValidationError(
            f"{_env_name(env)}: done must be one bool, got {type(done).__name__}{np.shape(done) or ''}: {done!r}."
        )


def _is_env_step(step: Any) -> bool:
    return fields_of(step) == ("observation", "reward", "done", "env_info")


def validate_env(env: Env, n_steps: int = 1, check_nan: bool = True) -> None:
    """Reset ``env`` and take ``n_steps`` null actions, checking every output against the spaces.

    Leaves the env in need of a reset. Raises :class:`EnvValidationError` on the first mismatch.
    """
    spaces = env.spaces
    obs_space, act_space = spaces.observation, spaces.action
    for name, space in (("observation", obs_space), ("action", act_space)):
        if not isinstance(space, Space) and not hasattr(space, "mismatch"):
            raise EnvValidationError(
                f"{_env_name(env)}: its {name} space is a {type(space).__name__}, not an rlrun space. "
                "Use IntBox, FloatBox or Composite (rlrun.spaces), or GymSpaceWrapper for Gymnasium spaces."
            )
    observation = env.reset()
    _check_reset_result(env, observation, obs_space)
    check_observation(env, observation, obs_space, "reset()", check_nan)
    action = act_space.null_value()
    for i in range(n_steps):
        step = env.step(action)
        if not _is_env_step(step):
            hint = ""
            if isinstance(step, tuple) and len(step) == 5:
                hint = (
                    " It looks like Gymnasium's (obs, reward, terminated, truncated, info): wrap Gymnasium envs in "
                    "rlrun.envs.gym.GymEnvWrapper rather than subclassing Env."
                )
            raise EnvValidationError(
                f"{_env_name(env)}: step() returned {_describe(step)}; it must return "
                f"EnvStep(observation, reward, done, env_info) from rlrun.envs.base.{hint}"
            )
        observation, reward, done, env_info = step
        check_observation(env, observation, obs_space, f"step() #{i + 1}", check_nan)
        check_reward(env, reward)
        _check_done(env, done)
        if env_info is not None and not is_namedtuple(env_info):
            raise EnvValidationError(
                f"{_env_name(env)}: env_info must be a namedtuple with fixed fields (samplers store it in "
                f"arrays), got a {type(env_info).__name__}. Define one with rlrun.utils.collections.namedtuple "
                "and return the same fields at every step."
            )
        if done:
            observation = env.reset()
            check_observation(env, observation, obs_space, "reset()", check_nan)


def _describe(value: Any) -> str:
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return f"a plain tuple of {len(value)} values"
    return f"a {type(value).__name__}"


def _check_reset_result(env: Any, observation: Any, obs_space: Space) -> None:
    """Point at the Gymnasium habit of returning (obs, info) from reset(), which rlrun's Env does not."""
    if (
        isinstance(observation, tuple)
        and not hasattr(observation, "_fields")
        and len(observation) == 2
        and isinstance(observation[1], dict)
        and obs_space.mismatch(observation) is not None
    ):
        raise EnvValidationError(
            f"{_env_name(env)}: reset() returned (observation, info) like Gymnasium; rlrun's Env.reset returns "
            "the observation alone. Return only the observation, or wrap a Gymnasium env in GymEnvWrapper."
        )
