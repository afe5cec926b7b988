"""``RecordVideo``: an env that records what it shows into an mp4, one frame per reset and per step.

It wraps any env with an ``rgb_frame()`` method: :class:`~rlrun.envs.atari.atari_env.AtariEnv` (the
emulator's colour screen) and :class:`~rlrun.envs.gym.GymEnvWrapper` made with
``render_mode="rgb_array"``. ``rlrun play RUN --video out.mp4`` uses it, and so can a script::

    env = RecordVideo(make("CartPole-v1", render_mode="rgb_array"), "cartpole.mp4")
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from rlrun.envs.base import Env
from rlrun.spaces.base import Space
from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.video import VideoWriter

if TYPE_CHECKING:
    from rlrun.utils.data_model import SpaceValue

__all__ = ["RecordVideo", "FrameSource"]


@runtime_checkable
class FrameSource(Protocol):
    """An env that can show its current state as an ``[H, W, 3]`` uint8 RGB image."""

    def rgb_frame(self) -> np.ndarray: ...

    @property
    def render_fps(self) -> float: ...

    def step(self, action: SpaceValue) -> NamedArrayTuple: ...

    def reset(self) -> SpaceValue: ...

    @property
    def observation_space(self) -> Space: ...

    @property
    def action_space(self) -> Space: ...

    def close(self) -> None: ...


class RecordVideo(Env):
    """Steps ``env`` and appends its frame after each ``reset`` and ``step`` to ``path`` (mp4, ``fps``
    frames a second; default: the env's ``render_fps``). ``close`` finishes the file."""

    def __init__(self, env: object, path: str | os.PathLike[str], fps: float | None = None) -> None:
        if not isinstance(env, FrameSource):
            raise TypeError(
                f"RecordVideo needs an env with rgb_frame(), such as AtariEnv or make(id, render_mode='rgb_array'); "
                f"got {type(env).__name__}."
            )
        self.env = env
        self.writer = VideoWriter(path, fps if fps is not None else env.render_fps)

    @property
    def observation_space(self) -> Space:
        return self.env.observation_space

    @property
    def action_space(self) -> Space:
        return self.env.action_space

    @property
    def frames(self) -> int:
        """Frames written so far."""
        return self.writer.frames

    def reset(self) -> SpaceValue:
        observation = self.env.reset()
        self.writer.append(self.env.rgb_frame())
        return observation

    def step(self, action: SpaceValue) -> NamedArrayTuple:
        env_step = self.env.step(action)
        self.writer.append(self.env.rgb_frame())
        return env_step

    def close(self) -> None:
        self.writer.close()
        self.env.close()
