"""Gymnasium envs (and old 4-tuple gym envs) behind rlrun's ``Env`` interface.

- ``done = terminated or truncated``; ``env_info.timeout`` is True when the episode was cut by a time
  limit and did not also terminate, so algorithms can bootstrap through time limits.
- ``env_info`` is a namedtuple whose fields are fixed when the wrapper is built: ``timeout`` plus the
  numeric keys of the info dicts returned by one probe ``reset`` and ``step`` (or of ``info_example``).
  A key missing at a later step is filled with zeros of its example's shape. A key that first
  appears later is dropped, with one warning naming it (``strict_info=True`` raises instead);
  pass ``info_example`` to declare such keys up front. Non-numeric values (strings, objects) are
  not stored, since samplers keep infos in arrays.
- Old-API envs (``reset() -> obs``, ``step() -> (obs, reward, done, info)``) are recognised from what
  they return, without importing ``gym``; their ``info["TimeLimit.truncated"]`` becomes ``timeout``.
"""

from __future__ import annotations

import functools
import inspect
import logging
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from rlrun.envs.action_rescale import rescale_actions_to_unit
from rlrun.envs.base import Env, EnvStep
from rlrun.envs.mujoco_ids import current_mujoco_id
from rlrun.envs.validation import EnvValidationError, check_action, check_observation, check_reward, gym_spec
from rlrun.spaces.gym_wrapper import GymSpaceWrapper, field_name
from rlrun.utils.collections import namedtuple
from rlrun.utils.video import VIDEO_EXTRA

if TYPE_CHECKING:
    from rlrun.utils.data_model import SpaceValue

__all__ = ["GymEnvWrapper", "make", "EnvInfoConverter"]

_log = logging.getLogger(__name__)
_OLD_TIMEOUT_KEY = "TimeLimit.truncated"


@functools.cache
def _timeout_only_records(EnvInfoCls: type) -> tuple[tuple[object, ...], tuple[object, ...]]:
    """The two records of an info type with no fields but ``timeout``: one pair per process."""
    return EnvInfoCls(False), EnvInfoCls(True)


class EnvInfoConverter:
    """Turns info dicts into one fixed namedtuple type, built from an example info dict."""

    def __init__(self, example: Mapping[str, object], strict: bool = False, env_name: str = "env") -> None:
        self.strict = strict
        self.env_name = env_name
        self._keys: list[str] = []  # info keys stored, in field order (after "timeout")
        self._nulls: list[Any] = []
        self._ignored: set[str] = {_OLD_TIMEOUT_KEY, "timeout"}
        self._warned: set[str] = set()
        fields = ["timeout"]
        for key, value in example.items():
            if key in self._ignored:
                continue
            arr = np.asarray(value)
            if arr.dtype.kind not in "biuf":
                self._ignored.add(key)  # strings, dicts, objects: not storable in arrays
                continue
            name = field_name(key)
            if name in fields or name.startswith("_"):
                name = f"info_{name.lstrip('_')}"
            fields.append(name)
            self._keys.append(key)
            self._nulls.append(np.zeros_like(arr)[()])
        self._known = set(self._keys) | self._ignored
        self.EnvInfoCls = namedtuple("EnvInfo", fields)
        # With no keys to store, an empty info dict has two possible records (indexed by timeout), built
        # once per process and shared by every wrapper, so that a collector writes one record per batch row.
        self.timeout_only = None if self._keys else _timeout_only_records(self.EnvInfoCls)

    def __call__(self, info: Mapping[str, object], timeout: bool) -> tuple[object, ...]:
        if self.timeout_only is not None:  # CartPole's and most classic envs' case: no keys to store
            if info and not self._known.issuperset(info):
                self._unexpected(info)
            return self.timeout_only[timeout]
        if not self._known.issuperset(info):
            self._unexpected(info)
        record: tuple[object, ...] = self.EnvInfoCls(
            timeout, *[info.get(k, null) for k, null in zip(self._keys, self._nulls)]
        )
        return record

    def _unexpected(self, info: Mapping[str, object]) -> None:
        new = sorted(str(k) for k in info if k not in self._known and k not in self._warned)
        if not new:
            return
        message = (
            f"{self.env_name}: info key(s) {new} appeared after the wrapper was built and are not stored "
            "(env_info fields are fixed at construction). Pass info_example={...} to GymEnvWrapper/make "
            "to declare them."
        )
        if self.strict:
            raise KeyError(message)
        self._warned.update(new)
        warnings.warn(message, stacklevel=3)


