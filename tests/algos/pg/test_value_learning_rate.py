"""value_learning_rate: the value function trains in its own optimiser group, at its own rate."""

import pytest
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.samplers.collections import BatchSpec


def initialized(a2c, agent=None, n_itr=10):
    agent = CategoricalPgAgent() if agent is None else agent
    agent.initialize(make(id="CartPole-v1").spaces)
    a2c.initialize(agent, n_itr=n_itr, batch_spec=BatchSpec(5, 8))
    return a2c


def test_value_parameters_get_their_own_group_and_rate():
    a2c = initialized(A2C(learning_rate=7e-4, value_learning_rate=2.8e-3, OptimCls=torch.optim.RMSprop))
    model = a2c.agent.model
    policy_group, value_group = a2c.optimizer.param_groups
    assert {id(p) for p in value_group["params"]} == {id(p) for p in model.v.parameters()}
    assert {id(p) for p in policy_group["params"]} == {id(p) for p in model.pi.parameters()}
    assert (policy_group["lr"], value_group["lr"]) == (7e-4, 2.8e-3)
    # Both share the optimiser's other settings.
    assert policy_group["alpha"] == value_group["alpha"] and policy_group["eps"] == value_group["eps"]


def test_without_it_there_is_one_group_at_learning_rate():
    a2c = initialized(A2C(learning_rate=7e-4))
    assert [group["lr"] for group in a2c.optimizer.param_groups] == [7e-4]


def test_linear_schedule_decays_both_rates_by_the_same_fraction():
    a2c = initialized(A2C(learning_rate=1e-3, value_learning_rate=4e-3, linear_lr_schedule=True), n_itr=10)
    assert a2c.decay_learning_rate(itr=5) == 0.5
    assert [group["lr"] for group in a2c.optimizer.param_groups] == [5e-4, 2e-3]


def test_a_step_moves_the_value_function_by_its_rate_and_leaves_the_policy_step_alone(pg_run):
    # RMSprop's step is proportional to the learning rate for the same gradient; without clipping, the
    # gradient of each network does not depend on the other's rate. So doubling the value rate doubles the
    # value network's first step and leaves the policy's step as it was.
    steps = {}
    for value_lr in (None, 2e-3):
        a2c = A2C(learning_rate=1e-3, value_learning_rate=value_lr, OptimCls=torch.optim.RMSprop, clip_grad_norm=1e9)
        agent, _, samples = pg_run(a2c, T=5, B=4, seed=3)
        before = {name: p.detach().clone() for name, p in agent.model.named_parameters()}
        a2c.optimize_agent(0, samples)
        steps[value_lr] = {name: p.detach() - before[name] for name, p in agent.model.named_parameters()}
    for name, step in steps[None].items():
        factor = 2.0 if name.startswith("v.") else 1.0
        torch.testing.assert_close(steps[2e-3][name], factor * step, rtol=1e-4, atol=1e-9)


def test_optimizer_state_with_two_groups_loads_into_a_new_run():
    first = initialized(A2C(value_learning_rate=3e-3))
    state = first.optimizer.state_dict()
    second = initialized(A2C(value_learning_rate=3e-3, initial_optim_state_dict=state))
    assert [group["lr"] for group in second.optimizer.param_groups] == [1e-3, 3e-3]


def test_a_model_without_a_value_module_is_refused_with_the_fix():
    class PolicyAndValue(torch.nn.Module):  # returns (pi, value) but names its value layer "critic"
        def __init__(self, observation_shape, action_size):
            super().__init__()
            self.pi = torch.nn.Linear(observation_shape[0], action_size)
            self.critic = torch.nn.Linear(observation_shape[0], 1)

        def forward(self, observation, prev_action, prev_reward):
            return torch.softmax(self.pi(observation), -1), self.critic(observation).squeeze(-1)

    agent = CategoricalPgAgent(ModelCls=PolicyAndValue, model_kwargs=dict(observation_shape=(4,), action_size=2))
    with pytest.raises(ValueError, match="no submodule 'v'.*leave value_learning_rate=None"):
        initialized(A2C(value_learning_rate=3e-3), agent=agent)


def test_a_rate_that_is_not_positive_is_refused():
    with pytest.raises(ValueError, match="value_learning_rate must be positive"):
        A2C(value_learning_rate=0.0)
