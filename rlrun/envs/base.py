"""The environment interface every sampler steps.

An env returns ``EnvStep(observation, reward, done, env_info)`` from ``step`` and an observation from
``reset``; ``env_info`` is a namedtuple whose fields are fixed for the env's lifetime, because
samplers store it in preallocated ``[T, B]`` arrays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from rlrun.spaces.base import Space
from rlrun.utils.collections import NamedArrayTuple, namedarraytuple, namedtuple

if TYPE_CHECKING:
    from rlrun.utils.data_model import SpaceValue

__all__ = ["Env", "EnvStep", "EnvInfo", "EnvSpaces", "EnvSpacesPair"]

EnvStep = namedarraytuple("EnvStep", ["observation", "reward", "done", "env_info"])
EnvInfo = namedtuple("EnvInfo", [])
EnvSpaces = namedtuple("EnvSpaces", ["observation", "action"])


class EnvSpacesPair(Protocol):
    """What ``env.spaces`` gives (an ``EnvSpaces`` namedtuple, made at run time): the two spaces by name."""

    @property
    def observation(self) -> Space: ...

    @property
    def action(self) -> Space: ...


class Env:
    """Base class: subclasses set ``_observation_space`` and ``_action_space`` and implement
    ``step`` and ``reset``. ``seed(s)`` takes effect at the next ``reset``."""

    _observation_space: Space
    _action_space: Space

    def step(self, action: SpaceValue) -> NamedArrayTuple:
        """Advance one step; on ``done`` the sampler calls ``reset`` (the env never resets itself)."""
        raise NotImplementedError

    def reset(self) -> SpaceValue:
        """Start a new episode and return its first observation."""
        raise NotImplementedError

    def seed(self, seed: int | None) -> None:
        """Seed the env's randomness from its next reset on."""
        self._seed = seed

    @property
    def action_space(self) -> Space:
        return self._action_space

    @property
    def observation_space(self) -> Space:
        return self._observation_space

    @property
    def spaces(self) -> EnvSpacesPair:
        spaces: EnvSpacesPair = EnvSpaces(observation=self.observation_space, action=self.action_space)
        return spaces

    @property
    def horizon(self) -> int | None:
        """The most steps an episode can last, where the env knows it."""
        return None

    def close(self) -> None:
        """Release the env's resources (windows, emulators, files)."""
