"""DQN: the loss on hand-built batches, the update schedule, and training on real CartPole batches."""

import pytest
import torch

from rlrun.agents.base import AgentInputs
from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.algos.dqn.dqn import DQN, SamplesToBufferTl
from rlrun.envs.gym import make
from rlrun.replays.non_sequence.n_step import SamplesFromReplay, SamplesFromReplayTl
from rlrun.replays.non_sequence.prioritized import SamplesFromReplayPri, SamplesFromReplayTlPri
from rlrun.samplers.collections import BatchSpec
from rlrun.samplers.serial.sampler import SerialSampler


class ObsIsQ(torch.nn.Module):
    """Q(s) = s[:2] * w: Q-values can be read off the observation."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(2))

    def forward(self, observation, prev_action, prev_reward):
        return observation[..., :2] * self.w


def obs(*rows):
    return torch.tensor([list(r) + [0.0, 0.0] for r in rows])


def loss_of(samples, n_step_return=1, **kwargs):
    agent = DqnAgent(ModelCls=ObsIsQ)
    agent.initialize(make(id="CartPole-v1").spaces)
    with torch.no_grad():
        agent.target_model.w.copy_(torch.tensor([1.0, 3.0]))  # target Q(s') = (s'_0, 3 s'_1)
    algo = DQN(discount=0.5, n_step_return=n_step_return, **kwargs)
    algo.agent = agent
    return algo.loss(samples)


def two_samples(cls=SamplesFromReplay, **extra):
    # Sample 0: Q(s, a=0) = 1, return 1, s' = (5, 2): online Q(s') = (5, 2), target Q(s') = (5, 6).
    # Sample 1: Q(s, a=0) = 0.5, return 1, terminal (done_n): y = 1.
    zeros = torch.zeros(2)
    return cls(
        agent_inputs=AgentInputs(obs((1, 3), (0.5, 0)), torch.zeros(2, dtype=torch.long), zeros),
        action=torch.tensor([0, 0]),
        return_=torch.tensor([1.0, 1.0]),
        done=torch.tensor([False, False]),
        done_n=torch.tensor([False, True]),
        target_inputs=AgentInputs(obs((5, 2), (7, 7)), torch.zeros(2, dtype=torch.long), zeros),
        **extra,
    )


def test_dqn_huber_loss_matches_hand_computation():
    # y0 = 1 + .5 * max(5, 6) = 4, delta 3 -> Huber 3 - .5 = 2.5; delta1 = .5 -> .5 * .25 = .125.
    loss, td_abs = loss_of(two_samples())
    assert loss.item() == pytest.approx((2.5 + 0.125) / 2)
    torch.testing.assert_close(td_abs, torch.tensor([1.0, 0.5]))  # clipped at delta_clip


def test_dqn_squared_loss_without_delta_clip():
    loss, td_abs = loss_of(two_samples(), delta_clip=None)
    assert loss.item() == pytest.approx((0.5 * 9 + 0.125) / 2)
    torch.testing.assert_close(td_abs, torch.tensor([3.0, 0.5]))


def test_double_dqn_evaluates_the_online_argmax_with_the_target_network():
    # Online argmax at s' is action 0 (5 > 2); target Q(s', 0) = 5: y0 = 3.5, delta 2.5 -> Huber 2.
    loss, _ = loss_of(two_samples(), double_dqn=True)
    assert loss.item() == pytest.approx((2.0 + 0.125) / 2)


def test_n_step_target_is_discounted_by_discount_to_the_n():
    # n = 2: y0 = 1 + .25 * 6 = 2.5, delta 1.5 -> Huber 1.
    loss, _ = loss_of(two_samples(), n_step_return=2)
    assert loss.item() == pytest.approx((1.0 + 0.125) / 2)


def test_time_limit_windows_use_their_own_step_count():
    # n_step_return = 3, but sample 0's window was cut after 1 step: y0 = 1 + .5 * 6 = 4 as with n = 1.
    samples = two_samples(
        SamplesFromReplayTl,
        timeout=torch.tensor([True, False]),
        timeout_n=torch.tensor([True, False]),
        steps_n=torch.tensor([1, 3]),
    )
    loss, _ = loss_of(samples, n_step_return=3)
    assert loss.item() == pytest.approx((2.5 + 0.125) / 2)


@pytest.fixture
def dqn_run():
    samplers = []

    def run(algo, T=4, B=2, seed=0, env_kwargs=None):
        torch.manual_seed(seed)
        env_kwargs = dict(id="CartPole-v1") if env_kwargs is None else env_kwargs
        sampler = SerialSampler(make, env_kwargs, batch_T=T, batch_B=B, max_decorrelation_steps=0)
        samplers.append(sampler)
        agent = DqnAgent()
        examples = sampler.initialize(agent, seed=seed, bootstrap_value=algo.bootstrap_value)
        algo.initialize(agent, 100, sampler.batch_spec, sampler.mid_batch_reset, examples)

        def step(itr):
            agent.sample_mode(itr)
            samples, _ = sampler.obtain_samples(itr)
            agent.train_mode(itr)
            return algo.optimize_agent(itr, samples)

        return agent, step

    yield run
    for sampler in samplers:
        sampler.shutdown()


def test_initialize_sets_updates_epsilon_schedule_and_timeout_aware_replay(dqn_run):
    # Sampler batch 4 x 2 = 8: updates = 8 * 8 / 32 = 2; learning from itr 16 // 8 = 2; eps to itr 80 // 8.
    algo = DQN(min_steps_learn=16, eps_steps=80, replay_size=1000)
    agent, _ = dqn_run(algo)
    assert algo.updates_per_optimize == 2
    assert (algo.min_itr_learn, agent.eps_itr_min, agent.eps_itr_max) == (2, 2, 10)
    assert isinstance(algo.replay_buffer.samples, SamplesToBufferTl)  # CartPole reports timeouts


def test_no_updates_before_min_steps_learn_then_updates_per_optimize(dqn_run):
    algo = DQN(min_steps_learn=16, replay_size=1000)
    _, step = dqn_run(algo)
    assert [len(step(itr).loss) for itr in range(4)] == [0, 0, 2, 2]
    assert algo.update_counter == 4 and algo.replay_buffer.t == 32 // 2


def test_target_network_is_copied_every_target_update_interval_updates(dqn_run):
    # Batch 8 x 2, replay ratio 4: two updates per itr from itr 0 on; copies after updates 3 and 6, i.e. only the end of itr 2 matches.
    algo = DQN(min_steps_learn=0, replay_size=1000, replay_ratio=4, target_update_interval=3, learning_rate=1e-2)
    agent, step = dqn_run(algo, T=8)
    same = []
    for itr in range(4):
        step(itr)
        same.append(all(torch.equal(p, q) for p, q in zip(agent.model.parameters(), agent.target_model.parameters())))
    assert same == [False, False, True, False]


def test_soft_target_update_moves_target_by_tau(dqn_run):
    algo = DQN(min_steps_learn=0, replay_size=1000, replay_ratio=2, target_update_tau=0.25, target_update_interval=1)
    agent, step = dqn_run(algo, T=8)  # 16 steps * 2 / 32: one update per itr
    old_target = [p.detach().clone() for p in agent.target_model.parameters()]
    step(0)
    for old, p, q in zip(old_target, agent.model.parameters(), agent.target_model.parameters()):
        torch.testing.assert_close(q, 0.75 * old + 0.25 * p.detach())


def test_time_limit_cuts_on_a_real_env_are_not_terminal_in_the_replay(dqn_run):
    # CartPole cut after 3 steps cannot fail first, so every done is a time limit: none may end a return.
    algo = DQN(min_steps_learn=0, replay_size=1000, n_step_return=2)
    _, step = dqn_run(algo, T=8, env_kwargs=dict(id="CartPole-v1", max_episode_steps=3))
    for itr in range(3):
        opt_info = step(itr)
    st = algo.replay_buffer.storage
    assert st.samples.done[: st.t].sum() >= 8
    assert not st.samples_done_n.any()
    assert st.samples_timeout_n[: st.t - 1].sum() > st.samples.timeout[: st.t - 1].sum()  # windows ending in a cut
    assert len(opt_info.loss) > 0


def test_importance_weights_scale_each_sample_loss_before_the_mean():
    # Per-sample Huber terms 2.5 and .125 (as above), weighted .5 and 1; |TD| errors are not weighted.
    loss, td_abs = loss_of(two_samples(SamplesFromReplayPri, is_weights=torch.tensor([0.5, 1.0])))
    assert loss.item() == pytest.approx((0.5 * 2.5 + 0.125) / 2)
    torch.testing.assert_close(td_abs, torch.tensor([1.0, 0.5]))
    samples = two_samples(
        SamplesFromReplayTlPri,
        timeout=torch.tensor([True, False]),
        timeout_n=torch.tensor([True, False]),
        steps_n=torch.tensor([1, 3]),
        is_weights=torch.tensor([1.0, 0.2]),
    )
    loss, _ = loss_of(samples, n_step_return=3)
    assert loss.item() == pytest.approx((2.5 + 0.2 * 0.125) / 2)


def test_examples_are_required_and_default_priority_follows_delta_clip():
    agent = DqnAgent()
    agent.initialize(make(id="CartPole-v1").spaces)
    with pytest.raises(ValueError, match="needs examples"):
        DQN().initialize(agent, 10, BatchSpec(4, 2), mid_batch_reset=False, examples=None)
    assert DQN(delta_clip=2.0).default_priority == 2.0
    assert DQN(delta_clip=None).default_priority == 1.0
    assert DQN(default_priority=0.5).default_priority == 0.5
