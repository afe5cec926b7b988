"""An action the agent got wrong is blamed on the agent, before any env steps on it; an error an env
wrapper raises about a step names the env rank, the iteration and the time step, like the collectors' own."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.agents.pg.mujoco import MujocoFfAgent
from rlrun.envs.gym import make
from rlrun.envs.validation import EnvValidationError
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.samplers.step_checks import AgentOutputError

pytestmark = pytest.mark.timeout(120)
BAD_CALL = 7  # the agent's 7th step call: itr 0, t 6 with batch_T=10


class NanActionAgent(MujocoFfAgent):
    """Gives env 1 a NaN action on its BAD_CALL-th step call, as a diverged policy would."""

    calls = 0

    @torch.no_grad()
    def step(self, observation, prev_action, prev_reward):
        action, agent_info = super().step(observation, prev_action, prev_reward)
        type(self).calls += 1
        if type(self).calls == BAD_CALL:
            action = action.clone()
            action[-1] = float("nan")  # the last env of this sampler or worker
        return action, agent_info


class OutOfSpaceAgent(CategoricalPgAgent):
    """Gives env 1 the action 5 (CartPole has 2) on its BAD_CALL-th step call."""

    calls = 0

    @torch.no_grad()
    def step(self, observation, prev_action, prev_reward):
        action, agent_info = super().step(observation, prev_action, prev_reward)
        type(self).calls += 1
        if type(self).calls == BAD_CALL:
            action = action.clone()
            action[1] = 5
        return action, agent_info


def sample_once(SamplerCls, env_id, agent, B=2):
    type(agent).calls = 0
    sampler = SamplerCls(EnvCls=make, env_kwargs=dict(id=env_id), batch_T=10, batch_B=B, max_decorrelation_steps=0)
    sampler.initialize(agent, seed=1)
    try:
        sampler.obtain_samples(0)
    finally:
        sampler.shutdown()


def test_a_nan_continuous_action_is_blamed_on_the_agent_before_the_env_steps():
    with pytest.raises(AgentOutputError) as caught:
        sample_once(SerialSampler, "Pendulum-v1", NanActionAgent())
    message = str(caught.value)
    assert "The agent's action for GymEnvWrapper(Pendulum-v1) (env rank 1) at step() at itr 0, t 5" in message
    assert "The agent produced it" in message and "reward" not in message
    assert caught.value.env_rank == 1
    again = pickle.loads(pickle.dumps(caught.value))  # it crosses from a worker to the master
    assert str(again) == message and again.env_rank == 1 and again.where == caught.value.where


def test_a_nan_action_in_a_cpu_worker_reaches_the_master_as_the_agents_error():
    with pytest.raises(Exception, match=r"(?s)AgentOutputError.*\(env rank [13]\).*The agent produced it"):
        sample_once(CpuSampler, "Pendulum-v1", NanActionAgent(), B=4)  # two workers of two envs


def test_an_env_wrappers_own_error_names_the_env_rank_and_the_step():
    with pytest.raises(EnvValidationError) as caught:
        sample_once(SerialSampler, "CartPole-v1", OutOfSpaceAgent())
    error = caught.value
    assert "is not in the action space" in str(error) and "[env rank 1, step() at itr 0, t 5]" in str(error)
    assert error.env_rank == 1 and error.where == "step() at itr 0, t 5"


def test_finite_actions_cost_one_probe_and_integer_actions_none():
    from rlrun.samplers.step_checks import check_finite_actions

    check_finite_actions(np.zeros((8, 6), dtype=np.float32), envs=[None] * 8, env_ranks=list(range(8)), where="w")
    with pytest.raises(AgentOutputError, match="env rank 3"):
        bad = np.zeros((8, 6), dtype=np.float32)
        bad[3, 2] = np.inf
        check_finite_actions(bad, envs=[object()] * 8, env_ranks=list(range(8)), where="w")


@pytest.mark.parametrize("value, error, match", [
    (16.5, ValueError, "batch_T=16.5 is not a whole number of time steps per env; it would be cut to 16"),
    ("16", TypeError, "give an int, not str '16'"),
    (True, TypeError, "give an int, not bool True"),
])  # fmt: skip
def test_a_batch_size_that_is_no_whole_number_is_refused(value, error, match):
    with pytest.raises(error, match=match):
        SerialSampler(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=value, batch_B=2)
    assert SerialSampler(EnvCls=make, env_kwargs={}, batch_T=16.0, batch_B=2).batch_spec == (16, 2)  # 1e3 style
