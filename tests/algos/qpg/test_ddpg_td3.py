"""DDPG and TD3: losses on hand-built batches with linear models, time-limit discounts, the delayed
policy and target updates, and one real training step on Pendulum."""

import pytest
import torch
from qpg_toy_models import SPACES, LinearMu, LinearQ, set_weight, two_transitions

from rlrun.agents.qpg.ddpg_agent import DdpgAgent
from rlrun.agents.qpg.sac_agent import SacAgent
from rlrun.agents.qpg.td3_agent import Td3Agent
from rlrun.algos.qpg.ddpg import DDPG
from rlrun.algos.qpg.td3 import TD3
from rlrun.envs.gym import make
from rlrun.replays.non_sequence.time_limit import AsyncTlUniformReplayBuffer
from rlrun.replays.non_sequence.uniform import AsyncUniformReplayBuffer, UniformReplayBuffer
from rlrun.replays.sampling import UniformSampling
from rlrun.replays.transitions import TransitionReplay
from rlrun.samplers.serial.sampler import SerialSampler


def ddpg(**kwargs):
    agent = DdpgAgent(ModelCls=LinearMu, QModelCls=LinearQ)
    agent.initialize(SPACES)
    algo = DDPG(discount=0.5, **kwargs)
    algo.agent = agent
    return algo


def td3(q2_weight=2.0, **kwargs):
    agent = Td3Agent(ModelCls=LinearMu, QModelCls=LinearQ)
    agent.initialize(SPACES)
    set_weight(agent.q2_model, q2_weight)
    set_weight(agent.target_q2_model, q2_weight)
    agent.set_target_noise(1e-12, None)  # smoothing is tested in tests/agents/qpg; here it must not blur
    algo = TD3(discount=0.5, **kwargs)
    algo.agent = agent
    return algo


def test_ddpg_q_loss_matches_hand_computation():
    # Sample 0: Q(s, a) = 1.2; mu'(s_n) = .3, Q'(s_n, .3) = 2.3, y = 1 + .5 * 2.3 = 2.15 -> .5 * .95^2.
    # Sample 1: Q = .5, terminal: y = -1 -> .5 * 1.5^2.
    loss = ddpg().q_loss(two_transitions())
    assert loss.item() == pytest.approx((0.5 * 0.95**2 + 0.5 * 1.5**2) / 2)


def test_ddpg_q_target_is_clipped_at_q_target_clip():
    loss = ddpg(q_target_clip=2.0).q_loss(two_transitions())  # y0 = 2.15 -> 2
    assert loss.item() == pytest.approx((0.5 * 0.8**2 + 0.5 * 1.5**2) / 2)


def test_ddpg_mu_loss_is_minus_q_at_the_policy_action_and_moves_only_through_mu():
    algo = ddpg()
    # Q(s, mu(s)) = s0 + s1: 1.5 and 0.
    loss = algo.mu_loss(two_transitions())
    assert loss.item() == pytest.approx(-0.75)
    loss.backward()
    assert algo.agent.model.m.grad.item() == pytest.approx(-0.25)  # d/dm of -mean(s0 + m * s1)


def test_time_limit_windows_bootstrap_with_discount_to_their_own_length():
    # n = 2, but sample 0's window was cut by a time limit after 1 reward: discount .5 ** 1, not ** 2.
    batch = two_transitions(
        timeout=torch.tensor([False, False]),
        timeout_n=torch.tensor([True, False]),
        steps_n=torch.tensor([1, 2]),
    )
    loss = ddpg(n_step_return=2).q_loss(batch)
    assert loss.item() == pytest.approx((0.5 * 0.95**2 + 0.5 * 1.5**2) / 2)
    plain = ddpg(n_step_return=2).q_loss(two_transitions())  # y0 = 1 + .25 * 2.3 = 1.575
    assert plain.item() == pytest.approx((0.5 * 0.375**2 + 0.5 * 1.5**2) / 2)