def _takes_keyword(func: Any, name: str) -> bool:
    """True when ``func`` accepts the keyword ``name`` (or any keyword)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in params)


class GymEnvWrapper(Env):
    """Wraps a Gymnasium (or old gym) env; spaces become rlrun spaces, dict observations namedtuples.

    At construction the env is reset and stepped once (unless ``validate=False``) to learn its info
    keys and to check its observations against the declared observation space.
    """

    def __init__(
        self,
        env: Any,
        act_null_value: ArrayLike | None = 0,
        obs_null_value: ArrayLike | None = 0,
        force_float32: bool = True,
        info_example: Mapping[str, object] | None = None,
        strict_info: bool = False,
        validate: bool = True,
        check_actions: bool = True,
        check_observations: bool = False,
    ) -> None:
        self.env = env
        self._obs_space = GymSpaceWrapper(env.observation_space, obs_null_value, "obs", force_float32)
        self._act_space = GymSpaceWrapper(env.action_space, act_null_value, "act", force_float32=False)
        self.check_actions = check_actions
        self.check_observations = check_observations
        self._seed: int | None = None
        self._new_api: bool | None = None
        self._reset_takes_seed = _takes_keyword(env.reset, "seed")
        self._warned_seed = False
        name = type(self).__name__ + f"({self._env_id()})"
        example = dict(info_example or {})
        if validate:
            example = {**self._probe(), **example}
        self._info = EnvInfoConverter(example, strict=strict_info, env_name=name)
        # step's fast paths: arrays that the observation space's convert would return unchanged, and
        # the action check without the call that builds its error.
        self._obs_array_dtype = self._obs_space.space.dtype if self._obs_space.is_array_space else None
        self._act_mismatch = self._act_space.space.mismatch

    def _env_id(self) -> str:
        import gymnasium

        # Without an id, the innermost env's class names it (a Gymnasium env unwraps to it).
        inner = self.env.unwrapped if isinstance(self.env, gymnasium.Env) else self.env
        return gym_spec(self.env)[0] or type(inner).__name__

    def _probe(self) -> dict[str, Any]:
        """Reset and step once with a random action; check observations; return the merged infos."""
        observation, reset_info = self._reset(check=True)
        action = self.env.action_space.sample()
        result = self.env.step(action)
        self._detect_api(result)
        observation, reward, info = result[0], result[1], result[-1]
        self._convert_observation(observation, "step()", check=True)
        check_reward(self, reward)
        if not isinstance(info, dict):
            raise EnvValidationError(
                f"{type(self).__name__}({self._env_id()}): step() returned info of type {type(info).__name__}; "
                "Gymnasium and gym envs return a dict."
            )
        return {**(reset_info or {}), **info}

    def _convert_observation(self, observation: Any, where: str, check: bool) -> Any:
        """The rlrun value of a Gymnasium observation; with ``check``, also compared with the space."""
        try:
            converted = self._obs_space.convert(observation)
        except (KeyError, TypeError, ValueError) as e:
            message = e.args[0] if isinstance(e, KeyError) and e.args else e
            raise EnvValidationError(
                f"{type(self).__name__}({self._env_id()}): the observation from {where} does not match the "
                f"declared observation space: {message} Declared: {self._obs_space.gym_space}. Make the env "
                "return what its observation_space declares."
            ) from e
        if check:
            check_observation(self, converted, self._obs_space.space, where)
        return converted

    def _detect_api(self, step_result: tuple[Any, ...]) -> None:
        if len(step_result) == 5:
            self._new_api = True
        elif len(step_result) == 4:
            self._new_api = False
        else:
            raise EnvValidationError(
                f"{type(self.env).__name__}.step returned {len(step_result)} values; expected Gymnasium's "
                "(obs, reward, terminated, truncated, info) or old gym's (obs, reward, done, info)."
            )

    def _reset(self, check: bool = False) -> tuple[SpaceValue, dict[str, Any]]:
        seed, self._seed = self._seed, None
        if seed is None:
            result = self.env.reset()
        else:
            self.env.action_space.seed(seed)
            if self._reset_takes_seed:
                result = self.env.reset(seed=seed)
            else:  # old gym API: seed() then reset()
                if hasattr(self.env, "seed"):
                    self.env.seed(seed)
                elif not self._warned_seed:
                    self._warned_seed = True
                    warnings.warn(
                        f"{type(self).__name__}({self._env_id()}): the env has neither reset(seed=...) nor "
                        "seed(), so the seed is ignored and its episodes are not reproducible.",
                        stacklevel=3,
                    )
                result = self.env.reset()
        # Gymnasium returns (obs, info); old gym returns obs alone.
        if (
            self._new_api is not False
            and isinstance(result, tuple)
            and len(result) == 2
            and isinstance(result[1], dict)
        ):
            observation, info = result
        else:
            observation, info = result, {}
        return self._convert_observation(observation, "reset()", check or self.check_observations), info

    def reset(self) -> SpaceValue:
        """Reset the env (with the seed given to :meth:`seed`, once) and return the first observation."""
        return self._reset()[0]

    def step(self, action: SpaceValue) -> EnvStep:
        """Step the env; ``done`` is terminated or truncated, ``env_info.timeout`` is truncation alone."""
        if self.check_actions and self._act_mismatch(action) is not None:
            check_action(self, action, self._act_space.space)  # raises, naming the mismatch
        result = self.env.step(self._act_space.revert(action))
        if self._new_api is None:
            self._detect_api(result)
        if self._new_api:
            observation, reward, terminated, truncated, info = result
            done = bool(terminated or truncated)
            timeout = bool(truncated and not terminated)
        else:
            observation, reward, done, info = result
            done = bool(done)
            timeout = bool(info.get(_OLD_TIMEOUT_KEY, False))
        dtype = self._obs_array_dtype  # None for Dict and Tuple spaces (and np.dtype(None) is float64)
        if (
            self.check_observations
            or dtype is None
            or type(observation) is not np.ndarray
            or not (observation.dtype is dtype or observation.dtype == dtype)
        ):
            observation = self._convert_observation(observation, "step()", self.check_observations)
        if type(reward) is not float:
            check_reward(self, reward)  # arrays and None would otherwise become NaN or fail far from here
        env_info = self._info(info, timeout)
        # tuple.__new__ skips the namedtuple's Python-level __new__: this runs once per env step.
        return tuple.__new__(EnvStep, (observation, np.float32(reward), done, env_info))

    def seed(self, seed: int | None) -> None:
        self._seed = None if seed is None else int(seed)

    @property
    def observation_space(self) -> GymSpaceWrapper:
        return self._obs_space

    @property
    def action_space(self) -> GymSpaceWrapper:
        return self._act_space

    @property
    def horizon(self) -> int | None:
        return gym_spec(self.env)[1]

    def render(self, *args: object, **kwargs: object) -> object:
        return self.env.render(*args, **kwargs)

    def rgb_frame(self) -> np.ndarray:
        """The current frame as an ``[H, W, 3]`` uint8 image (for videos: ``RecordVideo``); the env must be
        made with ``render_mode="rgb_array"``."""
        import gymnasium

        try:
            mode = self.env.render_mode
        except AttributeError:  # an old gym env
            mode = None
        if mode != "rgb_array":
            raise ValueError(
                f"{self._env_id()}: rgb_frame() needs the env made with render_mode='rgb_array' "
                f"(it has {mode!r}): make(id, render_mode='rgb_array')."
            )
        try:
            frame = self.env.render()
        except gymnasium.error.DependencyNotInstalled as error:
            raise ImportError(f"{self._env_id()} draws its frames with pygame, which is not installed: {VIDEO_EXTRA}.") from error  # fmt: skip
        return np.asarray(frame, dtype=np.uint8)

    @property
    def render_fps(self) -> float:
        """Frames a second of a video at the env's speed: its ``metadata["render_fps"]``, else 30."""
        fps = self.env.metadata.get("render_fps")
        return float(fps) if fps else 30.0

    def close(self) -> None:
        self.env.close()


