"""GymEnvWrapper and make: done/timeout mapping, Dict observations, old-API envs, info keys, seeding."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces as gs

from rlrun.envs.base import EnvStep
from rlrun.envs.gym import GymEnvWrapper, make
from rlrun.envs.validation import EnvValidationError
from rlrun.spaces import Composite, FloatBox, IntBox
from rlrun.utils.buffer import buffer_from_example
from rlrun.utils.collections import is_namedarraytuple


class DictObsEnv(gym.Env):
    """Moves a point on a line; observes {"position": [x, v], "steps": n} and reports its distance."""

    def __init__(self):
        self.observation_space = gs.Dict({"position": gs.Box(-10, 10, (2,), np.float64), "steps": gs.Discrete(100)})
        self.action_space = gs.Discrete(3)
        self.x = 0.0
        self.n = 0

    def _obs(self):
        return {"position": np.array([self.x, 0.0]), "steps": self.n}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = float(self.np_random.uniform(-1, 1))
        self.n = 0
        return self._obs(), {}

    def step(self, action):
        self.x += int(action) - 1
        self.n += 1
        return self._obs(), -abs(self.x), abs(self.x) > 5, self.n >= 20, {"distance": abs(self.x), "label": "point"}


class OldApiEnv:
    """The gym<0.26 API: reset() -> obs, step() -> (obs, reward, done, info); spaces from gymnasium."""

    def __init__(self, limit: int = 3, fail_at: int | None = None):
        self.observation_space = gs.Box(-1.0, 1.0, (3,), np.float32)
        self.action_space = gs.Discrete(2)
        self.limit, self.fail_at = limit, fail_at
        self.rng = np.random.default_rng()
        self.t = 0

    def seed(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.t = 0
        return self.rng.uniform(-1, 1, 3).astype(np.float32)

    def step(self, action):
        self.t += 1
        failed = self.fail_at is not None and self.t >= self.fail_at
        info = {"TimeLimit.truncated": True} if self.t >= self.limit and not failed else {}
        return self.rng.uniform(-1, 1, 3).astype(np.float32), 1.0, failed or self.t >= self.limit, info


class ScriptedInfoEnv(gym.Env):
    """Returns the info dicts of ``infos`` in turn (the first one at the wrapper's probe step)."""

    def __init__(self, infos):
        self.observation_space = gs.Box(-1, 1, (1,), np.float32)
        self.action_space = gs.Discrete(2)
        self.infos = list(infos)
        self.t = 0

    def reset(self, *, seed=None, options=None):
        return np.zeros(1, np.float32), {}

    def step(self, action):
        info = self.infos[min(self.t, len(self.infos) - 1)]
        self.t += 1
        return np.zeros(1, np.float32), 0.0, False, False, dict(info)


def run_until_done(env, policy, max_steps=1000):
    env.reset()
    for t in range(1, max_steps + 1):
        step = env.step(policy(t))
        if step.done:
            return t, step
    raise AssertionError(f"no episode end in {max_steps} steps")


def test_cartpole_truncation_is_done_with_timeout():
    env = make("CartPole-v1", max_episode_steps=5)

    t, step = run_until_done(env, lambda t: t % 2)  # alternating pushes keep the pole up for 5 steps

    assert t == 5 and env.horizon == 5
    assert step.done is True and step.env_info.timeout is True
    assert isinstance(step, EnvStep) and step.env_info._fields == ("timeout",)


def test_cartpole_failure_is_done_without_timeout():
    env = make("CartPole-v1")
    env.seed(0)

    t, step = run_until_done(env, lambda t: 1)  # always pushing right drops the pole

    assert t < 50 and step.done is True and step.env_info.timeout is False
    assert type(step.reward) is np.float32 and step.reward == 1.0


def test_pendulum_float_actions_and_horizon_200_end_with_timeout():
    env = make("Pendulum-v1")

    t, step = run_until_done(env, lambda t: np.array([0.5], dtype=np.float32))

    assert isinstance(env.action_space.space, FloatBox) and env.action_space.shape == (1,)
    assert env.horizon == 200 and t == 200 and step.env_info.timeout is True
    assert step.observation.dtype == np.float32 and step.observation.shape == (3,)


def test_dict_observations_become_namedarraytuples_that_fill_buffers():
    env = GymEnvWrapper(DictObsEnv())

    observation = env.reset()
    step = env.step(np.int64(2))
    buf = buffer_from_example(step.observation, (4, 2))
    buf[1, 0] = step.observation

    assert isinstance(env.observation_space.space, Composite)
    assert is_namedarraytuple(observation) and observation._fields == ("position", "steps")
    assert observation.position.dtype == np.float32 and env.observation_space.contains(observation)
    assert buf.steps[1, 0] == 1 and buf.position[1, 0, 0] == step.observation.position[0]
    assert step.env_info._fields == ("timeout", "distance")  # the string "label" is not stored


def test_old_api_env_maps_timelimit_truncated_to_timeout():
    env = GymEnvWrapper(OldApiEnv(limit=3))

    t, step = run_until_done(env, lambda t: 0)

    assert t == 3 and step.done is True and step.env_info.timeout is True
    assert isinstance(env.action_space.space, IntBox) and env.action_space.n == 2


def test_old_api_env_terminal_step_has_no_timeout():
    env = GymEnvWrapper(OldApiEnv(limit=10, fail_at=2))

    t, step = run_until_done(env, lambda t: 0)

    assert t == 2 and step.done is True and step.env_info.timeout is False


def test_old_api_env_is_seeded_through_its_seed_method():
    env = GymEnvWrapper(OldApiEnv())

    env.seed(11)
    first = env.reset()
    env.seed(11)
    second = env.reset()

    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, env.reset())


