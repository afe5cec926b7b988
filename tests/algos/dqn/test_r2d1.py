"""R2D1: value rescaling, runs with resets, the loss on a hand-checked case, input priorities, the
agent's recorded states, and updates on real masked-CartPole batches through the sequence replay."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from masked_cartpole import masked_cartpole

from rlrun.agents.dqn.atari.atari_r2d1_agent import AtariR2d1Agent
from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.dqn.r2d1_agent import R2d1Agent
from rlrun.algos.dqn.dqn import DQN
from rlrun.algos.dqn.r2d1 import R2D1, inv_value_rescale, run_with_resets, value_rescale
from rlrun.envs.base import EnvSpaces
from rlrun.models.dqn.atari_r2d1_model import AtariR2d1Model
from rlrun.models.dqn.r2d1_mlp import R2d1MlpModel
from rlrun.models.lstm import RnnState
from rlrun.replays.sampling import PrioritizedSampling
from rlrun.replays.sequence.n_step import SamplesFromReplay
from rlrun.replays.sequences import SequenceReplay
from rlrun.samplers.collectors import WaitResetCollector
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.spaces.float_box import FloatBox
from rlrun.spaces.int_box import IntBox
from rlrun.utils.collections import namedarraytuple

pytestmark = pytest.mark.timeout(60)


def test_value_rescale_and_its_inverse():
    x = torch.tensor([-1000.0, -3.0, -0.5, 0.0, 0.5, 3.0, 1000.0])
    eps = 1e-3
    torch.testing.assert_close(value_rescale(x, eps), torch.sign(x) * (torch.sqrt(x.abs() + 1) - 1) + eps * x)
    torch.testing.assert_close(inv_value_rescale(value_rescale(x, eps), eps), x, rtol=1e-5, atol=1e-4)
    assert value_rescale(torch.tensor(3.0), eps).item() == pytest.approx(1 + 3e-3)  # sqrt(4) - 1 + eps * 3


class Counter(torch.nn.Module):
    """q[t, b] = the number of steps since the sequence's state was zero, plus the observation; state [1, B, 1]."""

    def forward(self, observation, prev_action, prev_reward, state):
        T, B = observation.shape[:2]
        count = torch.zeros(1, B, 1) if state is None else state
        out = []
        for t in range(T):
            count = count + 1
            out.append(count[0, :, 0] + observation[t])
        return torch.stack(out), count


def test_run_with_resets_restarts_the_state_where_episodes_start():
    T, B = 6, 3
    reset = torch.zeros(T, B, dtype=torch.bool)
    reset[2, 0] = reset[4, 0] = reset[4, 2] = True
    zeros = torch.zeros(T, B)
    out, state = run_with_resets(Counter(), zeros, zeros, zeros, torch.full((1, B, 1), 10.0), reset)
    expected = torch.tensor([[11, 11, 11], [12, 12, 12], [1, 13, 13], [2, 14, 14], [1, 15, 1], [2, 16, 2]]).float()
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(state[0, :, 0], torch.tensor([2.0, 16.0, 2.0]))
    reset[0, 1] = True  # a reset at the first step zeroes the given state
    out, _ = run_with_resets(Counter(), zeros, zeros, zeros, torch.full((1, B, 1), 10.0), reset)
    torch.testing.assert_close(out[:, 1], torch.arange(1, T + 1).float())


class TableQ(torch.nn.Module):
    """Q(s, a) = weight[a] * s (observation is a scalar per step); no real recurrence."""

    def __init__(self, observation_shape=(), action_size=2):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.tensor([1.0, 2.0]))

    def forward(self, observation, prev_action, prev_reward, init_rnn_state=None):
        q = observation.unsqueeze(-1) * self.weight
        B = observation.shape[1] if observation.dim() > 1 else 1
        return q, RnnState(torch.zeros(1, B, 1), torch.zeros(1, B, 1))


def r2d1_agent(ModelCls=TableQ):
    agent = R2d1Agent(ModelCls=ModelCls)
    agent.initialize(EnvSpaces(observation=FloatBox(-10, 10, shape=()), action=IntBox(0, 2)))
    return agent


