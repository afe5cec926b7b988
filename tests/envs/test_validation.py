"""Errors for envs whose outputs disagree with their declared spaces, and what each message says."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces as gs

from rlrun.envs.base import Env, EnvStep
from rlrun.envs.gym import GymEnvWrapper, make
from rlrun.envs.validation import EnvValidationError, validate_env
from rlrun.spaces import FloatBox, IntBox
from rlrun.utils.collections import namedtuple

Info = namedtuple("Info", ["lives"])


class ScriptedEnv(Env):
    """An rlrun Env whose reset and step return what a test hands it."""

    def __init__(self, observation_space, reset_value, step_value=None, action_space=None):
        self._observation_space = observation_space
        self._action_space = action_space or IntBox(0, 2)
        self.reset_value = reset_value
        self.step_value = step_value if step_value is not None else EnvStep(reset_value, 0.0, False, Info(3))

    def reset(self):
        return self.reset_value

    def step(self, action):
        return self.step_value


class BinaryFeaturesEnv(ScriptedEnv):
    """The rlpyt user's env: declares 461 binary features but emits 365."""

    def __init__(self):
        super().__init__(IntBox(low=0, high=1, shape=461), np.zeros(365, dtype=np.int64))


class GymScriptedEnv(gym.Env):
    """A Gymnasium env whose k-th step returns ``step_results[k]`` (the last one repeats)."""

    def __init__(self, observation_space, reset_obs, step_results):
        self.observation_space = observation_space
        self.action_space = gs.Discrete(2)
        self.reset_obs = reset_obs
        self.step_results = step_results
        self.t = 0

    def reset(self, *, seed=None, options=None):
        return self.reset_obs, {}

    def step(self, action):
        result = self.step_results[min(self.t, len(self.step_results) - 1)]
        self.t += 1
        return result


def box_step(obs, reward=0.0):
    return obs, reward, False, False, {}


BOX = gs.Box(-1, 1, (2,), np.float32)
GOOD = np.zeros(2, np.float32)
NAN = np.array([0.0, np.nan], np.float32)


def test_declared_461_features_but_365_returned_raises_one_error_naming_everything():
    with pytest.raises(EnvValidationError) as excinfo:
        validate_env(BinaryFeaturesEnv())

    message = str(excinfo.value)
    assert message.startswith("BinaryFeaturesEnv: the observation from reset()")
    assert "shape (365,) differs from the declared shape (461,)" in message
    assert "Fix the env's observation or its declared space" in message


def test_float_observation_into_integer_space_raises():
    env = ScriptedEnv(IntBox(0, 10, shape=3), np.zeros(3))

    with pytest.raises(EnvValidationError, match="dtype float64 cannot be stored in the declared integer dtype int32"):
        validate_env(env)


@pytest.mark.parametrize(
    "env_id, action, match",
    [
        ("CartPole-v1", 2, r"value 2 is outside \[0, 2\)"),
        ("CartPole-v1", 0.5, "dtype float64 cannot be stored in the declared integer dtype"),
        ("Pendulum-v1", np.zeros(2, np.float32), r"shape \(2,\) differs from the declared shape \(1,\)"),
    ],
)
def test_action_outside_the_action_space_raises_in_step(env_id, action, match):
    env = make(env_id)
    env.reset()

    with pytest.raises(
        EnvValidationError, match=rf"GymEnvWrapper\({env_id}\): action .* is not in the action space: {match}"
    ):
        env.step(action)


@pytest.mark.parametrize(
    "reward, match",
    [
        (np.array([1.0, 2.0]), r"got ndarray of shape \(2,\)"),
        (None, "got NoneType: None"),
        (float("nan"), "reward is nan, not a finite number"),
    ],
)
def test_reward_that_is_not_one_number_raises_in_validate_env(reward, match):
    env = ScriptedEnv(FloatBox(-1, 1, shape=2), GOOD, EnvStep(GOOD, reward, False, Info(3)))

    with pytest.raises(EnvValidationError, match=match):
        validate_env(env)


def test_reward_that_is_not_one_number_raises_in_gym_wrapper_at_construction_and_later():
    with pytest.raises(EnvValidationError, match=r"reward must be one real number.*shape \(2,\)"):
        GymEnvWrapper(GymScriptedEnv(BOX, GOOD, [box_step(GOOD, np.ones(2))]))

    env = GymEnvWrapper(GymScriptedEnv(BOX, GOOD, [box_step(GOOD), box_step(GOOD, None)]))
    env.reset()
    with pytest.raises(EnvValidationError, match="got NoneType"):
        env.step(0)