def test_same_seed_gives_same_first_observations():
    a, b = make("CartPole-v1"), make("CartPole-v1")

    a.seed(3)
    b.seed(3)
    obs_a, obs_b = a.reset(), b.reset()
    b.seed(4)

    np.testing.assert_array_equal(obs_a, obs_b)
    np.testing.assert_array_equal(a.step(1).observation, b.step(1).observation)
    assert not np.array_equal(obs_a, b.reset())


def test_info_keys_seen_at_construction_are_fields_and_non_numeric_keys_are_skipped():
    env = GymEnvWrapper(ScriptedInfoEnv([{"score": 2.5, "lives": np.int32(3), "name": "x", "extra": {"a": 1}}]))

    env.reset()
    info = env.step(0).env_info

    assert info._fields == ("timeout", "score", "lives")
    assert info.score == 2.5 and info.lives == 3


def test_info_key_missing_later_is_zero_filled():
    env = GymEnvWrapper(ScriptedInfoEnv([{"score": 2.5, "pos": np.ones(2)}, {}]))

    env.reset()
    info = env.step(0).env_info

    assert info.score == 0.0
    np.testing.assert_array_equal(info.pos, np.zeros(2))


def test_info_key_appearing_later_warns_once():
    env = GymEnvWrapper(ScriptedInfoEnv([{"score": 1.0}, {"score": 1.0, "bonus": 5.0}]))
    env.reset()

    with pytest.warns(UserWarning, match=r"info key\(s\) \['bonus'\] appeared after the wrapper was built"):
        info = env.step(0).env_info
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.step(0)

    assert info._fields == ("timeout", "score")


def test_info_key_appearing_later_raises_with_strict_info():
    env = GymEnvWrapper(ScriptedInfoEnv([{}, {"bonus": 5.0}]), strict_info=True)
    env.reset()

    with pytest.raises(KeyError, match="Pass info_example"):
        env.step(0)


def test_info_example_declares_keys_up_front():
    env = GymEnvWrapper(ScriptedInfoEnv([{}, {"bonus": 5.0}]), info_example={"bonus": 0.0}, strict_info=True)
    env.reset()

    assert env.step(0).env_info.bonus == 5.0


def test_old_api_env_without_seed_method_warns_that_the_seed_is_ignored():
    class NoSeedEnv:
        observation_space = gs.Box(-1.0, 1.0, (1,), np.float32)
        action_space = gs.Discrete(2)

        def reset(self):
            return np.zeros(1, np.float32)

        def step(self, action):
            return np.zeros(1, np.float32), 0.0, False, {}

    env = GymEnvWrapper(NoSeedEnv())
    env.seed(1)

    with pytest.warns(UserWarning, match="the seed is ignored"):
        env.reset()


class Float64Env(gym.Env):
    """Declares and returns float64 observations, as a list on every third step; empty infos until step 4."""

    observation_space = gs.Box(-1.0, 1.0, (2,), np.float64)
    action_space = gs.Discrete(2)

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return np.zeros(2), {}

    def step(self, action):
        self.t += 1
        observation = [0.5, -0.5] if self.t % 3 == 0 else np.full(2, 0.25)
        return observation, 1.0, False, False, ({"late": 1.0} if self.t >= 4 else {})


def test_step_converts_observations_unless_they_already_have_the_batch_dtype():
    env = GymEnvWrapper(Float64Env())
    env.reset()
    steps = [env.step(0) for _ in range(3)]
    for step in steps:  # float64 arrays and lists both become float32 arrays
        assert type(step.observation) is np.ndarray and step.observation.dtype == np.float32
    assert steps[2].observation.tolist() == [0.5, -0.5]

    kept = GymEnvWrapper(Float64Env(), force_float32=False)
    inner_observation = np.full(2, 0.25)
    kept.env.step = lambda action: (inner_observation, 1.0, False, False, {})
    assert kept.step(0).observation is inner_observation  # already float64: passed on as it is


def test_empty_infos_share_two_records_and_a_late_key_still_warns():
    env = GymEnvWrapper(Float64Env())
    env.reset()
    first, second = env.step(0), env.step(1)
    assert first.env_info == second.env_info == env._info.EnvInfoCls(timeout=False)
    assert first.env_info is second.env_info  # built once, not per step
    env.step(0)
    with pytest.warns(UserWarning, match="late"):
        fourth = env.step(0)
    assert fourth.env_info == env._info.EnvInfoCls(timeout=False)


def test_an_array_from_a_dict_space_env_is_refused_not_passed_through():
    """Dict spaces have no array dtype; an ndarray observation must still meet the structure check."""
    env = GymEnvWrapper(DictObsEnv())
    env.reset()
    env.env.step = lambda action: (np.zeros(2), 0.0, False, False, {"distance": 0.0, "label": "point"})
    with pytest.raises(EnvValidationError, match="dict observation"):
        env.step(1)
