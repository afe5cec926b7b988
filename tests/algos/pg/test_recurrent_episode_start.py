"""The recurrent policy-gradient agents' episode-start treatment (R2D1's): at an episode's first step the
model sees zeros as the previous action and reward and its state starts from zeros, in sampling, in
evaluation, and in the training forward of A2C and PPO, which replays a batch exactly as it was sampled.
"""

from __future__ import annotations

import pytest
import torch

from rlrun.agents.base import AgentInputs
from rlrun.agents.pg.categorical import RecurrentCategoricalPgAgent
from rlrun.agents.pg.mujoco import MujocoLstmAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.algos.pg.ppo import PPO
from rlrun.envs.gym import make
from rlrun.models.pg.mlp_lstm_model import CategoricalPgLstmModel
from rlrun.samplers.collections import BatchSpec
from rlrun.samplers.collectors import WaitResetCollector
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.tensor import valid_mean

pytestmark = pytest.mark.timeout(120)

T, B, H = 16, 4, 16


class RecordingLstmModel(CategoricalPgLstmModel):
    """The default categorical LSTM model, keeping the previous action (one-hot) and reward of each call."""

    def __init__(self, **kwargs) -> None:
        super().__init__(observation_shape=(4,), action_size=2, lstm_size=H, **kwargs)
        self.calls: list[tuple[torch.Tensor, torch.Tensor]] = []

    def forward(self, observation, prev_action, prev_reward, init_rnn_state=None):
        self.calls.append((prev_action.detach().clone(), prev_reward.detach().clone()))
        return super().forward(observation, prev_action, prev_reward, init_rnn_state)


def sampler_run(algo, env_kwargs, eval_n_envs=0):
    """A serial wait-reset sampler over CartPole for a RecurrentCategoricalPgAgent with RecordingLstmModel."""
    torch.manual_seed(0)
    eval_kwargs = dict(eval_n_envs=eval_n_envs, eval_max_steps=2 * 600, eval_max_trajectories=4) if eval_n_envs else {}
    sampler = SerialSampler(
        make,
        env_kwargs,
        batch_T=T,
        batch_B=B,
        CollectorCls=WaitResetCollector,
        max_decorrelation_steps=0,
        **eval_kwargs,
    )
    agent = RecurrentCategoricalPgAgent(ModelCls=RecordingLstmModel)
    examples = sampler.initialize(agent, seed=0, bootstrap_value=True)
    algo.initialize(agent, 10, sampler.batch_spec, sampler.mid_batch_reset, examples)
    return sampler, agent


def assert_zero_exactly_at(starts, prev_action, prev_reward):
    """``prev_action`` (one-hot) and ``prev_reward`` are zeros at ``starts`` and an action elsewhere."""
    assert starts.any() and (~starts).any()
    assert not prev_action[starts].any() and not prev_reward[starts].any()
    assert torch.equal(prev_action[~starts].sum(-1), torch.ones(int((~starts).sum())))


def test_the_model_sees_zeros_at_episode_starts_in_sampling_and_in_the_training_forward():
    algo = A2C()
    sampler, agent = sampler_run(algo, dict(id="CartPole-v1"))
    model, reset_at_batch_start = agent.model, 0
    try:
        for itr in range(5):
            agent.sample_mode(itr)
            model.calls.clear()
            samples, _ = sampler.obtain_samples(itr)
            starts = samples.agent.agent_info.episode_start
            assert not starts[1:].any()  # a wait-reset sampler starts episodes at a batch's start only
            reset_at_batch_start += int(starts[0].sum()) if itr else 0
            sampled = model.calls[:T]  # then the bootstrap value's call
            prev_action = torch.stack([a for a, _r in sampled])
            prev_reward = torch.stack([r for _a, r in sampled])
            if itr:  # the first batch starts every env: all zeros
                assert_zero_exactly_at(starts[0], prev_action[0], prev_reward[0])
            # The stored inputs hold the previous episode's action and reward; the model saw zeros.
            assert torch.equal(prev_reward[1:], samples.env.prev_reward[1:])

            agent.train_mode(itr)
            model.calls.clear()
            with torch.no_grad():
                algo.recurrent_forward(
                    algo.agent_inputs(samples), algo.initial_rnn_state(samples), algo.episode_start(samples)
                )
            ((trained_action, trained_reward),) = model.calls  # one pass: no start after t=0
            torch.testing.assert_close(trained_action, prev_action, rtol=0, atol=0)
            torch.testing.assert_close(trained_reward, prev_reward, rtol=0, atol=0)
            algo.optimize_agent(itr, samples)
        assert reset_at_batch_start  # episodes ended, and the next started at a batch's first step
    finally:
        sampler.shutdown()