def test_nan_observation_raises_in_validate_env():
    env = ScriptedEnv(FloatBox(-1, 1, shape=2), GOOD, EnvStep(NAN, 0.0, False, Info(3)))

    with pytest.raises(
        EnvValidationError, match=r"observation from step\(\) #1 holds NaN or infinite values \(1 of 2\)"
    ):
        validate_env(env)
    validate_env(env, check_nan=False)


def test_nan_observation_raises_in_gym_wrapper_only_with_check_observations():
    steps = [box_step(GOOD), box_step(GOOD), box_step(NAN)]  # the first is taken by the wrapper's probe
    unchecked = GymEnvWrapper(GymScriptedEnv(BOX, GOOD, steps))
    checked = GymEnvWrapper(GymScriptedEnv(BOX, GOOD, steps), check_observations=True)
    unchecked.reset(), checked.reset()

    unchecked.step(0)
    assert np.isnan(unchecked.step(0).observation[1])
    checked.step(0)
    with pytest.raises(EnvValidationError, match=r"GymScriptedEnv.*observation from step\(\) holds NaN"):
        checked.step(0)


def test_nan_at_reset_raises_with_check_observations():
    env = GymEnvWrapper(GymScriptedEnv(BOX, GOOD, [box_step(GOOD)]), check_observations=True)
    env.env.reset_obs = NAN

    with pytest.raises(EnvValidationError, match=r"observation from reset\(\) holds NaN"):
        env.reset()


def test_dict_observation_missing_a_key_raises_naming_it():
    space = gs.Dict({"a": gs.Discrete(3), "b": gs.Discrete(3)})

    with pytest.raises(EnvValidationError, match=r"GymScriptedEnv.*reset\(\).*lacks key\(s\) \['b'\]"):
        GymEnvWrapper(GymScriptedEnv(space, {"a": 1}, [box_step({"a": 1, "b": 2})]))

    env = GymEnvWrapper(GymScriptedEnv(space, {"a": 1, "b": 0}, [box_step({"a": 1, "b": 2}), box_step({"b": 2})]))
    env.reset()
    with pytest.raises(EnvValidationError, match=r"observation from step\(\).*lacks key\(s\) \['a'\]"):
        env.step(0)


def test_step_returning_a_gymnasium_tuple_raises_with_a_hint():
    env = ScriptedEnv(FloatBox(-1, 1, shape=2), GOOD, (GOOD, 0.0, False, False, {}))

    with pytest.raises(EnvValidationError, match=r"returned a plain tuple of 5 values.*wrap Gymnasium envs"):
        validate_env(env)


def test_step_returning_something_else_than_env_step_raises():
    env = ScriptedEnv(FloatBox(-1, 1, shape=2), GOOD, {"observation": GOOD})

    with pytest.raises(EnvValidationError, match=r"step\(\) returned a dict; it must return EnvStep"):
        validate_env(env)


def test_reset_returning_observation_and_info_raises_with_a_hint():
    env = ScriptedEnv(FloatBox(-1, 1, shape=2), (GOOD, {}))

    with pytest.raises(EnvValidationError, match=r"reset\(\) returned \(observation, info\) like Gymnasium"):
        validate_env(env)


def test_env_info_dict_and_non_bool_done_raise():
    with pytest.raises(EnvValidationError, match="env_info must be a namedtuple"):
        validate_env(ScriptedEnv(FloatBox(-1, 1, shape=2), GOOD, EnvStep(GOOD, 0.0, False, {"lives": 3})))
    with pytest.raises(EnvValidationError, match="done must be one bool"):
        validate_env(ScriptedEnv(FloatBox(-1, 1, shape=2), GOOD, EnvStep(GOOD, 0.0, None, Info(3))))


def test_gymnasium_space_declared_on_an_rlrun_env_raises():
    env = ScriptedEnv(gs.Box(-1, 1, (2,)), GOOD)

    with pytest.raises(EnvValidationError, match="observation space is a Box, not an rlrun space"):
        validate_env(env)


def test_valid_envs_pass_and_episodes_end_in_reset():
    validate_env(ScriptedEnv(FloatBox(-1, 1, shape=2), GOOD, EnvStep(GOOD, np.float32(1), True, Info(3))), n_steps=3)
    validate_env(make("CartPole-v1"), n_steps=30)
