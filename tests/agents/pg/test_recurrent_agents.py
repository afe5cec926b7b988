"""Recurrent policy-gradient agents: the state they carry between steps, what they record, their forward pass."""

from __future__ import annotations

import inspect

import pytest
import torch

from rlrun.agents.base import RecurrentAgentMixin
from rlrun.agents.dqn.atari.atari_r2d1_agent import AtariR2d1Agent, AtariR2d1AlternatingAgent
from rlrun.agents.dqn.r2d1_agent import R2d1Agent, R2d1AlternatingAgent
from rlrun.agents.pg.atari import AlternatingAtariLstmAgent, AtariLstmAgent
from rlrun.agents.pg.base import AgentInfoRnnStart, rnn_state_from_storage
from rlrun.agents.pg.categorical import (
    AlternatingRecurrentCategoricalPgAgent,
    RecurrentCategoricalPgAgent,
    RecurrentCategoricalPgAgentBase,
)
from rlrun.agents.pg.gaussian import AlternatingRecurrentGaussianPgAgent, RecurrentGaussianPgAgent
from rlrun.agents.pg.mujoco import AlternatingMujocoLstmAgent, MujocoLstmAgent
from rlrun.envs.base import EnvSpaces
from rlrun.models.lstm import RnnState
from rlrun.models.pg.atari_lstm_model import AtariLstmModel
from rlrun.models.pg.mlp_lstm_model import CategoricalPgLstmModel
from rlrun.models.pg.mujoco_lstm_model import MujocoLstmModel
from rlrun.samplers.buffer import build_samples_buffer
from rlrun.samplers.collections import BatchSpec
from rlrun.spaces.int_box import IntBox

pytestmark = pytest.mark.timeout(60)

B, T, H = 4, 5, 16


def cartpole_inputs(*lead):
    return torch.randn(*lead, 4), torch.randint(0, 2, lead), torch.randn(lead)


@pytest.fixture
def agent(cartpole):
    torch.manual_seed(0)
    agent = RecurrentCategoricalPgAgent(model_kwargs=dict(lstm_size=H))
    agent.initialize(cartpole.spaces)
    agent.sample_mode(0)
    return agent


def test_default_model_is_the_categorical_lstm_sized_from_the_env(agent):
    assert agent.recurrent and isinstance(agent.model, CategoricalPgLstmModel)
    assert agent.prev_rnn_state is None


def test_step_records_the_state_it_started_from_and_keeps_the_next(agent):
    inputs = cartpole_inputs(B)
    first = agent.step(*inputs)
    assert isinstance(first.agent_info, AgentInfoRnnStart)
    assert first.agent_info.episode_start.tolist() == [True] * B  # after a reset every env starts
    assert first.action.shape == (B,) and first.agent_info.value.shape == (B,)
    stored = first.agent_info.prev_rnn_state  # batch-first: [B, N, H], zeros after a reset
    assert isinstance(stored, RnnState) and stored.h.shape == (B, 2, H)
    assert not stored.h.any() and not stored.c.any()
    kept = agent.prev_rnn_state
    assert kept.h.shape == (2, B, H) and kept.h.abs().sum() > 0
    second = agent.step(*inputs)
    torch.testing.assert_close(rnn_state_from_storage(second.agent_info.prev_rnn_state).h, kept.h)
    torch.testing.assert_close(rnn_state_from_storage(second.agent_info.prev_rnn_state).c, kept.c)
    assert not torch.equal(agent.prev_rnn_state.h, kept.h)  # advanced again
    # The same inputs from another state give other outputs: the state matters.
    assert not torch.allclose(first.agent_info.value, second.agent_info.value)
    for x in (*second.agent_info.prev_rnn_state, second.action, second.agent_info.value):
        assert x.device.type == "cpu" and not x.requires_grad


