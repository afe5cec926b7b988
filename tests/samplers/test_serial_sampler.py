"""SerialSampler, its collectors and the samples buffer, on real CartPole envs with a real agent."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.base import Env, EnvStep
from rlrun.envs.gym import make
from rlrun.envs.validation import EnvValidationError
from rlrun.samplers.buffer import build_samples_buffer
from rlrun.samplers.collections import BatchSpec
from rlrun.samplers.collectors import WaitResetCollector, episode_quotas
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.spaces.float_box import FloatBox
from rlrun.spaces.int_box import IntBox
from rlrun.utils.buffer import buffer_method
from rlrun.utils.collections import namedtuple

CARTPOLE = dict(id="CartPole-v1")


def make_sampler(T=20, B=3, decorrelation=0, **kwargs) -> SerialSampler:
    return SerialSampler(
        EnvCls=make, env_kwargs=CARTPOLE, batch_T=T, batch_B=B, max_decorrelation_steps=decorrelation, **kwargs
    )


def started(sampler: SerialSampler, seed: int = 7, bootstrap_value: bool = False) -> CategoricalPgAgent:
    torch.manual_seed(seed)
    agent = CategoricalPgAgent()
    sampler.initialize(agent, seed=seed, bootstrap_value=bootstrap_value, traj_info_kwargs=dict(discount=0.9))
    return agent


def test_buffer_prev_action_and_prev_reward_are_views_shifted_by_one_step():
    env = make(**CARTPOLE)
    agent = CategoricalPgAgent()
    agent.initialize(env.spaces)
    _, samples_np, examples = build_samples_buffer(agent, env, BatchSpec(4, 2), bootstrap_value=True)
    assert samples_np.agent.action.shape == (4, 2)
    assert samples_np.env.observation.shape == (4, 2, 4)
    assert samples_np.agent.bootstrap_value.shape == (1, 2)
    samples_np.agent.action[1, 1] = 1
    samples_np.env.reward[2, 0] = 5.0
    assert samples_np.agent.prev_action[2, 1] == 1
    assert samples_np.env.prev_reward[3, 0] == 5.0
    assert samples_np.env.reward.dtype == np.float32
    assert samples_np.env.done.dtype == np.bool_
    assert samples_np.env.env_info.timeout.shape == (4, 2)


def test_samples_replay_exactly_in_fresh_envs_with_the_same_seeds():
    """Every observation, reward and done in two consecutive batches is what the env produced."""
    T, B, seed = 30, 3, 11
    sampler = make_sampler(T=T, B=B)
    started(sampler, seed=seed)
    batches = []
    for itr in range(2):
        samples, _ = sampler.obtain_samples(itr)
        batches.append(buffer_method(samples, "clone"))
    sampler.shutdown()
    for b in range(B):
        env = make(**CARTPOLE)
        env.seed(seed + b)
        observation = env.reset()
        last_action, last_reward = None, None
        for samples in batches:
            for t in range(T):
                np.testing.assert_allclose(samples.env.observation[t, b].numpy(), observation)
                if last_action is not None:
                    assert samples.agent.prev_action[t, b] == last_action
                    assert samples.env.prev_reward[t, b] == last_reward
                action = int(samples.agent.action[t, b])
                observation, reward, done, info = env.step(action)
                assert samples.env.reward[t, b] == reward
                assert bool(samples.env.done[t, b]) == done
                assert bool(samples.env.env_info.timeout[t, b]) == bool(info.timeout)
                if done:
                    observation = env.reset()
                last_action, last_reward = action, reward


def test_same_seed_gives_identical_samples_and_different_seed_differs():
    def run(seed):
        sampler = make_sampler(T=15, B=2, decorrelation=20)
        started(sampler, seed=seed)
        samples, _ = sampler.obtain_samples(0)
        out = samples.env.observation.clone(), samples.agent.action.clone()
        sampler.shutdown()
        return out

    a, b, c = run(3), run(3), run(4)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], c[0])


def test_completed_traj_infos_account_for_every_finished_episode():
    sampler = make_sampler(T=50, B=2)
    started(sampler)
    samples, infos = sampler.obtain_samples(0)
    sampler.shutdown()
    n_done = int(samples.env.done.sum())
    assert len(infos) == n_done > 0
    for info in infos:
        assert info.Length == info.Return == info.NonzeroRewards  # CartPole pays 1 per step
        expected = sum(0.9**k for k in range(info.Length))
        assert info.DiscountedReturn == pytest.approx(expected)
    # Episodes finishing in this batch started in it (no decorrelation): lengths add up per env.
    assert sum(i.Length for i in infos) <= 50 * 2


def test_wait_reset_collector_fills_steps_after_done_and_resets_at_next_batch():
    sampler = make_sampler(T=60, B=2, CollectorCls=WaitResetCollector)
    started(sampler)
    assert sampler.mid_batch_reset is False
    samples, _ = sampler.obtain_samples(0)
    done = samples.env.done.numpy()
    for b in range(2):
        hits = np.flatnonzero(done[:, b])
        assert hits.size > 0, "a random CartPole policy ends an episode within 60 steps"
        first = hits[0]
        assert done[first:, b].all()
        assert (samples.env.reward[first + 1 :, b] == 0).all()
    assert sampler.collector.need_reset.all()
    samples, _ = sampler.obtain_samples(1)
    assert not samples.env.done[0].any()
    sampler.shutdown()


def test_bootstrap_value_is_the_agent_value_of_the_observation_after_the_batch():
    sampler = make_sampler(T=5, B=2)
    agent = started(sampler, bootstrap_value=True)
    samples, _ = sampler.obtain_samples(0)
    observation, prev_action, prev_reward = sampler.agent_inputs
    expected = agent.value(
        torch.from_numpy(observation.copy()),
        torch.from_numpy(prev_action.copy()),
        torch.from_numpy(prev_reward.copy()),
    )
    torch.testing.assert_close(samples.agent.bootstrap_value[0], expected.float())
    sampler.shutdown()


def test_decorrelation_starts_envs_at_different_points():
    sampler = make_sampler(T=1, B=4, decorrelation=50)
    started(sampler)
    lengths = [info.Length for info in sampler.traj_infos]
    sampler.shutdown()
    assert len(set(lengths)) > 1


def test_episode_quotas_split_trajectories_evenly_over_envs():
    assert episode_quotas(3, 7).tolist() == [3, 2, 2]
    assert episode_quotas(4, None).tolist() == [1, 1, 1, 1]


def test_evaluation_returns_the_requested_number_of_whole_episodes():
    sampler = make_sampler(T=5, B=1, eval_n_envs=2, eval_max_steps=5000, eval_max_trajectories=5)
    started(sampler)
    infos = sampler.evaluate_agent(0)
    sampler.shutdown()
    assert len(infos) == 5
    assert all(info.Length > 0 for info in infos)


def test_evaluation_cut_by_max_steps_warns_and_drops_unfinished_episodes(caplog):
    sampler = make_sampler(T=5, B=1, eval_n_envs=2, eval_max_steps=4, eval_max_trajectories=2)
    started(sampler)
    with caplog.at_level(logging.WARNING):
        infos = sampler.evaluate_agent(0)
    sampler.shutdown()
    assert infos == []
    assert "still running at eval_max_steps" in caplog.text


def test_eval_envs_without_eval_max_steps_is_refused_at_construction():
    with pytest.raises(ValueError, match="eval_max_steps"):
        make_sampler(eval_n_envs=2)


class _WrongShapeEnv(Env):
    """An env whose declared observation space (461 values) disagrees with what it returns (365)."""

    def __init__(self):
        self._observation_space = IntBox(low=0, high=1, shape=461)
        self._action_space = IntBox(low=0, high=2)

    def reset(self):
        return np.zeros(365, dtype=np.int64)

    def step(self, action):
        info = namedtuple("EnvInfo", [])()
        return EnvStep(np.zeros(365, dtype=np.int64), 0.0, False, info)


def test_sampler_refuses_env_whose_observation_differs_from_its_space_at_initialize():
    sampler = SerialSampler(EnvCls=_WrongShapeEnv, env_kwargs={}, batch_T=2, batch_B=1)
    with pytest.raises(EnvValidationError, match=r"_WrongShapeEnv.*observation.*\(365,\).*\(461,\)"):
        sampler.initialize(CategoricalPgAgent(), seed=0)


def test_shutdown_is_idempotent():
    sampler = make_sampler()
    started(sampler)
    sampler.shutdown()
    sampler.shutdown()


def test_float_box_spaces_flow_through_pendulum():
    from rlrun.agents.pg.mujoco import MujocoFfAgent

    sampler = SerialSampler(
        EnvCls=make, env_kwargs=dict(id="Pendulum-v1"), batch_T=4, batch_B=2, max_decorrelation_steps=0
    )
    agent = MujocoFfAgent()
    sampler.initialize(agent, seed=1, bootstrap_value=True)
    samples, _ = sampler.obtain_samples(0)
    sampler.shutdown()
    assert samples.agent.action.shape == (4, 2, 1)
    assert isinstance(make(id="Pendulum-v1").spaces.action.space, FloatBox)


def test_get_example_outputs_fills_a_dict_in_place_as_rlpyt_did():
    from rlrun.agents.pg.categorical import CategoricalPgAgent
    from rlrun.envs.gym import make
    from rlrun.samplers.buffer import get_example_outputs

    env = make(id="CartPole-v1")
    agent = CategoricalPgAgent()
    agent.initialize(env.spaces)
    examples = {}
    returned = get_example_outputs(agent, env, examples, subprocess=False)  # rlpyt's call
    assert returned is examples
    assert set(examples) == {"observation", "reward", "done", "env_info", "action", "agent_info"}
    assert examples["observation"].shape == (4,) and examples["agent_info"].value.shape == ()


@pytest.mark.parametrize("factory", ["class", "partial"])
def test_a_traj_info_that_overrides_step_gets_its_envs_agent_info(factory):
    """The collector slices agent_info per env only for TrajInfos whose step may read it, however built."""
    import functools

    from rlrun.envs.traj_info import TrajInfo

    class ValueTrajInfo(TrajInfo):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self._values = []

        def step(self, observation, action, reward, done, agent_info, env_info):
            super().step(observation, action, reward, done, agent_info, env_info)
            self._values.append(float(agent_info.value))

    T, B = 6, 3
    TrajInfoCls = ValueTrajInfo if factory == "class" else functools.partial(ValueTrajInfo)
    sampler = make_sampler(T=T, B=B, TrajInfoCls=TrajInfoCls)
    started(sampler)
    samples, completed = sampler.obtain_samples(0)
    values = samples.agent.agent_info.value.numpy()  # [T, B]
    for b in range(B):  # each env's records since its last reset, this batch's or a completed one's
        done_at = np.flatnonzero(samples.env.done[:, b].numpy())
        start = done_at[-1] + 1 if done_at.size else 0
        recorded = sampler.traj_infos[b]._values
        assert recorded[len(recorded) - (T - start) :] == pytest.approx(values[start:, b].tolist())
    assert sum(len(t._values) for t in sampler.traj_infos) >= B