def test_loss_on_a_hand_checked_sequence():
    """One sequence, warm-up 1, batch_T 2, 2-step returns, discount 0.5, double DQN, no priorities."""
    algo = R2D1(discount=0.5, batch_T=2, warmup_T=1, n_step_return=2, value_scale_eps=1e-3, prioritized_replay=False)
    algo.agent = r2d1_agent()
    algo.agent.target_model.weight.data = torch.tensor([3.0, 1.0])
    obs = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]).view(5, 1)  # rows t .. t + warmup + batch_T + n - 1
    all_action = torch.tensor([0, 1, 0, 1, 0]).view(5, 1)  # previous actions: action of row i is all_action[i + 1]
    return_ = torch.tensor([0.0, 1.5, 2.0]).view(3, 1)
    done_n = torch.tensor([False, False, True]).view(3, 1)
    samples = SamplesFromReplay(
        all_observation=obs, all_action=all_action, all_reward=torch.zeros(5, 1), return_=return_,
        done=torch.zeros(3, 1, dtype=torch.bool), done_n=done_n, init_rnn_state=None,
        all_reset=torch.zeros(5, 1, dtype=torch.bool), valid=torch.ones(3, 1, dtype=torch.bool),
    )  # fmt: skip
    loss, td_abs, priorities = algo.loss(samples)
    eps = 1e-3
    h = lambda x: math.copysign(math.sqrt(abs(x) + 1) - 1, x) + eps * x  # noqa: E731
    h_inv = lambda z: inv_value_rescale(torch.tensor(z), eps).item()  # noqa: E731
    # Trained rows 1 and 2 (obs 2, 3; actions 0, 1): Q = 1 * 2 and 2 * 3.
    # Row 1: target state row 3 (obs 4): online argmax a=1 (2 * 4), target Q = 1 * 4 -> y = h(1.5 + 0.25 h^-1(4)).
    # Row 2: done_n -> y = h(2.0).
    y1 = h(1.5 + 0.25 * h_inv(4.0))
    y2 = h(2.0)
    d = torch.tensor([y1 - 2.0, y2 - 6.0])
    torch.testing.assert_close(loss, (0.5 * d**2).mean())
    torch.testing.assert_close(td_abs[:, 0], d.abs())
    torch.testing.assert_close(priorities, 0.9 * d.abs().max().view(1) + 0.1 * d.abs().mean().view(1))
    loss.backward()
    assert algo.agent.model.weight.grad is not None


def test_loss_leaves_filler_steps_out_and_weights_by_importance():
    algo = R2D1(discount=0.5, batch_T=2, warmup_T=0, n_step_return=1, prioritized_replay=False)
    algo.agent = r2d1_agent()
    fields = dict(
        all_observation=torch.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]),
        all_action=torch.zeros(3, 2, dtype=torch.long), all_reward=torch.zeros(3, 2),
        return_=torch.ones(2, 2), done=torch.zeros(2, 2, dtype=torch.bool), done_n=torch.zeros(2, 2, dtype=torch.bool),
        init_rnn_state=None, all_reset=torch.zeros(3, 2, dtype=torch.bool),
    )  # fmt: skip
    full, td_full, _ = algo.loss(SamplesFromReplay(**fields, valid=torch.ones(2, 2, dtype=torch.bool)))
    valid = torch.tensor([[True, True], [True, False]])
    part, td_part, _ = algo.loss(SamplesFromReplay(**fields, valid=valid))
    assert td_part[1, 1] == 0 and td_part[1, 0] == td_full[1, 0]
    per_step = 0.5 * td_full**2
    torch.testing.assert_close(part, per_step[valid].mean())
    Pri = namedarraytuple("Pri", SamplesFromReplay._fields + ("is_weights",))
    weighted, _, _ = algo.loss(
        Pri(**fields, valid=torch.ones(2, 2, dtype=torch.bool), is_weights=torch.tensor([1.0, 0.5]))
    )
    torch.testing.assert_close(weighted, (per_step * torch.tensor([1.0, 0.5])).mean())