def test_a_time_limit_cut_starts_the_next_episode_with_zeros_like_a_termination():
    algo = A2C()
    # 10-step episodes: every env is cut by the time limit inside each 16-step batch (a random policy
    # rarely drops the pole that soon), and starts anew at the next batch.
    sampler, agent = sampler_run(algo, dict(id="CartPole-v1", max_episode_steps=10))
    try:
        first, _ = sampler.obtain_samples(0)
        assert first.env.env_info.timeout.any()
        ended = first.env.done[-1].clone()
        agent.model.calls.clear()
        second, _ = sampler.obtain_samples(1)
        assert ended.all() and torch.equal(second.agent.agent_info.episode_start[0], ended)
        prev_action, prev_reward = agent.model.calls[0]
        assert not prev_action.any() and not prev_reward.any()
        assert not second.agent.agent_info.prev_rnn_state.h[0].any()  # the state starts from zeros too
    finally:
        sampler.shutdown()


def test_evaluation_episodes_start_with_zeros_as_sampling_ones_do():
    algo = A2C()
    sampler, agent = sampler_run(algo, dict(id="CartPole-v1"), eval_n_envs=2)
    try:
        agent.eval_mode(0)
        agent.model.calls.clear()
        trajs = sampler.evaluate_agent(0)
        assert len(trajs) == 4
        prev_action = torch.stack([a for a, _r in agent.model.calls])  # [steps, 2 envs, 2]
        prev_reward = torch.stack([r for _a, r in agent.model.calls])
        # The first step of each env (before: the null action, one-hot [1, 0]) and the first after each done.
        assert not prev_action[0].any() and not prev_reward[0].any()
        zero_rows = ~prev_action.any(-1)
        assert torch.equal(zero_rows, prev_reward == 0)  # the action and the reward are hidden together
        assert int(zero_rows.sum()) >= len(trajs)  # 2 first steps, and at least 2 starts after a done
    finally:
        sampler.shutdown()


def agent_for(kind, cartpole, pendulum):
    torch.manual_seed(0)
    if kind == "categorical":
        agent = RecurrentCategoricalPgAgent(model_kwargs=dict(lstm_size=H))
        agent.initialize(cartpole.spaces)
        return agent, torch.randn(T, B, 4), torch.randint(0, 2, (T, B))
    agent = MujocoLstmAgent(model_kwargs=dict(hidden_sizes=[16], lstm_size=H))
    agent.initialize(pendulum.spaces)
    return agent, torch.randn(T, B, 3), torch.randn(T, B, 1)


@pytest.fixture(scope="module")
def cartpole():
    env = make("CartPole-v1")
    yield env
    env.close()


@pytest.fixture(scope="module")
def pendulum():
    env = make("Pendulum-v1")
    yield env
    env.close()