def test_td3_q_loss_uses_the_smaller_target_critic_for_both():
    # Q1 = s0 + a, Q2 = 2 (s0 + a). Sample 0: min(Q1', Q2')(s_n, .3) = 2.3, y = 2.15; Q1 = 1.2, Q2 = 2.4.
    # Sample 1: y = -1; Q1 = .5, Q2 = 1.
    loss = td3().q_loss(two_transitions())
    expected0 = 0.5 * 0.95**2 + 0.5 * 0.25**2
    expected1 = 0.5 * 1.5**2 + 0.5 * 2.0**2
    assert loss.item() == pytest.approx((expected0 + expected1) / 2, rel=1e-5)
    # With Q2 below Q1 the target takes Q2': y0 = 1 + .5 * .5 * 2.3 = 1.575.
    loss = td3(q2_weight=0.5).q_loss(two_transitions())
    expected0 = 0.5 * (1.575 - 1.2) ** 2 + 0.5 * (1.575 - 0.6) ** 2
    expected1 = 0.5 * 1.5**2 + 0.5 * 1.25**2
    assert loss.item() == pytest.approx((expected0 + expected1) / 2, rel=1e-5)


class FixedReplay:
    """Returns the same batch every time."""

    def __init__(self, batch):
        self.batch = batch

    def append_samples(self, samples):
        pass

    def sample_batch(self, batch_B):
        return self.batch


def test_td3_delays_policy_and_target_updates_to_every_second_critic_step():
    algo = td3()
    algo.q_optimizer = torch.optim.SGD(algo.agent.q_parameters(), lr=0.01)
    algo.mu_optimizer = torch.optim.SGD(algo.agent.mu_parameters(), lr=0.01)
    algo.replay_buffer = FixedReplay(two_transitions())
    algo.min_itr_learn, algo.updates_per_optimize = 0, 5
    target_updates = []
    update_target = algo.agent.update_target
    algo.agent.update_target = lambda tau: (target_updates.append(algo.update_counter), update_target(tau))
    mu_before = algo.agent.model.m.item()

    opt_info = algo.optimize_agent(0)

    assert len(opt_info.qLoss) == 5 and len(opt_info.muLoss) == 2  # policy at critic steps 2 and 4
    assert target_updates == [2, 4]
    assert algo.agent.model.m.item() != mu_before
    assert algo.agent.target_model.m.item() != 1.0  # moved by tau toward the trained policy


def test_td3_defaults_and_learning_rate_sets_the_policy_rate():
    algo = TD3()
    assert (algo.batch_size, algo.replay_ratio, algo.target_update_tau) == (100, 100, 0.005)
    assert (algo.target_update_interval, algo.policy_update_interval, algo.learning_rate) == (2, 2, 1e-3)
    assert TD3(learning_rate=3e-4).learning_rate == 3e-4
    assert TD3(mu_learning_rate=5e-4).learning_rate == 5e-4


@pytest.mark.parametrize("Algo, Agent", [(DDPG, DdpgAgent), (TD3, Td3Agent)])
def test_one_real_iteration_on_pendulum_trains_and_uses_a_time_limit_replay(Algo, Agent):
    torch.manual_seed(0)
    sampler = SerialSampler(make, dict(id="Pendulum-v1"), batch_T=8, batch_B=2, max_decorrelation_steps=0)
    agent = Agent(model_kwargs=dict(hidden_sizes=[8]), q_model_kwargs=dict(hidden_sizes=[8]))
    algo = Algo(batch_size=4, min_steps_learn=16, replay_size=1000, replay_ratio=4)
    try:
        examples = sampler.initialize(agent, seed=0)
        algo.initialize(agent, n_itr=3, batch_spec=sampler.batch_spec, mid_batch_reset=True, examples=examples)
        replay = algo.replay_buffer
        assert isinstance(replay, TransitionReplay) and isinstance(replay.sampling, UniformSampling)
        assert replay.storage.has_timeout and algo.updates_per_optimize == 16
        assert algo.min_itr_learn == 1 and agent.min_itr_learn == 1
        infos = []
        for itr in range(3):
            agent.sample_mode(itr)
            samples, _ = sampler.obtain_samples(itr)
            agent.train_mode(itr)
            infos.append(algo.optimize_agent(itr, samples))
    finally:
        sampler.shutdown()
    assert infos[0].qLoss == [] and len(infos[2].qLoss) == 16
    assert all(map(torch.isfinite, map(torch.tensor, infos[2].qLoss + infos[2].muLoss)))
    assert set(algo.optim_state_dict()) == {"q", "mu"}