def test_agent_records_the_state_each_step_started_from_and_resets_it():
    torch.manual_seed(0)
    agent = R2d1Agent(model_kwargs=dict(hidden_sizes=(8,), lstm_size=5, head_size=8))
    agent.initialize(EnvSpaces(observation=FloatBox(-1, 1, shape=(3,)), action=IntBox(0, 2)))
    assert isinstance(agent.model, R2d1MlpModel)
    agent.sample_mode(1)
    obs, prev_a, prev_r = torch.randn(4, 3), torch.zeros(4, dtype=torch.long), torch.zeros(4)
    step0 = agent.step(obs, prev_a, prev_r)
    assert step0.agent_info.prev_rnn_state.h.shape == (4, 1, 5)  # batch-first
    assert torch.all(step0.agent_info.prev_rnn_state.h == 0)
    step1 = agent.step(obs, step0.action, prev_r)
    assert torch.all(step1.agent_info.prev_rnn_state.h != 0)
    agent.reset_one(2)
    step2 = agent.step(obs, step1.action, prev_r)
    assert torch.all(step2.agent_info.prev_rnn_state.h[2] == 0) and torch.all(step2.agent_info.prev_rnn_state.h[0] != 0)
    # The forward pass over the sequence (its first step an episode's first) gives the Q-values the steps recorded.
    seq_obs = obs.unsqueeze(0).expand(2, 4, 3)
    start = torch.tensor([[True] * 4, [False] * 4])
    q, _ = agent(seq_obs, torch.stack([prev_a, step0.action]), torch.zeros(2, 4), None, start)
    torch.testing.assert_close(q, torch.stack([step0.agent_info.q, step1.agent_info.q]))


def lstm_agent(seed=0):
    torch.manual_seed(seed)
    agent = R2d1Agent(model_kwargs=dict(hidden_sizes=(8,), lstm_size=5, head_size=8))
    agent.initialize(EnvSpaces(observation=FloatBox(-1, 1, shape=(3,)), action=IntBox(0, 3)))
    return agent


def test_an_episode_first_step_sees_no_previous_action_or_reward_in_sampling_and_evaluation():
    """Collectors hand an episode's first step the previous episode's last action and reward, and an
    evaluation's first step the null action and reward 0: the agent must act the same on both."""
    agent = lstm_agent()
    obs = torch.randn(2, 3)
    agent.sample_mode(1)
    first = agent.step(obs, torch.tensor([2, 1]), torch.tensor([1.0, -3.0])).agent_info.q
    agent.eval_mode(1)
    agent.reset()
    torch.testing.assert_close(agent.step(obs, torch.tensor([0, 0]), torch.zeros(2)).agent_info.q, first)
    # Mid-episode the previous action and reward count; after reset_one only that env's are hidden.
    later = agent.step(obs, torch.tensor([2, 1]), torch.tensor([1.0, -3.0])).agent_info.q
    other = agent.step(obs, torch.tensor([0, 2]), torch.tensor([0.0, 5.0])).agent_info.q
    assert not torch.allclose(later, other)
    agent.reset_one(1)
    state = agent.get_step_state()
    a = agent.step(obs, torch.tensor([1, 2]), torch.tensor([1.0, 1.0])).agent_info.q
    agent.set_step_state(state)
    b = agent.step(obs, torch.tensor([1, 0]), torch.tensor([1.0, 0.0])).agent_info.q
    torch.testing.assert_close(a, b)  # env 1's inputs hidden; env 0's the same
    # Envs reset at a sampler batch's last step start their episode at the next batch's first step,
    # across an update and an evaluation in between.
    agent.sample_mode(2)
    agent.step(obs, torch.tensor([1, 2]), torch.tensor([1.0, 1.0]))
    agent.reset_one(0)
    agent.train_mode(2)
    agent.eval_mode(2)
    agent.step(obs, torch.tensor([1, 2]), torch.tensor([1.0, 1.0]))
    agent.sample_mode(3)
    assert agent.episode_starts(2).tolist() == [True, False]


