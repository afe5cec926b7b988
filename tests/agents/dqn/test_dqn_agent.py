import multiprocessing as mp

import pytest
import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.models.dqn.mlp import DqnMlpModel

B, T = 4, 3


def batch(*lead):
    return torch.randn(*lead, 4), torch.zeros(lead, dtype=torch.long), torch.zeros(lead)


def make_agent(spaces, **kwargs):
    agent = DqnAgent(**kwargs)
    agent.initialize(spaces)
    return agent


def test_default_model_is_the_mlp_q_model(cartpole):
    agent = make_agent(cartpole.spaces, model_kwargs=dict(dueling=True))
    assert isinstance(agent.model, DqnMlpModel)
    assert isinstance(agent.target_model, DqnMlpModel) and agent.target_model is not agent.model


def test_step_returns_actions_and_q_without_grad(cartpole):
    agent = make_agent(cartpole.spaces)
    agent.sample_mode(0)
    step = agent.step(*batch(B))
    assert step.action.shape == (B,) and step.action.dtype == torch.long
    assert step.agent_info.q.shape == (B, 2)
    assert not step.agent_info.q.requires_grad
    assert all(cartpole.action_space.contains(a) for a in step.action.numpy())


def test_call_has_grad_and_target_has_none(cartpole):
    agent = make_agent(cartpole.spaces)
    q = agent(*batch(T, B))
    assert q.shape == (T, B, 2) and q.requires_grad
    target_q = agent.target(*batch(T, B))
    assert target_q.shape == (T, B, 2) and not target_q.requires_grad
    assert not any(p.requires_grad for p in agent.target_model.parameters())


def test_greedy_step_takes_the_argmax(cartpole):
    agent = make_agent(cartpole.spaces, eps_eval=0.0)
    agent.eval_mode(1)
    step = agent.step(*batch(50))
    torch.testing.assert_close(step.action, step.agent_info.q.argmax(-1))


@pytest.mark.parametrize("itr,expected", [(0, 1.0), (10, 1.0), (15, 0.55), (20, 0.1), (500, 0.1)])
def test_sample_epsilon_anneals_between_itr_min_and_itr_max(cartpole, itr, expected):
    agent = make_agent(cartpole.spaces, eps_init=1.0, eps_final=0.1, eps_itr_min=10, eps_itr_max=20)
    agent.sample_mode(itr)
    assert agent.distribution.epsilon == pytest.approx(expected)


def test_set_epsilon_itr_min_max_moves_the_schedule(cartpole):
    agent = make_agent(cartpole.spaces, eps_init=1.0, eps_final=0.0)
    agent.set_epsilon_itr_min_max(100, 200)
    agent.sample_mode(150)
    assert agent.distribution.epsilon == pytest.approx(0.5)
    assert (agent.eps_itr_min, agent.eps_itr_max) == (100, 200)


def test_eval_epsilon_is_one_at_itr_zero_then_eps_eval(cartpole):
    agent = make_agent(cartpole.spaces, eps_eval=0.05)
    agent.eval_mode(0)
    assert agent.distribution.epsilon == 1.0
    agent.eval_mode(3)
    assert agent.distribution.epsilon == pytest.approx(0.05)
    agent.sample_mode(10**6)
    assert agent.distribution.epsilon == pytest.approx(agent.eps_final)


def _sample_epsilon_in_worker(agent, go, out):
    go.wait(timeout=20)
    agent.sample_mode(150)
    out.put(float(agent.distribution.epsilon))


def test_schedule_set_after_workers_forked_reaches_them(cartpole):
    agent = DqnAgent(eps_init=1.0, eps_final=0.0)
    agent.initialize(cartpole.spaces, share_memory=True)
    ctx = mp.get_context("fork")
    go, out = ctx.Event(), ctx.Queue()
    worker = ctx.Process(target=_sample_epsilon_in_worker, args=(agent, go, out))
    worker.start()
    try:
        agent.set_epsilon_itr_min_max(100, 200)  # what the algorithm does after the sampler started
        go.set()
        seen = out.get(timeout=20)
    finally:
        worker.join(timeout=20)
    assert seen == pytest.approx(0.5)


