import multiprocessing as mp

import pytest
import torch

from rlrun.agents.base import AgentStep, BaseAgent, RecurrentAgentMixin
from rlrun.agents.pg.categorical import CategoricalPgAgent


@pytest.fixture
def cartpole_spaces(cartpole):
    return cartpole.spaces


def first_param(module):
    return next(iter(module.parameters()))


def test_share_memory_puts_every_model_tensor_in_shared_memory(cartpole_spaces):
    agent = CategoricalPgAgent()
    agent.initialize(cartpole_spaces, share_memory=True)
    assert agent.shared_model is agent.model
    assert all(p.is_shared() for p in agent.model.parameters())


def test_without_share_memory_there_is_no_shared_model_and_sync_is_a_no_op(cartpole_spaces):
    agent = CategoricalPgAgent()
    agent.initialize(cartpole_spaces, share_memory=False)
    assert agent.shared_model is None
    assert not any(p.is_shared() for p in agent.model.parameters())
    agent.sync_shared_memory()


def test_to_device_with_a_shared_model_trains_a_separate_copy(cartpole_spaces):
    agent = CategoricalPgAgent()
    agent.initialize(cartpole_spaces, share_memory=True)
    shared = agent.shared_model
    agent.to_device("cpu")
    assert agent.shared_model is shared
    assert agent.model is not shared
    assert not any(p.is_shared() for p in agent.model.parameters())
    for a, b in zip(agent.model.parameters(), shared.parameters()):
        assert a.data_ptr() != b.data_ptr()
        torch.testing.assert_close(a, b)


def test_sync_shared_memory_copies_trained_weights_into_the_same_shared_tensors(cartpole_spaces):
    agent = CategoricalPgAgent()
    agent.initialize(cartpole_spaces, share_memory=True)
    agent.to_device("cpu")
    pointers = [p.data_ptr() for p in agent.shared_model.parameters()]
    with torch.no_grad():
        for p in agent.model.parameters():
            p.add_(1.0)
    assert not torch.equal(first_param(agent.model), first_param(agent.shared_model))
    agent.sync_shared_memory()
    for a, b in zip(agent.model.parameters(), agent.shared_model.parameters()):
        torch.testing.assert_close(a, b)
    assert [p.data_ptr() for p in agent.shared_model.parameters()] == pointers
    assert all(p.is_shared() for p in agent.shared_model.parameters())


def _report_weight_sum(agent, go, out):
    go.wait(timeout=20)
    out.put(float(sum(p.sum() for p in agent.shared_model.parameters())))


def test_a_forked_worker_sees_weights_synced_after_it_started(cartpole_spaces):
    agent = CategoricalPgAgent()
    agent.initialize(cartpole_spaces, share_memory=True)
    ctx = mp.get_context("fork")
    go, out = ctx.Event(), ctx.Queue()
    worker = ctx.Process(target=_report_weight_sum, args=(agent, go, out))
    worker.start()
    try:
        agent.to_device("cpu")
        with torch.no_grad():
            for p in agent.model.parameters():
                p.fill_(0.5)
        agent.sync_shared_memory()
        go.set()
        seen = out.get(timeout=20)
    finally:
        worker.join(timeout=20)
    expected = 0.5 * sum(p.numel() for p in agent.model.parameters())
    assert seen == pytest.approx(expected)


def test_to_device_none_leaves_the_model_where_it_is(cartpole_spaces):
    agent = CategoricalPgAgent()
    agent.initialize(cartpole_spaces, share_memory=True)
    agent.to_device(None)
    assert agent.model is agent.shared_model
    assert agent.device == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on machines without CUDA")
def test_to_device_with_a_cuda_index_but_no_cuda_says_how_to_stay_on_cpu(cartpole_spaces):
    agent = CategoricalPgAgent()
    agent.initialize(cartpole_spaces)
    with pytest.raises(RuntimeError, match="cuda_idx=None"):
        agent.to_device(0)


def test_base_agent_without_a_model_class_says_to_pass_one(cartpole_spaces):
    with pytest.raises(ValueError, match="ModelCls"):
        BaseAgent().initialize(cartpole_spaces)


def test_initial_model_state_dict_is_loaded(cartpole_spaces):
    source = CategoricalPgAgent()
    source.initialize(cartpole_spaces)
    agent = CategoricalPgAgent(initial_model_state_dict=source.state_dict())
    agent.initialize(cartpole_spaces, share_memory=True)
    for a, b in zip(source.model.parameters(), agent.model.parameters()):
        torch.testing.assert_close(a, b)
    assert all(p.is_shared() for p in agent.model.parameters())


