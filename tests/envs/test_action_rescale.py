"""Bounded continuous action spaces reach agents as [-1, 1], mapped linearly onto the env's bounds."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from rlrun.envs.action_rescale import needs_rescale, rescale_actions_to_unit
from rlrun.envs.gym import make


class TorqueRecorder(gymnasium.Env):
    """A one-step env with action bounds [-2, 4] x [0, 10] that records the action it receives."""

    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gymnasium.spaces.Box(np.array([-2.0, 0.0], np.float32), np.array([4.0, 10.0], np.float32))

    def __init__(self):
        self.received = []

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.received.append(np.asarray(action).copy())
        return np.zeros(1, np.float32), 0.0, False, False, {}


@pytest.mark.parametrize(
    "space, expected",
    [
        (gymnasium.spaces.Box(-2.0, 2.0, (1,), np.float32), True),
        (gymnasium.spaces.Box(-1.0, 1.0, (3,), np.float32), False),
        (gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32), False),
        (gymnasium.spaces.Box(np.array([-1.0, -np.inf]), np.array([1.0, 5.0]), dtype=np.float64), False),
        (gymnasium.spaces.Box(0, 255, (2,), np.uint8), False),
        (gymnasium.spaces.Discrete(3), False),
    ],
)
def test_only_finite_float_boxes_off_the_unit_box_are_rescaled(space, expected):
    assert needs_rescale(space) is expected


def test_unit_actions_map_linearly_onto_the_env_bounds():
    env = rescale_actions_to_unit(TorqueRecorder())
    assert np.all(env.action_space.low == -1) and np.all(env.action_space.high == 1)
    assert env.action_space.dtype == np.float32
    env.reset(seed=0)
    for action in ([-1.0, -1.0], [1.0, 1.0], [0.0, 0.5]):
        env.step(np.array(action, np.float32))
    received = env.unwrapped.received
    np.testing.assert_allclose(received, [[-2.0, 0.0], [4.0, 10.0], [1.0, 7.5]], atol=1e-6)


def test_unit_box_env_is_returned_unwrapped():
    env = gymnasium.make("MountainCarContinuous-v0")  # already [-1, 1]
    assert rescale_actions_to_unit(env) is env


def test_make_rescales_pendulum_torque_and_can_leave_it():
    rescaled = make("Pendulum-v1")
    assert rescaled.action_space.low.tolist() == [-1] and rescaled.action_space.high.tolist() == [1]
    raw = make("Pendulum-v1", rescale_action=False)
    assert raw.action_space.low.tolist() == [-2] and raw.action_space.high.tolist() == [2]


def test_make_rescaled_pendulum_applies_full_torque_at_one():
    """Pendulum's reward penalises 0.001 * torque^2: an action of 1 must cost a torque of 2 (0.004)."""
    # The reward of a step is computed from the state before it, so only the torque term differs.
    assert first_reward(0.0) - first_reward(1.0) == pytest.approx(0.001 * 2.0**2, abs=1e-6)


def first_reward(action: float) -> float:
    env = make("Pendulum-v1")
    env.seed(0)
    env.reset()
    return float(env.step(np.array([action], np.float32)).reward)