def test_reset_one_zeroes_one_env_whose_next_step_then_matches_a_fresh_start(agent, cartpole):
    inputs = cartpole_inputs(B)
    for _ in range(3):
        agent.step(*inputs)
    before = RnnState(*(x.clone() for x in agent.prev_rnn_state))
    agent.reset_one(2)
    after = agent.prev_rnn_state
    assert not after.h[:, 2].any() and not after.c[:, 2].any()
    keep = [0, 1, 3]
    assert torch.equal(after.h[:, keep], before.h[:, keep]) and torch.equal(after.c[:, keep], before.c[:, keep])
    next_values = agent.step(*inputs).agent_info.value
    fresh = RecurrentCategoricalPgAgent(model_kwargs=dict(lstm_size=H))
    fresh.initialize(cartpole.spaces)
    fresh.load_state_dict(agent.state_dict())
    fresh_values = fresh.step(*inputs).agent_info.value
    torch.testing.assert_close(next_values[2], fresh_values[2])
    assert not torch.allclose(next_values[keep], fresh_values[keep])


def test_value_reads_the_state_without_advancing_it(agent):
    inputs = cartpole_inputs(B)
    agent.step(*inputs)
    kept = agent.prev_rnn_state
    value = agent.value(*inputs)
    assert agent.prev_rnn_state is kept
    torch.testing.assert_close(value, agent.step(*inputs).agent_info.value)


def test_call_over_a_batch_from_the_stored_state_reproduces_the_steps(agent):
    observation, prev_action, prev_reward = cartpole_inputs(T, B)
    agent.step(*cartpole_inputs(B))  # some state to start from
    steps = [agent.step(observation[t], prev_action[t], prev_reward[t]) for t in range(T)]
    init_rnn_state = rnn_state_from_storage(steps[0].agent_info.prev_rnn_state)
    dist_info, value, final = agent(observation, prev_action, prev_reward, init_rnn_state)
    assert dist_info.prob.shape == (T, B, 2) and value.shape == (T, B) and value.requires_grad
    torch.testing.assert_close(dist_info.prob.detach(), torch.stack([s.agent_info.dist_info.prob for s in steps]))
    torch.testing.assert_close(value.detach(), torch.stack([s.agent_info.value for s in steps]))
    torch.testing.assert_close(final.h, agent.prev_rnn_state.h)
    (dist_info.prob[..., 0].sum() + value.sum()).backward()
    assert all(p.grad is not None for p in agent.parameters())


def test_sampling_state_survives_training_and_evaluation(agent):
    inputs = cartpole_inputs(B)
    agent.step(*inputs)
    sampling = agent.prev_rnn_state
    agent.train_mode(0)
    assert agent.prev_rnn_state is None
    agent.eval_mode(0)
    agent.step(*cartpole_inputs(2))  # evaluation envs have their own state
    agent.sample_mode(1)
    assert agent.prev_rnn_state is sampling


def test_greedy_eval_takes_the_most_probable_action(cartpole):
    agent = RecurrentCategoricalPgAgent(greedy_eval=True)
    agent.initialize(cartpole.spaces)
    agent.eval_mode(0)
    step = agent.step(*cartpole_inputs(64))
    assert torch.equal(step.action, step.agent_info.dist_info.prob.argmax(-1))


def test_the_base_class_is_stateless_each_step_starts_from_zeros(cartpole):
    torch.manual_seed(0)
    agent = RecurrentCategoricalPgAgentBase()
    agent.initialize(cartpole.spaces)
    inputs = cartpole_inputs(B)
    first, second = agent.step(*inputs), agent.step(*inputs)
    assert agent.recurrent and agent.prev_rnn_state is None
    torch.testing.assert_close(first.agent_info.value, second.agent_info.value)


