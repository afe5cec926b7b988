"""DDPG, TD3 and SAC agents: actions in [-1, 1] on rescaled envs, deterministic evaluation, clear errors
for unfit action spaces, rlpyt's state-dict keys, target updates, TD3's target smoothing and the
exploration schedules."""

import math
import multiprocessing as mp

import gymnasium
import pytest
import torch

from rlrun.agents.qpg.ddpg_agent import DdpgAgent
from rlrun.agents.qpg.sac_agent import SacAgent
from rlrun.agents.qpg.td3_agent import Td3Agent
from rlrun.envs.gym import GymEnvWrapper, make

AGENTS = [DdpgAgent, Td3Agent, SacAgent]
SMALL = dict(model_kwargs=dict(hidden_sizes=[16]), q_model_kwargs=dict(hidden_sizes=[16]))


def build(AgentCls, spaces, **kwargs):
    agent = AgentCls(**{**SMALL, **kwargs})
    agent.initialize(spaces)
    return agent


def step_inputs(B=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(B, 3, generator=g), torch.zeros(B, 1), torch.zeros(B)


@pytest.mark.parametrize("AgentCls", AGENTS)
def test_sampled_actions_lie_in_the_unit_box_of_the_rescaled_env(AgentCls, pendulum):
    agent = build(AgentCls, pendulum.spaces)
    assert pendulum.action_space.low == -1 and pendulum.action_space.high == 1  # make() rescaled [-2, 2]
    for itr in (0, 5):  # before and after min_itr_learn
        agent.give_min_itr_learn(3)
        agent.sample_mode(itr)
        step = agent.step(*step_inputs(B=256))
        assert step.action.shape == (256, 1) and step.action.abs().max() <= 1
        assert step.action.std() > 0.05  # exploring


@pytest.mark.parametrize("AgentCls", [DdpgAgent, Td3Agent])
def test_exploration_noise_around_the_policy_has_the_configured_std(AgentCls, pendulum):
    agent = build(AgentCls, pendulum.spaces)
    agent.give_min_itr_learn(0)
    agent.sample_mode(1)  # after pretraining: the agent's action_std (0.1 by default)
    observation = torch.zeros(4096, 3)  # one state: the noise is all the spread
    step = agent.step(observation, torch.zeros(4096, 1), torch.zeros(4096))
    mu = step.agent_info.mu
    torch.testing.assert_close(mu, mu[:1].expand_as(mu))
    inside = (step.action.abs() < 1).squeeze(-1)  # away from the clip at the bounds
    assert float((step.action - mu)[inside].std()) == pytest.approx(agent.action_std, rel=0.1)


@pytest.mark.parametrize("AgentCls", AGENTS)
def test_eval_mode_acts_with_the_policy_mean(AgentCls, pendulum):
    agent = build(AgentCls, pendulum.spaces)
    agent.eval_mode(1)
    inputs = step_inputs()
    first, second = agent.step(*inputs), agent.step(*inputs)
    torch.testing.assert_close(first.action, second.action)
    if AgentCls is SacAgent:
        expected = torch.tanh(first.agent_info.dist_info.mean)
    else:
        expected = first.agent_info.mu
    torch.testing.assert_close(first.action, expected)


@pytest.mark.parametrize("AgentCls", AGENTS)
def test_discrete_action_space_is_refused_with_the_fix(AgentCls, cartpole):
    with pytest.raises(ValueError, match=r"continuous action space.*DqnAgent"):
        AgentCls().initialize(cartpole.spaces)


@pytest.mark.parametrize("AgentCls", AGENTS)
def test_action_bounds_other_than_unit_are_refused_with_the_fix(AgentCls):
    raw = GymEnvWrapper(gymnasium.make("Pendulum-v1"))  # not rescaled: [-2, 2]
    with pytest.raises(ValueError, match=r"acts in \[-1, 1\].*rlrun.envs.gym.make.*RescaleAction"):
        AgentCls().initialize(raw.spaces)


@pytest.mark.parametrize(
    "AgentCls, keys",
    [
        (DdpgAgent, {"model", "q_model", "target_model", "target_q_model"}),
        (Td3Agent, {"model", "q_model", "target_model", "target_q_model", "q2_model", "target_q2_model"}),
        (SacAgent, {"model", "q1_model", "q2_model", "target_q1_model", "target_q2_model"}),
    ],
)
def test_state_dict_has_rlpyt_keys_and_restores_every_network(AgentCls, keys, pendulum):
    torch.manual_seed(0)
    trained = build(AgentCls, pendulum.spaces)
    state = trained.state_dict()
    assert set(state) == keys
    torch.manual_seed(1)
    fresh = build(AgentCls, pendulum.spaces)
    fresh.load_state_dict(state)
    restored = build(AgentCls, pendulum.spaces, initial_model_state_dict=state)
    for agent in (fresh, restored):
        for a, b in zip(agent.model.state_dict().values(), trained.model.state_dict().values()):
            torch.testing.assert_close(a, b)
        for key, module in agent.other_models().items():
            for a, b in zip(module.state_dict().values(), trained.other_models()[key].state_dict().values()):
                torch.testing.assert_close(a, b)
    with pytest.raises(KeyError, match="no model for"):
        fresh.load_state_dict({**state, "v_model": state["model"]})


def test_targets_start_as_copies_and_move_by_tau(pendulum):
    agent = build(Td3Agent, pendulum.spaces)
    pairs = [
        (agent.target_model, agent.model),
        (agent.target_q_model, agent.q_model),
        (agent.target_q2_model, agent.q2_model),
    ]
    for target, source in pairs:
        assert all(torch.equal(t, s) for t, s in zip(target.parameters(), source.parameters()))
        assert not any(p.requires_grad for p in target.parameters())
    old = [[p.clone() for p in target.parameters()] for target, _ in pairs]
    with torch.no_grad():
        for _, source in pairs:
            for p in source.parameters():
                p.add_(1.0)
    agent.update_target(0.25)
    for (target, _), before in zip(pairs, old):
        for p, b in zip(target.parameters(), before):
            torch.testing.assert_close(p, b + 0.25)


class ActionIsQ(torch.nn.Module):
    """Q(s, a) = a: a critic that shows the action it was given."""

    def __init__(self, observation_shape, action_size, **kwargs):
        super().__init__()
        self.unused = torch.nn.Parameter(torch.zeros(1))

    def forward(self, observation, prev_action, prev_reward, action):
        return action[..., 0]


class ConstantMu(torch.nn.Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, observation, prev_action, prev_reward):
        return torch.full((*observation.shape[:-1], 1), self.value)


@pytest.mark.parametrize("mu", [0.0, 0.9])
def test_td3_target_action_adds_clipped_noise_and_stays_in_bounds(mu, pendulum):
    torch.manual_seed(0)
    agent = build(Td3Agent, pendulum.spaces, QModelCls=ActionIsQ, target_noise_std=0.2, target_noise_clip=0.5)
    agent.target_model = ConstantMu(mu)
    target_action, same = agent.target_q_at_mu(*step_inputs(B=20_000))
    torch.testing.assert_close(target_action, same)  # both critics see one action
    noise = target_action - mu
    if mu == 0.0:
        assert noise.abs().max() <= 0.5 and noise.abs().max() > 0.45  # clipped at target_noise_clip
        assert 0.18 < noise.std() < 0.21 and abs(noise.mean()) < 0.01
    else:
        assert target_action.max() == 1.0 and target_action.min() >= 0.4 - 1e-6  # clipped to the action box
    agent.set_target_noise(0.01, noise_clip=None)
    small, _ = agent.target_q_at_mu(*step_inputs(B=1000))
    assert (small - mu).abs().max() < 0.06


def test_td3_explores_with_pretrain_std_until_min_itr_learn(pendulum):
    agent = build(Td3Agent, pendulum.spaces, pretrain_std=0.5, action_std=0.1)
    agent.give_min_itr_learn(10)
    agent.sample_mode(9)
    assert float(agent.distribution.std) == 0.5
    agent.sample_mode(10)
    assert float(agent.distribution.std) == pytest.approx(0.1)


def test_sac_samples_with_pretrain_std_until_min_itr_learn_then_its_own(pendulum):
    agent = build(SacAgent, pendulum.spaces, pretrain_std=0.75)
    agent.give_min_itr_learn(10)
    agent.sample_mode(0)
    assert float(agent.distribution.std) == 0.75
    agent.train_mode(0)
    assert agent.distribution.std is None  # training uses the policy's std
    agent.sample_mode(10)
    assert agent.distribution.std is None


def _warmup_actions(agent, B=4096):
    """Actions for ``B`` copies of one state: the spread is the sampling's alone."""
    return agent.step(torch.zeros(B, 3), torch.zeros(B, 1), torch.zeros(B)).action.squeeze(-1)


def test_sac_uniform_warmup_draws_uniformly_until_min_itr_learn_then_samples_its_policy(pendulum):
    agent = build(SacAgent, pendulum.spaces, uniform_warmup=True)
    agent.give_min_itr_learn(10)
    agent.sample_mode(9)
    action = _warmup_actions(agent)
    assert action.abs().max() <= 1
    assert float(action.mean()) == pytest.approx(0, abs=0.03)
    assert float(action.std()) == pytest.approx(1 / 3**0.5, rel=0.05)  # U(-1, 1)
    assert float((action.abs() > 0.9).float().mean()) == pytest.approx(0.1, abs=0.015)
    # The default warm-up (tanh of a Gaussian of std 0.75) puts half as much near the bounds.
    gaussian = build(SacAgent, pendulum.spaces)
    gaussian.give_min_itr_learn(10)
    gaussian.sample_mode(9)
    assert float((_warmup_actions(gaussian).abs() > 0.9).float().mean()) < 0.07
    # Learning: actions from the policy. Made to output mean 1 and std 0.5, tanh(N(1, 0.5)) averages 0.69.
    last = [m for m in agent.model.modules() if isinstance(m, torch.nn.Linear)][-1]
    with torch.no_grad():
        last.weight.zero_()
        last.bias.copy_(torch.tensor([1.0, math.log(0.5)]))
    agent.sample_mode(10)
    action = _warmup_actions(agent)
    expected = torch.tanh(1.0 + 0.5 * torch.randn(200_000)).mean()
    assert float(action.mean()) == pytest.approx(float(expected), abs=0.02)
    agent.eval_mode(9)
    assert float(_warmup_actions(agent).std()) < 1e-5  # evaluation acts with the mean, warm-up or not


def test_sac_uniform_warmup_follows_the_env_streams_and_needs_bounded_actions(pendulum):
    runs = []
    for _ in range(2):
        agent = build(SacAgent, pendulum.spaces, uniform_warmup=True)
        agent.seed_env_streams(5, [0, 1, 2, 3])
        agent.give_min_itr_learn(10)
        agent.sample_mode(0)
        runs.append(torch.stack([_warmup_actions(agent, B=4) for _ in range(3)]))
    torch.testing.assert_close(runs[0], runs[1], rtol=0, atol=0)
    assert runs[0].unique().numel() == 12
    with pytest.raises(ValueError, match="needs a bounded action: pass action_squash"):
        SacAgent(uniform_warmup=True, action_squash=None)


def _read_min_itr_learn(agent, ready, queue):
    ready.wait(10)
    queue.put(agent.min_itr_learn)


def test_min_itr_learn_given_after_a_fork_reaches_the_child(pendulum):
    agent = build(SacAgent, pendulum.spaces)
    ctx = mp.get_context("fork")
    ready, queue = ctx.Event(), ctx.Queue()
    child = ctx.Process(target=_read_min_itr_learn, args=(agent, ready, queue))
    child.start()
    agent.give_min_itr_learn(42)  # the algorithm does this after the sampler's workers started
    ready.set()
    assert queue.get(timeout=10) == 42
    child.join(10)


@pytest.mark.parametrize("AgentCls", AGENTS)
def test_seeded_env_streams_repeat_the_same_exploration(AgentCls, pendulum):
    actions = []
    for _ in range(2):
        torch.manual_seed(0)
        agent = build(AgentCls, pendulum.spaces)
        agent.seed_env_streams(7, env_ranks=[0, 1])
        agent.sample_mode(1)
        torch.manual_seed(123 + len(actions))  # the global RNG must not matter
        actions.append(agent.step(*step_inputs(B=2)).action)
    torch.testing.assert_close(actions[0], actions[1])


def test_make_rescales_pendulum_torque_linearly():
    env = make("Pendulum-v1")
    assert env.env.action(torch.tensor([1.0]).numpy()) == 2.0
    assert env.env.action(torch.tensor([-0.5]).numpy()) == -1.0


@pytest.mark.parametrize("AgentCls", AGENTS)
def test_train_mode_trains_policy_and_critics_but_not_the_targets(AgentCls, pendulum):
    agent = build(AgentCls, pendulum.spaces)
    agent.train_mode(1)
    assert agent.model.training
    for key, module in agent.other_models().items():
        assert module.training is not key.startswith("target_"), key