def test_per_env_epsilons_are_log_spaced_over_global_b_and_picked_by_env_ranks(cartpole):
    agent = DqnAgent(eps_final=0.1, eps_final_min=0.001, eps_itr_min=0, eps_itr_max=10)
    agent.initialize(cartpole.spaces, global_B=3, env_ranks=[0, 2])
    agent.sample_mode(10)
    torch.testing.assert_close(agent.distribution.epsilon, torch.tensor([0.001, 0.1]))
    agent.sample_mode(0)
    torch.testing.assert_close(agent.distribution.epsilon, torch.ones(2))
    agent.sample_mode(5)
    torch.testing.assert_close(agent.distribution.epsilon, torch.tensor([0.5005, 0.55]))
    step = agent.step(*batch(2))
    assert step.action.shape == (2,)


def test_collector_initialize_gives_a_worker_its_envs_epsilons(cartpole):
    agent = make_agent(cartpole.spaces, eps_final=0.1, eps_final_min=0.001, eps_itr_min=0, eps_itr_max=10)
    agent.collector_initialize(global_B=3, env_ranks=[1])
    agent.sample_mode(10)
    assert agent.distribution.epsilon == pytest.approx(0.01)


def test_without_eps_final_min_env_ranks_keep_a_scalar_epsilon(cartpole):
    agent = DqnAgent(eps_final=0.1)
    agent.initialize(cartpole.spaces, global_B=4, env_ranks=[0, 1])
    agent.sample_mode(10**6)
    assert agent.distribution.epsilon == pytest.approx(0.1)


def test_env_ranks_outside_global_b_are_refused(cartpole):
    agent = DqnAgent(eps_final_min=0.001)
    with pytest.raises(ValueError, match="global_B"):
        agent.initialize(cartpole.spaces, global_B=2, env_ranks=[2])


def _perturb(model):
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p))


def test_update_target_copies_the_model(cartpole):
    agent = make_agent(cartpole.spaces)
    _perturb(agent.model)
    obs = batch(B)
    assert not torch.allclose(agent.target(*obs), agent(*obs))
    agent.update_target()
    torch.testing.assert_close(agent.target(*obs), agent(*obs).detach())


def test_soft_update_target_moves_tau_of_the_way(cartpole):
    agent = make_agent(cartpole.spaces)
    _perturb(agent.model)
    old = {k: v.clone() for k, v in agent.target_model.state_dict().items()}
    agent.update_target(tau=0.25)
    for k, v in agent.target_model.state_dict().items():
        torch.testing.assert_close(v, 0.25 * agent.model.state_dict()[k] + 0.75 * old[k])


def test_state_dict_round_trip_restores_model_and_target(cartpole):
    a = make_agent(cartpole.spaces)
    _perturb(a.model)
    b = make_agent(cartpole.spaces)
    b.load_state_dict(a.state_dict())
    obs = batch(B)
    torch.testing.assert_close(b(*obs), a(*obs))
    torch.testing.assert_close(b.target(*obs), a.target(*obs))
    assert set(a.state_dict()) == {"model", "target"}


def test_a_bare_model_state_dict_loads_into_model_and_target(cartpole):
    a, b = make_agent(cartpole.spaces), make_agent(cartpole.spaces)
    b.load_state_dict(a.model.state_dict())
    obs = batch(B)
    torch.testing.assert_close(b.target(*obs), a(*obs).detach())


def test_to_device_moves_target_and_keeps_shared_model_on_cpu(cartpole):
    agent = DqnAgent()
    agent.initialize(cartpole.spaces, share_memory=True)
    agent.to_device("cpu")
    assert agent.model is not agent.shared_model
    assert all(p.is_shared() for p in agent.shared_model.parameters())
    assert not any(p.is_shared() for p in agent.target_model.parameters())


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(eps_final=1.5), "eps_final"),
        (dict(eps_eval=-0.1), "eps_eval"),
        (dict(eps_final_min=0.0), "eps_final_min"),
        (dict(eps_itr_min=10, eps_itr_max=5), "eps_itr_max"),
    ],
)
def test_bad_epsilon_settings_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DqnAgent(**kwargs)


def test_continuous_actions_are_refused(pendulum):
    with pytest.raises(ValueError, match="discrete action space"):
        DqnAgent().initialize(pendulum.spaces)


def test_set_sample_epsilon_greedy_sets_the_exploration_until_the_next_sample_mode():
    from rlrun.envs.gym import make

    env = make(id="CartPole-v1")
    agent = DqnAgent()
    agent.initialize(env.spaces)
    agent.sample_mode(0)
    agent.set_sample_epsilon_greedy(0.25)
    assert agent.distribution.epsilon == 0.25 and agent.eps_sample == 0.25
    agent.sample_mode(0)
    assert agent.distribution.epsilon == agent.eps_init