def test_atari_lstm_agent_steps_on_single_frames():
    spaces = EnvSpaces(observation=IntBox(0, 256, shape=(1, 104, 80), dtype="uint8"), action=IntBox(0, 6))
    torch.manual_seed(0)
    agent = AtariLstmAgent(model_kwargs=dict(fc_sizes=32, lstm_size=H))
    agent.initialize(spaces)
    assert isinstance(agent.model, AtariLstmModel)
    frames = torch.randint(0, 256, (B, 1, 104, 80), dtype=torch.uint8)
    step = agent.step(frames, torch.zeros(B, dtype=torch.long), torch.zeros(B))
    assert ((step.action >= 0) & (step.action < 6)).all()
    assert step.agent_info.dist_info.prob.shape == (B, 6)
    assert step.agent_info.prev_rnn_state.h.shape == (B, 1, H)
    assert agent.prev_rnn_state.h.shape == (1, B, H)


def test_mujoco_lstm_agent_steps_and_updates_its_observation_statistics(pendulum):
    torch.manual_seed(0)
    agent = MujocoLstmAgent(model_kwargs=dict(hidden_sizes=[8], lstm_size=H, normalize_observation=True))
    agent.initialize(pendulum.spaces)
    assert isinstance(agent.model, MujocoLstmModel)
    observation = torch.randn(B, 3)
    step = agent.step(observation, torch.zeros(B, 1), torch.zeros(B))
    assert step.action.shape == (B, 1) and step.agent_info.dist_info.mean.shape == (B, 1)
    assert step.agent_info.prev_rnn_state.c.shape == (B, 1, H)
    agent.update_obs_rms(observation)
    assert agent.model.obs_rms.count == B
    dist_info, value, _ = agent(torch.randn(T, B, 3), torch.randn(T, B, 1), torch.randn(T, B))
    assert dist_info.log_std.shape == (T, B, 1) and value.shape == (T, B)


def test_gaussian_default_model_is_the_mujoco_lstm(pendulum):
    agent = RecurrentGaussianPgAgent()
    agent.initialize(pendulum.spaces)
    assert agent.recurrent and isinstance(agent.model, MujocoLstmModel)


@pytest.mark.parametrize(
    "alias, agent_cls",
    [
        (AlternatingRecurrentCategoricalPgAgent, RecurrentCategoricalPgAgent),
        (AlternatingRecurrentGaussianPgAgent, RecurrentGaussianPgAgent),
        (AlternatingAtariLstmAgent, AtariLstmAgent),
        (AlternatingMujocoLstmAgent, MujocoLstmAgent),
        (R2d1AlternatingAgent, R2d1Agent),
        (AtariR2d1AlternatingAgent, AtariR2d1Agent),
    ],
)
def test_rlpyts_alternating_names_are_the_same_agents_alternating(alias, agent_cls):
    # Siblings, as in rlpyt (not subclasses: a class level each), assembled from the same parts.
    assert alias.alternating and not agent_cls.alternating
    assert alias.recurrent and issubclass(alias, RecurrentAgentMixin) and issubclass(agent_cls, RecurrentAgentMixin)
    assert inspect.signature(alias.__init__) == inspect.signature(agent_cls.__init__)
    own = {"alternating", "__init__", "__doc__", "__module__", "__qualname__", "__firstlineno__"}
    own |= {"__static_attributes__", "__dict__", "__weakref__", "__slotnames__"}  # the last: cached by pickling
    own.add("__annotations__")  # created in a class's own dict when something reads it (typing, other tests)
    differing = [
        name
        for name in dir(agent_cls)
        if name not in own and inspect.getattr_static(alias, name) is not inspect.getattr_static(agent_cls, name)
    ]
    assert differing == []


def test_the_samples_buffer_holds_one_batch_first_state_per_env_and_step(agent, cartpole):
    _pyt, samples_np, examples = build_samples_buffer(
        agent, cartpole, BatchSpec(T, B), bootstrap_value=True, agent_shared=False, env_shared=False
    )
    stored = samples_np.agent.agent_info.prev_rnn_state
    assert stored.h.shape == stored.c.shape == (T, B, 2, H)
    assert agent.prev_rnn_state is None  # the example step does not leave a state behind
