"""SAC: the critic, policy and temperature losses on a hand-built batch with a policy whose samples and
log-likelihoods are fixed, the temperature update's direction and size, and real training on Pendulum."""

import math

import pytest
import torch
from qpg_toy_models import SPACES, LinearQ, inputs, set_weight, two_transitions

from rlrun.agents.qpg.sac_agent import SacAgent
from rlrun.algos.qpg.sac import SAC
from rlrun.distributions.gaussian import DistInfoStd
from rlrun.envs.gym import make
from rlrun.samplers.serial.sampler import SerialSampler


class FixedPolicyAgent:
    """A SAC agent whose policy is known: at s, action = .5 * s0 * scale and log pi = s1; critics
    Q1 = s0 + a and Q2 = 2 (s0 + a) (targets alike)."""

    recurrent = False
    env_spaces = SPACES
    device = torch.device("cpu")  # where the algorithm keeps alpha and moves its batches (rlpyt's agents have it too)

    def __init__(self):
        self.scale = torch.nn.Parameter(torch.ones(1))
        self.q1_model, self.q2_model = LinearQ((3,), 1), LinearQ((3,), 1)
        self.target_q1_model, self.target_q2_model = LinearQ((3,), 1), LinearQ((3,), 1)
        set_weight(self.q2_model, 2.0)
        set_weight(self.target_q2_model, 2.0)
        self.targets_moved = 0

    def q(self, observation, prev_action, prev_reward, action):
        return self.q1_model(observation, None, None, action), self.q2_model(observation, None, None, action)

    def target_q(self, observation, prev_action, prev_reward, action):
        with torch.no_grad():
            t1 = self.target_q1_model(observation, None, None, action)
            return t1, self.target_q2_model(observation, None, None, action)

    def pi(self, observation, prev_action, prev_reward):
        mean = observation[..., 0:1]
        action = 0.5 * mean * self.scale
        return action, observation[..., 1], DistInfoStd(mean=mean, log_std=torch.zeros_like(mean))

    def pi_parameters(self):
        return iter([self.scale])

    def q1_parameters(self):
        return self.q1_model.parameters()

    def q2_parameters(self):
        return self.q2_model.parameters()

    def give_min_itr_learn(self, itr):
        pass

    def update_target(self, tau):
        self.targets_moved += 1


def batch():
    """Sample 0: s = (1, -1), a = .2, return 1, s_n = (2, -.5). Sample 1: s = (0, .5), a = -.4, return -1,
    terminal. (The policy reads log pi from s1.)"""
    b = two_transitions()
    return b._replace(
        agent_inputs=inputs((1.0, -1.0, 0.0), (0.0, 0.5, 0.0)),
        action=torch.tensor([[0.2], [-0.4]]),
        target_inputs=inputs((2.0, -0.5, 0.0), (9.0, 9.0, 0.0)),
    )


def sac(OptimCls=torch.optim.SGD, **kwargs):
    algo = SAC(discount=0.5, OptimCls=OptimCls, learning_rate=0.1, **kwargs)
    algo.agent = FixedPolicyAgent()
    algo.optim_initialize()
    return algo


def test_losses_match_hand_computation_with_fixed_alpha():
    (q1_loss, q2_loss, pi_loss, alpha_loss), _ = sac(fixed_alpha=0.5).loss(batch())
    # Sample 0: a' = 1, log pi' = -.5; min(Q1', Q2') = 3; soft value 3 + .5 * .5 = 3.25; y = 1 + .5 * 3.25 = 2.625.
    # Q1 = 1.2, Q2 = 2.4. Sample 1: terminal, y = -1; Q1 = -.4, Q2 = -.8.
    assert q1_loss.item() == pytest.approx(0.5 * ((2.625 - 1.2) ** 2 + 0.6**2) / 2)
    assert q2_loss.item() == pytest.approx(0.5 * ((2.625 - 2.4) ** 2 + 0.2**2) / 2)
    # Policy: sample 0 a~ = .5, log pi = -1, min Q = 1.5: .5 * -1 - 1.5 = -2; sample 1: a~ = 0, log pi = .5,
    # min Q = 0: .25. Mean -.875.
    assert pi_loss.item() == pytest.approx(-0.875)
    assert alpha_loss is None


def test_reward_scale_multiplies_the_return_in_the_target():
    (q1_loss, *_), _ = sac(fixed_alpha=0.5, reward_scale=2.0).loss(batch())
    # y0 = 2 + 1.625 = 3.625; y1 = -2.
    assert q1_loss.item() == pytest.approx(0.5 * ((3.625 - 1.2) ** 2 + 1.6**2) / 2)


def test_gaussian_action_prior_subtracts_the_unit_normal_log_density():
    (_, _, pi_loss, _), _ = sac(fixed_alpha=0.5, action_prior="gaussian").loss(batch())
    log_normal = [-0.5 * a**2 - 0.5 * math.log(2 * math.pi) for a in (0.5, 0.0)]
    assert pi_loss.item() == pytest.approx(-0.875 - sum(log_normal) / 2)


def test_temperature_loss_and_update_follow_the_entropy_target():
    algo = sac()  # learned alpha, starting at 1; target entropy "auto" = -1 for one action dim
    assert algo.target_entropy == -1.0 and algo.alpha == 1.0
    losses, _ = algo.loss(batch())
    alpha_loss = losses[3]
    assert alpha_loss.item() == 0.0  # log alpha = 0
    # d alpha_loss / d log_alpha = -(mean log pi + target_entropy) = -(-.25 - 1) = 1.25; SGD at lr .1.
    algo.train_step(batch(), algo.empty_opt_info())
    assert math.log(algo.alpha) == pytest.approx(-0.125)
    # The policy's entropy (.25) is above the target: alpha fell. With a target above it, alpha rises.
    algo = sac(target_entropy=2.0)
    algo.train_step(batch(), algo.empty_opt_info())
    assert math.log(algo.alpha) == pytest.approx(0.1 * (-0.25 + 2.0))


