"""Reading model sizes from env spaces, with errors that say which agent fits which space."""

from __future__ import annotations

from typing import Any, Protocol

from rlrun.spaces.base import Space
from rlrun.spaces.composite import Composite
from rlrun.spaces.float_box import FloatBox
from rlrun.spaces.gym_wrapper import GymSpaceWrapper
from rlrun.spaces.int_box import IntBox

__all__ = [
    "EnvSpacesLike",
    "unwrap_space",
    "discrete_action_size",
    "continuous_action_size",
    "array_observation_shape",
    "AtariMixin",
]


class EnvSpacesLike(Protocol):
    """What an agent's ``initialize`` takes: the env's ``EnvSpaces(observation, action)`` (any object with
    these two spaces)."""

    @property
    def observation(self) -> Space: ...

    @property
    def action(self) -> Space: ...


def unwrap_space(space: Space) -> Space:
    """The rlrun space inside a ``GymSpaceWrapper``; other spaces pass through."""
    return space.space if isinstance(space, GymSpaceWrapper) else space


def discrete_action_size(agent: object, space: Space) -> int:
    """The number of actions of a discrete action space (an IntBox of shape ())."""
    inner = unwrap_space(space)
    if isinstance(inner, IntBox) and inner.shape == ():
        return inner.n
    raise ValueError(
        f"{type(agent).__name__} needs a discrete action space (one integer action, e.g. Gymnasium's "
        f"Discrete), but the env's action space is {space!r}. For continuous (Box) actions use "
        "GaussianPgAgent or MujocoFfAgent."
    )


def continuous_action_size(agent: object, space: Space) -> int:
    """The action dim of a continuous action space (a FloatBox of shape (dim,))."""
    inner = unwrap_space(space)
    if isinstance(inner, FloatBox) and len(inner.shape) == 1:
        return inner.shape[0]
    raise ValueError(
        f"{type(agent).__name__} needs a continuous action space of shape (dim,) (Gymnasium's float Box), "
        f"but the env's action space is {space!r}. For discrete actions use CategoricalPgAgent or DqnAgent; "
        "flatten multi-dimensional Box actions with a Gymnasium wrapper."
    )


def array_observation_shape(agent: object, space: Space, ndim: int | None = None) -> tuple[int, ...]:
    """The shape of an array observation space, optionally required to have ``ndim`` dims."""
    inner = unwrap_space(space)
    if isinstance(inner, Composite):
        raise ValueError(
            f"{type(agent).__name__}'s built-in model takes array observations, but the env's observations "
            f"are structured ({space!r}). Pass ModelCls=... with a model that reads each field, and "
            "model_kwargs for its sizes."
        )
    shape = tuple(inner.shape)
    if ndim is not None and len(shape) != ndim:
        raise ValueError(
            f"{type(agent).__name__}'s model needs observations with {ndim} dims, but the env's observation "
            f"shape is {shape}" + (" (images should be [C, H, W], e.g. stacked frames)." if ndim == 3 else ".")
        )
    return shape


class AtariMixin:
    """Gives the model ``image_shape`` (the ``[C, H, W]`` observation shape) and ``output_size`` (actions).

    Put it before the agent class, e.g. ``class MyAtariAgent(AtariMixin, DqnAgent)``.
    """

    def make_env_to_model_kwargs(self, env_spaces: EnvSpacesLike) -> dict[str, Any]:
        return dict(
            image_shape=array_observation_shape(self, env_spaces.observation, ndim=3),
            output_size=discrete_action_size(self, env_spaces.action),
        )