def test_state_dict_round_trip_reproduces_outputs(cartpole_spaces):
    a, b = CategoricalPgAgent(), CategoricalPgAgent()
    a.initialize(cartpole_spaces)
    b.initialize(cartpole_spaces)
    obs = torch.randn(5, 4)
    prev_action, prev_reward = torch.zeros(5, dtype=torch.long), torch.zeros(5)
    b.load_state_dict(a.state_dict())
    torch.testing.assert_close(a.value(obs, prev_action, prev_reward), b.value(obs, prev_action, prev_reward))


def test_modes_switch_the_model_between_train_and_eval(cartpole_spaces):
    agent = CategoricalPgAgent()
    agent.initialize(cartpole_spaces)
    agent.train_mode(0)
    assert agent.model.training
    agent.sample_mode(0)
    assert not agent.model.training
    agent.train_mode(1)
    agent.eval_mode(1)
    assert not agent.model.training


def test_parameters_are_the_models(cartpole_spaces):
    agent = CategoricalPgAgent()
    agent.initialize(cartpole_spaces)
    assert list(agent.parameters()) == list(agent.model.parameters())


class TinyLstm(torch.nn.Module):
    def __init__(self, observation_size, hidden_size=3):
        super().__init__()
        self.lstm = torch.nn.LSTM(observation_size, hidden_size)

    def forward(self, observation, prev_action, prev_reward, rnn_state):
        out, (h, c) = self.lstm(observation.unsqueeze(0), rnn_state)
        return out.squeeze(0), (h, c)


class TinyRecurrentAgent(RecurrentAgentMixin, BaseAgent):
    def make_env_to_model_kwargs(self, env_spaces):
        return dict(observation_size=env_spaces.observation.shape[0])

    @torch.no_grad()
    def step(self, observation, prev_action, prev_reward):
        out, rnn_state = self.model(observation, prev_action, prev_reward, self.prev_rnn_state)
        self.advance_rnn_state(rnn_state)
        return AgentStep(action=out.argmax(-1), agent_info=None)


@pytest.fixture
def recurrent_agent(cartpole_spaces):
    agent = TinyRecurrentAgent(ModelCls=TinyLstm)
    agent.initialize(cartpole_spaces)
    agent.sample_mode(0)
    return agent


def test_recurrent_agent_starts_without_state_and_keeps_the_state_step_returns(recurrent_agent):
    assert recurrent_agent.recurrent
    assert recurrent_agent.prev_rnn_state is None
    recurrent_agent.step(torch.randn(4, 4), None, None)
    h, c = recurrent_agent.prev_rnn_state
    assert h.shape == c.shape == (1, 4, 3)


def test_recurrent_reset_one_zeroes_only_that_envs_state(recurrent_agent):
    recurrent_agent.step(torch.randn(4, 4), None, None)
    before = [s.clone() for s in recurrent_agent.prev_rnn_state]
    recurrent_agent.reset_one(2)
    for old, new in zip(before, recurrent_agent.prev_rnn_state):
        assert (new[:, 2] == 0).all()
        torch.testing.assert_close(new[:, [0, 1, 3]], old[:, [0, 1, 3]])
        assert (old[:, 2] != 0).any()


def test_recurrent_reset_clears_the_state(recurrent_agent):
    recurrent_agent.step(torch.randn(4, 4), None, None)
    recurrent_agent.reset()
    assert recurrent_agent.prev_rnn_state is None
    recurrent_agent.reset_one(0)  # nothing to zero: no error


def test_recurrent_sampling_state_survives_training_and_evaluation(recurrent_agent):
    recurrent_agent.step(torch.randn(4, 4), None, None)
    sampling_state = recurrent_agent.prev_rnn_state
    recurrent_agent.train_mode(0)
    assert recurrent_agent.prev_rnn_state is None
    recurrent_agent.eval_mode(0)
    assert recurrent_agent.prev_rnn_state is None
    recurrent_agent.step(torch.randn(2, 4), None, None)  # evaluation envs have their own state
    recurrent_agent.sample_mode(1)
    assert recurrent_agent.prev_rnn_state is sampling_state


def test_model_kwargs_that_repeat_env_derived_sizes_are_refused(cartpole_spaces):
    agent = CategoricalPgAgent(model_kwargs=dict(action_size=3))
    with pytest.raises(ValueError, match=r"\['action_size'\].*make_env_to_model_kwargs"):
        agent.initialize(cartpole_spaces)
