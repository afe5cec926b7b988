"""Envs that start well and return a bad value later, in a module that spawned sampler workers can import.

They pass the start-up validation (the example env is never seeded, so it never misbehaves) and break
only in the env seeded with ``bad_seed``: samplers seed env rank ``r`` with ``seed + r``, so
``bad_seed=seed + r`` picks env rank ``r``. Steps are counted over episodes from 1; with no
decorrelation and episodes longer than the run, step ``k`` lands at ``itr = (k - 1) // T``,
``t = (k - 1) % T``.
"""

from __future__ import annotations

import numpy as np
import torch

from rlrun.envs.base import Env, EnvInfo, EnvStep
from rlrun.spaces.composite import Composite
from rlrun.spaces.float_box import FloatBox
from rlrun.spaces.int_box import IntBox
from rlrun.utils.collections import namedtuple

# What goes wrong at step ``bad_step`` (or at the reset after it, for "nan_reset").
KINDS = ("float_obs", "shape", "nan_obs", "inf_obs", "nan_reward", "nan_reset")
CompositeObs = namedtuple("CompositeObs", ["position", "count"])


class _ScriptedEnv(Env):
    def __init__(self, bad: str, bad_seed: int | None, bad_step: int, episode_length: int) -> None:
        self.bad = bad
        self.bad_seed = bad_seed
        self.bad_step = bad_step
        self.episode_length = episode_length
        self._action_space = IntBox(0, 2)
        self.n_steps = 0  # over episodes
        self.t = 0  # in this episode

    @property
    def chosen(self) -> bool:
        return self.bad_seed is not None and getattr(self, "_seed", None) == self.bad_seed

    def _is_bad_step(self) -> bool:
        return self.chosen and self.n_steps == self.bad_step

    def reset(self):
        bad_reset = self.bad == "nan_reset" and self._is_bad_step()
        self.t = 0
        return self._observation(bad_reset)

    def step(self, action) -> EnvStep:
        self.n_steps += 1
        self.t += 1
        bad = self._is_bad_step()
        reward = float("nan") if bad and self.bad == "nan_reward" else 1.0
        done = self.t >= self.episode_length or (bad and self.bad == "nan_reset")
        observation = self._observation(bad and self.bad != "nan_reset")
        return EnvStep(observation, reward, done, EnvInfo())

    def _observation(self, bad: bool):
        raise NotImplementedError


class BadValueEnv(_ScriptedEnv):
    """Four-value observations (an IntBox for ``bad="float_obs"``, else a FloatBox) that go wrong as ``bad`` says."""

    def __init__(self, bad: str, bad_seed: int | None = None, bad_step: int = 13, episode_length: int = 1000) -> None:
        if bad not in KINDS:
            raise ValueError(f"bad must be one of {KINDS}, got {bad!r}")
        super().__init__(bad, bad_seed, bad_step, episode_length)
        if bad == "float_obs":
            self._observation_space = IntBox(0, 10, shape=(4,))
        else:
            self._observation_space = FloatBox(-10, 10, shape=(4,))

    def _observation(self, bad: bool) -> np.ndarray:
        value = self.t % 5
        if self.bad == "float_obs":
            return np.full(4, 2.7) if bad else np.full(4, value, dtype=np.int64)
        if bad and self.bad == "shape":
            return np.full(5, value, dtype=np.float32)
        observation = np.full(4, value, dtype=np.float32)
        if bad and self.bad in ("nan_obs", "nan_reset"):
            observation[2] = np.nan
        if bad and self.bad == "inf_obs":
            observation[1] = np.inf
        return observation


class BadCompositeEnv(_ScriptedEnv):
    """``CompositeObs(position float32[2], count int64)``; ``bad="float_obs"`` makes ``count`` a float,
    ``"nan_obs"`` puts NaN in ``position``."""

    def __init__(self, bad: str, bad_seed: int | None = None, bad_step: int = 13, episode_length: int = 1000) -> None:
        if bad not in ("float_obs", "nan_obs"):
            raise ValueError(f"bad must be 'float_obs' or 'nan_obs', got {bad!r}")
        super().__init__(bad, bad_seed, bad_step, episode_length)
        self._observation_space = Composite([FloatBox(-10, 10, shape=(2,)), IntBox(0, 1000)], CompositeObs)

    def _observation(self, bad: bool):
        position = np.full(2, self.t % 5, dtype=np.float32)
        count = np.int64(self.t)
        if bad and self.bad == "float_obs":
            count = float(self.t) + 0.5
        if bad and self.bad == "nan_obs":
            position[0] = np.nan
        return CompositeObs(position, count)


class UniformPolicyModel(torch.nn.Module):
    """Equal action probabilities and zero values whatever the observation: lets ``CategoricalPgAgent``
    act on Composite observations, which its default MLP does not read."""

    def __init__(self, action_size: int = 2) -> None:
        super().__init__()
        self.logits = torch.nn.Parameter(torch.zeros(action_size))

    def forward(self, observation, prev_action, prev_reward):
        leading = prev_reward.shape
        pi = torch.softmax(self.logits, dim=-1).expand(*leading, -1)
        return pi, torch.zeros(leading)