def test_bootstrap_timelimit_false_stores_no_timeout():
    sampler = SerialSampler(make, dict(id="Pendulum-v1"), batch_T=4, batch_B=1, max_decorrelation_steps=0)
    agent = DdpgAgent(model_kwargs=dict(hidden_sizes=[8]), q_model_kwargs=dict(hidden_sizes=[8]))
    algo = DDPG(bootstrap_timelimit=False, replay_size=100)
    try:
        examples = sampler.initialize(agent, seed=0)
        algo.initialize(agent, n_itr=1, batch_spec=sampler.batch_spec, mid_batch_reset=True, examples=examples)
    finally:
        sampler.shutdown()
    assert isinstance(algo.replay_buffer, TransitionReplay) and "timeout" not in algo.replay_buffer.samples._fields


def test_an_agent_of_another_algorithm_is_refused_with_the_fix():
    sampler = SerialSampler(make, dict(id="Pendulum-v1"), batch_T=4, batch_B=1, max_decorrelation_steps=0)
    agent = SacAgent(model_kwargs=dict(hidden_sizes=[8]), q_model_kwargs=dict(hidden_sizes=[8]))
    try:
        examples = sampler.initialize(agent, seed=0)
        with pytest.raises(TypeError, match=r"SacAgent lacks .*q_at_mu.*Use Td3Agent"):
            TD3().initialize(agent, 1, sampler.batch_spec, True, examples)
    finally:
        sampler.shutdown()


@pytest.mark.parametrize("bootstrap_timelimit", [True, False])
def test_initialize_replay_buffer_async_builds_the_shared_memory_variant(bootstrap_timelimit):
    # rlpyt's initialize_replay_buffer(examples, batch_spec, async_=False): async_ picks the replay that
    # an asynchronous run's processes share.
    sampler = SerialSampler(make, dict(id="Pendulum-v1"), batch_T=4, batch_B=1, max_decorrelation_steps=0)
    agent = DdpgAgent(model_kwargs=dict(hidden_sizes=[8]), q_model_kwargs=dict(hidden_sizes=[8]))
    algo = DDPG(bootstrap_timelimit=bootstrap_timelimit, replay_size=100)
    try:
        examples = sampler.initialize(agent, seed=0)
        algo.initialize(agent, n_itr=1, batch_spec=sampler.batch_spec, mid_batch_reset=True, examples=examples)
        assert not algo.replay_buffer.async_
        algo.initialize_replay_buffer(examples, sampler.batch_spec, async_=True)
        assert isinstance(algo.replay_buffer, TransitionReplay) and algo.replay_buffer.async_
        assert ("timeout" in algo.examples_to_buffer(examples)._fields) == bootstrap_timelimit
        algo.ReplayBufferCls = AsyncTlUniformReplayBuffer if bootstrap_timelimit else AsyncUniformReplayBuffer
        algo.initialize_replay_buffer(examples, sampler.batch_spec, async_=True)
        assert type(algo.replay_buffer) is algo.ReplayBufferCls
        algo.ReplayBufferCls = UniformReplayBuffer
        with pytest.raises(TypeError, match="not an asynchronous replay"):
            algo.initialize_replay_buffer(examples, sampler.batch_spec, True)
    finally:
        sampler.shutdown()