def test_the_losses_of_a_step_use_the_alpha_before_it():
    algo = sac()
    opt_info = algo.empty_opt_info()
    algo.train_step(batch(), opt_info)
    # pi_loss with alpha 1: sample 0: -1 - 1.5, sample 1: .5 - 0 -> -1.
    assert opt_info.piLoss == [pytest.approx(-1.0)] and opt_info.alpha == [pytest.approx(math.exp(-0.125))]


def test_target_entropy_none_keeps_alpha_fixed_at_one_and_fixed_alpha_keeps_its_value():
    algo = sac(target_entropy=None)
    algo.train_step(batch(), algo.empty_opt_info())
    assert algo.alpha == 1.0
    algo = sac(fixed_alpha=0.2)
    algo.train_step(batch(), algo.empty_opt_info())
    assert algo.alpha == pytest.approx(0.2) and algo.alpha_optimizer is None


def test_optimizer_state_round_trips_with_log_alpha():
    algo = sac(OptimCls=torch.optim.Adam)
    algo.train_step(batch(), algo.empty_opt_info())
    state = algo.optim_state_dict()
    fresh = sac(OptimCls=torch.optim.Adam)
    fresh.load_optim_state_dict(state)
    assert fresh.alpha == pytest.approx(algo.alpha) and fresh.alpha != 1.0


def test_bad_keywords_are_refused():
    with pytest.raises(ValueError, match="reparameterize=True"):
        SAC(reparameterize=False)
    with pytest.raises(ValueError, match="action_prior"):
        SAC(action_prior="laplace")
    with pytest.raises(ValueError, match="fixed_alpha"):
        SAC(fixed_alpha=0.0)


def test_real_sac_iterations_on_pendulum_train_every_network_and_log_each_field():
    torch.manual_seed(0)
    sampler = SerialSampler(make, dict(id="Pendulum-v1"), batch_T=8, batch_B=2, max_decorrelation_steps=0)
    agent = SacAgent(model_kwargs=dict(hidden_sizes=[8]), q_model_kwargs=dict(hidden_sizes=[8]))
    algo = SAC(batch_size=8, min_steps_learn=16, replay_size=1000, replay_ratio=8)
    try:
        examples = sampler.initialize(agent, seed=0)
        algo.initialize(agent, n_itr=3, batch_spec=sampler.batch_spec, mid_batch_reset=True, examples=examples)
        before = {k: [p.clone() for p in m.parameters()] for k, m in agent.other_models().items()}
        policy_before = [p.clone() for p in agent.model.parameters()]
        for itr in range(3):
            agent.sample_mode(itr)
            samples, _ = sampler.obtain_samples(itr)
            agent.train_mode(itr)
            opt_info = algo.optimize_agent(itr, samples)
    finally:
        sampler.shutdown()
    assert all(len(getattr(opt_info, f)) == algo.updates_per_optimize == 16 for f in opt_info._fields)
    assert not all(torch.equal(a, b) for a, b in zip(policy_before, agent.model.parameters()))
    for key, module in agent.other_models().items():
        assert not all(torch.equal(a, b) for a, b in zip(before[key], module.parameters())), key
    assert algo.alpha != 1.0


def test_train_step_records_through_append_opt_info_which_a_subclass_extends():
    # rlpyt's hook: a subclass overriding append_opt_info_ sees each step's losses, grad norms and values.
    seen = []

    class LoggingSAC(SAC):
        def append_opt_info_(self, opt_info, losses, grad_norms, values):
            super().append_opt_info_(opt_info, losses, grad_norms, values)
            seen.append((losses, grad_norms, values))

    algo = LoggingSAC(discount=0.5, OptimCls=torch.optim.SGD, learning_rate=0.1, fixed_alpha=0.5)
    algo.agent = FixedPolicyAgent()
    algo.optim_initialize()
    opt_info = algo.empty_opt_info()
    algo.train_step(batch(), opt_info)
    assert len(seen) == 1
    (q1_loss, q2_loss, pi_loss, alpha_loss), grad_norms, (q1, q2, pi_mean, pi_log_std) = seen[0]
    assert alpha_loss is None and len(grad_norms) == 3
    assert opt_info.q1Loss == [pytest.approx(q1_loss.item())] and opt_info.piLoss == [pytest.approx(pi_loss.item())]
    assert opt_info.q1GradNorm == [grad_norms[0]] and opt_info.piGradNorm == [grad_norms[2]]
    assert opt_info.qMeanDiff == [pytest.approx((q1 - q2).abs().mean().item())]
    assert all(len(getattr(opt_info, f)) == 1 for f in opt_info._fields)


def test_append_opt_info_appends_in_place_without_a_step():
    algo = sac(fixed_alpha=0.5)
    losses, values = algo.loss(batch())
    opt_info = algo.empty_opt_info()
    algo.append_opt_info_(opt_info, losses, (1.0, 2.0, 3.0), values)
    algo.append_opt_info_(opt_info, losses, (4.0, 5.0, 6.0), values)
    assert opt_info.q1GradNorm == [1.0, 4.0] and opt_info.q2GradNorm == [2.0, 5.0] and opt_info.piGradNorm == [3.0, 6.0]
    assert opt_info.alpha == [pytest.approx(0.5)] * 2