def test_replayed_sequences_give_the_q_values_sampled_across_an_episode_start():
    """Stepping with a reset mid-sequence (collector inputs: the old episode's last action and reward at
    the new episode's first step) and replaying the sequence through run_with_resets agree."""
    agent = lstm_agent(1)
    T, B = 6, 2
    obs = torch.randn(T, B, 3)
    prev_action = torch.randint(0, 3, (T, B))
    prev_reward = torch.randn(T, B)
    reset = torch.zeros(T, B, dtype=torch.bool)
    reset[0] = True
    reset[3, 1] = True
    agent.sample_mode(1)
    qs = []
    for t in range(T):
        if t and reset[t, 1]:
            agent.reset_one(1)
        qs.append(agent.step(obs[t], prev_action[t], prev_reward[t]).agent_info.q)
    q, _ = run_with_resets(agent, obs, prev_action, prev_reward, None, reset, pass_reset=True)
    torch.testing.assert_close(q, torch.stack(qs))


def test_atari_r2d1_model_and_agent_shapes():
    model = AtariR2d1Model(image_shape=(4, 84, 84), output_size=6, fc_size=32, lstm_size=16, head_size=16, dueling=True)
    q, state = model(torch.zeros(3, 2, 4, 84, 84, dtype=torch.uint8), torch.zeros(3, 2, 6), torch.zeros(3, 2), None)
    assert q.shape == (3, 2, 6) and state.h.shape == (1, 2, 16)
    q, state = model(
        torch.zeros(4, 84, 84, dtype=torch.uint8), torch.zeros(6), torch.zeros(()), state[:, :1] if False else None
    )
    assert q.shape == (6,) and state.h.shape == (1, 1, 16)
    agent = AtariR2d1Agent(model_kwargs=dict(fc_size=32, lstm_size=16, head_size=16))
    agent.initialize(EnvSpaces(observation=IntBox(0, 256, shape=(4, 104, 80), dtype=np.uint8), action=IntBox(0, 6)))
    assert isinstance(agent.model, AtariR2d1Model)


def test_r2d1_and_dqn_refuse_each_others_agents():
    sampler = SerialSampler(masked_cartpole, {}, batch_T=10, batch_B=2, max_decorrelation_steps=0)
    agent = DqnAgent()
    examples = sampler.initialize(agent, seed=0)
    try:
        with pytest.raises(TypeError, match="recurrent agents"):
            R2D1().initialize(agent, 10, sampler.batch_spec, examples=examples)
        with pytest.raises(TypeError, match="R2D1"):
            DQN().initialize(R2d1Agent(), 10, sampler.batch_spec, examples=examples)
    finally:
        sampler.shutdown()


@pytest.mark.parametrize("prioritized", [True, False])
@pytest.mark.parametrize("CollectorCls", [None, WaitResetCollector])
def test_updates_on_real_batches(prioritized, CollectorCls):
    torch.manual_seed(0)
    kwargs = {} if CollectorCls is None else dict(CollectorCls=CollectorCls)
    sampler = SerialSampler(masked_cartpole, {}, batch_T=5, batch_B=4, max_decorrelation_steps=0, **kwargs)
    agent = R2d1Agent(model_kwargs=dict(hidden_sizes=(16,), lstm_size=8, head_size=16))
    examples = sampler.initialize(agent, seed=1)
    algo = R2D1(
        batch_T=6, batch_B=8, warmup_T=5, store_rnn_state_interval=5, n_step_return=2, min_steps_learn=100,
        replay_size=2000, prioritized_replay=prioritized, target_update_interval=2,
    )  # fmt: skip
    algo.initialize(agent, 100, sampler.batch_spec, sampler.mid_batch_reset, examples)
    assert isinstance(algo.replay_buffer, SequenceReplay)
    assert isinstance(algo.replay_buffer.sampling, PrioritizedSampling) == prioritized
    assert algo.replay_buffer.batch_T == 11 and algo.replay_buffer.input_priorities == prioritized
    assert algo.replay_buffer.rnn_states is not None and algo.replay_buffer.storage.mid_batch_reset == (
        CollectorCls is None
    )
    try:
        losses = []
        for itr in range(12):
            agent.sample_mode(itr)
            samples, _ = sampler.obtain_samples(itr)
            agent.train_mode(itr)
            info = algo.optimize_agent(itr, samples)
            losses += info.loss
        assert losses and all(np.isfinite(losses))
        if prioritized:
            assert len(info.priority) == 8 * algo.updates_per_optimize
            tree = algo.replay_buffer.sampling.tree
            assert tree.total > 0
    finally:
        sampler.shutdown()