def make(
    id: str,
    *args: Any,
    info_example: Mapping[str, object] | None = None,
    act_null_value: ArrayLike | None = 0,
    obs_null_value: ArrayLike | None = 0,
    force_float32: bool = True,
    strict_info: bool = False,
    check_observations: bool = False,
    rescale_action: bool = True,
    **kwargs: Any,
) -> GymEnvWrapper:
    """``gymnasium.make(id, *args, **kwargs)`` wrapped in :class:`GymEnvWrapper`.

    Use it as ``EnvCls`` with ``env_kwargs=dict(id="CartPole-v1")`` in samplers. rlpyt's MuJoCo ids
    (``Hopper-v3`` ...) run as v5, with a warning (:mod:`rlrun.envs.mujoco_ids`). With ``rescale_action``
    a bounded continuous action space becomes ``[-1, 1]``, mapped linearly onto the env's bounds
    (:mod:`rlrun.envs.action_rescale`).
    """
    import gymnasium

    env = gymnasium.make(current_mujoco_id(id), *args, **kwargs)
    if rescale_action:
        env = rescale_actions_to_unit(env)
    return GymEnvWrapper(
        env,
        act_null_value=act_null_value,
        obs_null_value=obs_null_value,
        force_float32=force_float32,
        info_example=info_example,
        strict_info=strict_info,
        check_observations=check_observations,
    )