@pytest.mark.parametrize("kind", ["categorical", "gaussian"])
def test_the_training_forward_reproduces_sampling_across_episode_starts_inside_the_batch(kind, cartpole, pendulum):
    """Episodes start at t=0 (all), and at t = 3, 5, 9 in some envs: a mid-batch reset, which the
    training forward (:func:`run_with_resets`) must meet with the same zero state and zero inputs."""
    agent, observation, prev_action = agent_for(kind, cartpole, pendulum)
    prev_reward = torch.randn(T, B) + 1  # never zero by chance
    resets = {3: [1], 5: [0, 2], 9: [3], 12: [1]}
    agent.sample_mode(0)
    infos = []
    for t in range(T):
        for b in resets.get(t, []):
            agent.reset_one(b)
        infos.append(agent.step(observation[t], prev_action[t], prev_reward[t]).agent_info)
    starts = torch.stack([i.episode_start for i in infos])
    expected = torch.zeros(T, B, dtype=torch.bool)
    expected[0] = True
    for t, envs in resets.items():
        expected[t, envs] = True
    assert torch.equal(starts, expected)

    algo = PPO(minibatches=1)
    algo.initialize(agent, 1, BatchSpec(T, B))
    agent.train_mode(0)
    inputs = AgentInputs(observation, prev_action, prev_reward)
    init_rnn_state = infos[0].prev_rnn_state  # batch-first, as stored
    fields = infos[0].dist_info._fields
    sampled_dist = type(infos[0].dist_info)(*(torch.stack([getattr(i.dist_info, f) for i in infos]) for f in fields))
    sampled_value = torch.stack([i.value for i in infos])
    action = agent.distribution.sample(sampled_dist)
    sampled_logp = agent.distribution.log_likelihood(action, sampled_dist)

    with torch.no_grad():
        dist_info, value = algo.recurrent_forward(inputs, init_rnn_state, starts)
        logp = agent.distribution.log_likelihood(action, dist_info)
        torch.testing.assert_close(logp, sampled_logp, rtol=0, atol=1e-5)
        torch.testing.assert_close(value, sampled_value, rtol=0, atol=1e-5)
        # Without the starts (as before the treatment) the forward sees other inputs and states there.
        stale_dist, stale_value = algo.recurrent_forward(inputs, init_rnn_state, None)
        stale_logp = agent.distribution.log_likelihood(action, stale_dist)
    assert (stale_logp - sampled_logp).abs().max() > 1e-4 or (stale_value - sampled_value).abs().max() > 1e-4


class RlpytLossPPO(PPO):
    """PPO with rlpyt's ``loss`` parameters (no ``episode_start``), keeping what its forward was given."""

    def initialize(self, *args, **kwargs):
        super().initialize(*args, **kwargs)
        self.forwarded: list[tuple[torch.Tensor, torch.Tensor]] = []

    def loss(self, agent_inputs, action, return_, advantage, valid, old_dist_info, init_rnn_state=None):
        return super().loss(agent_inputs, action, return_, advantage, valid, old_dist_info, init_rnn_state)

    def recurrent_forward(self, agent_inputs, init_rnn_state, episode_start):
        self.forwarded.append((agent_inputs.observation.clone(), episode_start.clone()))
        return super().recurrent_forward(agent_inputs, init_rnn_state, episode_start)


def test_a2c_and_ppo_losses_run_their_forward_as_sampled():
    """At the sampling policy PPO's ratio is 1 and A2C's policy loss is that of the stored probabilities,
    batch after batch (every batch after the first starts some envs at t=0). PPO hands each minibatch's
    episode starts to its forward, also under a loss() with rlpyt's parameters."""
    a2c, ppo = A2C(), RlpytLossPPO(minibatches=2, epochs=1)
    for algo in (a2c, ppo):
        sampler, agent = sampler_run(algo, dict(id="CartPole-v1"))
        try:
            for itr in range(3):
                agent.sample_mode(itr)
                samples, _ = sampler.obtain_samples(itr)
                agent.train_mode(itr)
                if itr:
                    assert samples.agent.agent_info.episode_start[0].any()
                if algo is a2c:
                    _return, advantage, valid = a2c.process_returns(samples)
                    with torch.no_grad():
                        terms = a2c.loss(samples)
                    stored_logp = agent.distribution.log_likelihood(
                        samples.agent.action, samples.agent.agent_info.dist_info
                    )
                    expected = -valid_mean(stored_logp * advantage, valid)
                    torch.testing.assert_close(terms.pi_loss, expected, rtol=0, atol=1e-6)
                    a2c.optimize_agent(itr, samples)
                else:
                    ppo.forwarded.clear()
                    opt_info = ppo.optimize_agent(itr, samples)
                    assert abs(opt_info.approxKl[0]) < 1e-6 and opt_info.clipFraction[0] == 0
                    assert len(ppo.forwarded) == 2
                    for observation, starts in ppo.forwarded:  # whole sequences of 2 envs each
                        (b,) = [b for b in range(B) if torch.equal(samples.env.observation[:, b], observation[:, 0])]
                        assert torch.equal(starts[:, 0], samples.agent.agent_info.episode_start[:, b])
        finally:
            sampler.shutdown()
