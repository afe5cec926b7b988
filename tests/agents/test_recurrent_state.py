"""The recurrent state as a part the agent holds: snapshots for samplers, modes, env groups."""

from __future__ import annotations

import pytest
import torch

from rlrun.agents.pg.categorical import AlternatingRecurrentCategoricalPgAgent, RecurrentCategoricalPgAgent
from rlrun.agents.recurrent_state import RecurrentMemory
from rlrun.envs.gym import make

pytestmark = pytest.mark.timeout(60)

B = 2


def _inputs(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(B, 4, generator=g), torch.randint(0, 2, (B,), generator=g), torch.randn(B, generator=g)


def _agent(cls: type[RecurrentCategoricalPgAgent] = RecurrentCategoricalPgAgent) -> RecurrentCategoricalPgAgent:
    torch.manual_seed(0)
    agent = cls()
    agent.initialize(make("CartPole-v1").spaces)
    agent.sample_mode(0)
    return agent


def test_a_step_state_snapshot_brings_sampling_back_after_an_evaluation_episode():
    agent = _agent()
    agent.step(*_inputs(1))
    sampling_state = agent.prev_rnn_state
    snapshot = agent.get_step_state()
    agent.eval_mode(1)  # what a video or `rlrun play` does in between
    agent.reset()
    agent.step(*_inputs(2))
    agent.reset_one(0)
    agent.set_step_state(snapshot)
    assert agent.prev_rnn_state is sampling_state
    assert agent.rnn_memory.current.starting == set()


def test_a_snapshot_does_not_follow_later_steps():
    agent = _agent()
    agent.step(*_inputs(1))
    snapshot = agent.get_step_state()
    agent.reset_one(1)
    agent.step(*_inputs(2))
    memory = snapshot["rnn_memory"]
    assert isinstance(memory, RecurrentMemory)
    assert memory.current.rnn_state is not agent.prev_rnn_state and memory.current.starting == set()


def test_each_group_keeps_its_own_starting_envs_and_state():
    memory = RecurrentMemory(n_groups=2)
    state = torch.ones(1, B, 3)
    memory.advance(state)
    memory.toggle()
    assert memory.alt == 1 and memory.current.rnn_state is None
    memory.reset_one(0)
    assert memory.current.starting == {0}
    memory.toggle()
    assert memory.current.rnn_state is state and memory.current.starting == set()


def test_training_sets_the_sampling_groups_aside_and_sampling_takes_them_back():
    agent = _agent(AlternatingRecurrentCategoricalPgAgent)
    agent.step(*_inputs(1))
    first = agent.prev_rnn_state
    agent.toggle_alt()
    agent.step(*_inputs(2))
    second = agent.prev_rnn_state
    agent.train_mode(1)
    assert agent.get_alt() == 0 and agent.prev_rnn_state is None
    agent.sample_mode(1)
    assert agent.prev_rnn_state is first
    agent.toggle_alt()
    assert agent.prev_rnn_state is second


def test_one_or_two_groups_only():
    with pytest.raises(ValueError, match="one env group or two"):
        RecurrentMemory(n_groups=3)


def test_a_step_state_saved_before_the_recurrent_memory_still_restores():
    """Serial-sampler checkpoints written before the RecurrentMemory held the state as _prev_rnn_state."""
    agent = _agent()
    agent.step(*_inputs(1))
    old = {name: value for name, value in agent.get_step_state().items() if name != "rnn_memory"}
    old["_prev_rnn_state"] = saved = agent.prev_rnn_state
    fresh = _agent()
    fresh.set_step_state(old)
    assert fresh.prev_rnn_state is saved
    a, b = agent.step(*_inputs(2)), fresh.step(*_inputs(2))  # same weights, same state: same values
    assert torch.equal(a.agent_info.value, b.agent_info.value)


def test_a_step_state_without_recurrent_memory_is_refused_by_name():
    agent = _agent()
    state = {name: value for name, value in agent.get_step_state().items() if name != "rnn_memory"}
    with pytest.raises(KeyError, match="no recurrent memory"):
        _agent().set_step_state(state)
