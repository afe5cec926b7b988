"""Reading model sizes from env spaces, with errors that say which agent fits which space."""

from __future__ import annotations

from typing import Protocol, TypeAlias

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
    "EnvModelKwargs",
    "discrete_array_model_kwargs",
    "continuous_array_model_kwargs",
    "atari_model_kwargs",
    "AtariMixin",
]

# Keyword arguments a model gets from the env's spaces: sizes and shapes.
EnvModelKwargs: TypeAlias = "dict[str, int | tuple[int, ...]]"


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


# The env families: which sizes a family's models take from the env spaces. ``agent`` names the agent in errors.


def discrete_array_model_kwargs(agent: object, env_spaces: EnvSpacesLike) -> EnvModelKwargs:
    """Array observations and discrete actions: ``observation_shape`` and ``action_size`` (the MLP models)."""
    return dict(
        observation_shape=array_observation_shape(agent, env_spaces.observation),
        action_size=discrete_action_size(agent, env_spaces.action),
    )


def continuous_array_model_kwargs(agent: object, env_spaces: EnvSpacesLike) -> EnvModelKwargs:
    """Array observations and continuous actions (MuJoCo-style): ``observation_shape`` and ``action_size``."""
    return dict(
        observation_shape=array_observation_shape(agent, env_spaces.observation),
        action_size=continuous_action_size(agent, env_spaces.action),
    )


def atari_model_kwargs(agent: object, env_spaces: EnvSpacesLike) -> EnvModelKwargs:
    """Images and discrete actions (Atari): ``image_shape`` (``[C, H, W]``) and ``output_size`` (actions)."""
    return dict(
        image_shape=array_observation_shape(agent, env_spaces.observation, ndim=3),
        output_size=discrete_action_size(agent, env_spaces.action),
    )


class AtariMixin:
    """Gives the model ``image_shape`` (the ``[C, H, W]`` observation shape) and ``output_size`` (actions):
    :func:`atari_model_kwargs` for any ``ModelCls``.

    rlpyt's way to give an agent the Atari sizes; put it before the agent class, e.g.
    ``class MyAtariAgent(AtariMixin, DqnAgent)``. It adds no behaviour of its own besides the sizes.
    """

    def make_env_to_model_kwargs(self, env_spaces: EnvSpacesLike) -> EnvModelKwargs:
        return atari_model_kwargs(self, env_spaces)