def test_input_priorities_from_recorded_q_values():
    algo = R2D1(discount=0.5, n_step_return=1, value_scale_eps=1e-3, pri_eta=0.5, delta_clip=None)
    algo.mid_batch_reset = True
    Agent = namedarraytuple("Agent", ["action", "agent_info"])
    Env = namedarraytuple("Env", ["reward", "done"])
    Info = namedarraytuple("Info", ["q"])
    Samples = namedarraytuple("Samples", ["agent", "env"])
    q = torch.tensor([[[1.0, 2.0]], [[0.0, 4.0]], [[3.0, 0.0]]])  # [T=3, B=1, A=2]
    samples = Samples(
        Agent(torch.tensor([[0], [1], [0]]), Info(q)),
        Env(torch.tensor([[1.0], [2.0], [0.0]]), torch.tensor([[False], [True], [False]])),
    )
    p = algo.compute_input_priorities(samples)
    h = lambda x: value_rescale(torch.tensor(x), 1e-3).item()  # noqa: E731
    h_inv = lambda z: inv_value_rescale(torch.tensor(z), 1e-3).item()  # noqa: E731
    d0 = abs(1.0 - h(1.0 + 0.5 * h_inv(4.0)))  # step 0: Q(s0, 0) = 1, bootstrap max Q(s1) = 4
    d1 = abs(4.0 - h(2.0))  # step 1 ends the episode
    assert p.shape == (1,)
    assert p.item() == pytest.approx(0.5 * max(d0, d1) + 0.5 * (d0 + d1) / 2, rel=1e-5)


def test_without_stored_states_sequences_start_from_zeros():
    torch.manual_seed(0)
    sampler = SerialSampler(masked_cartpole, {}, batch_T=5, batch_B=2, max_decorrelation_steps=0)
    agent = R2d1Agent(model_kwargs=dict(hidden_sizes=(8,), lstm_size=4, head_size=8))
    examples = sampler.initialize(agent, seed=0)
    algo = R2D1(batch_T=4, batch_B=4, warmup_T=2, store_rnn_state_interval=0, n_step_return=1, min_steps_learn=20,
                replay_size=500, prioritized_replay=False)  # fmt: skip
    algo.initialize(agent, 10, sampler.batch_spec, sampler.mid_batch_reset, examples)
    try:
        assert algo.replay_buffer.rnn_states is None
        for itr in range(4):
            agent.sample_mode(itr)
            samples, _ = sampler.obtain_samples(itr)
            agent.train_mode(itr)
            info = algo.optimize_agent(itr, samples)
        assert info.loss and algo.replay_buffer.sample_batch(3).init_rnn_state is None
    finally:
        sampler.shutdown()


def test_an_agent_that_records_no_state_is_refused_with_the_fix():
    class NoStateAgent(R2d1Agent):
        def step(self, observation, prev_action, prev_reward):
            step = super().step(observation, prev_action, prev_reward)
            return step._replace(agent_info=Q(q=step.agent_info.q))

    Q = namedarraytuple("Q", ["q"])
    sampler = SerialSampler(masked_cartpole, {}, batch_T=5, batch_B=2, max_decorrelation_steps=0)
    agent = NoStateAgent(model_kwargs=dict(hidden_sizes=(8,), lstm_size=4, head_size=8))
    examples = sampler.initialize(agent, seed=0)
    try:
        with pytest.raises(ValueError, match="store_rnn_state_interval=0"):
            R2D1(replay_size=500).initialize(agent, 10, sampler.batch_spec, examples=examples)
    finally:
        sampler.shutdown()
