"""Categorical Q models: AtariCatDqnModel (on a real Pong observation), CatDqnMlpModel and the heads."""

import pytest
import torch

from rlrun.models.dqn.atari_catdqn_model import AtariCatDqnModel, DistributionalHeadModel
from rlrun.models.dqn.catdqn_mlp import CatDqnMlpModel
from rlrun.models.dqn.dueling import DistributionalDuelingHeadModel

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def pong_observation():
    atari_env = pytest.importorskip("rlrun.envs.atari.atari_env", reason="Atari needs ale-py")
    env = atari_env.AtariEnv("pong")
    torch.manual_seed(0)
    obs = env.reset()
    for _ in range(10):
        obs = env.step(0).observation
    env.close()
    return torch.from_numpy(obs), env.spaces


@pytest.mark.parametrize("dueling", [False, True])
def test_atari_model_gives_a_distribution_per_action_on_a_pong_observation(pong_observation, dueling):
    obs, spaces = pong_observation
    assert obs.shape == (4, 104, 80) and obs.dtype == torch.uint8
    model = AtariCatDqnModel(obs.shape, output_size=spaces.action.n, dueling=dueling)
    for lead in [(), (2,), (3, 2)]:
        p = model(obs.expand(*lead, *obs.shape), None, None)
        assert p.shape == (*lead, 6, 51) and p.dtype == torch.float32
        assert (p >= 0).all()
        torch.testing.assert_close(p.sum(-1), torch.ones(*lead, 6))


def test_atari_model_does_not_scale_a_float_input_in_place(pong_observation):
    obs, _ = pong_observation
    model = AtariCatDqnModel(obs.shape, output_size=6, n_atoms=5, fc_sizes=[32], use_maxpool=True)
    as_float = obs.float()
    torch.testing.assert_close(model(obs, None, None), model(as_float, None, None))
    torch.testing.assert_close(as_float, obs.float())


@pytest.mark.parametrize("dueling", [False, True])
def test_mlp_model_gives_a_distribution_per_action(dueling):
    model = CatDqnMlpModel((4,), action_size=3, n_atoms=7, hidden_sizes=[16, 8], dueling=dueling)
    for lead in [(), (5,), (2, 5)]:
        p = model(torch.randn(*lead, 4))
        assert p.shape == (*lead, 3, 7)
        torch.testing.assert_close(p.sum(-1), torch.ones(*lead, 3))
    with pytest.raises(ValueError, match="n_atoms must be at least 2"):
        CatDqnMlpModel((4,), action_size=3, n_atoms=1)


def test_distributional_head_reshapes_logits_per_action():
    head = DistributionalHeadModel(8, [16], output_size=3, n_atoms=5)
    x = torch.randn(4, 8)
    torch.testing.assert_close(head(x), head.mlp(x).reshape(4, 3, 5))


def test_distributional_dueling_logits_are_value_plus_centred_advantage():
    head = DistributionalDuelingHeadModel(8, 16, output_size=4, n_atoms=5)
    with torch.no_grad():
        head.advantage_bias.normal_()
    x = torch.randn(6, 8)
    advantage = head.advantage(x)
    assert advantage.shape == (6, 4, 5)
    expected = head.value(x)[:, None, :] + advantage - advantage.mean(1, keepdim=True)
    torch.testing.assert_close(head(x), expected)
    torch.testing.assert_close(head(x).mean(1), head.value(x))  # averaged over actions: the value logits


def test_distributional_dueling_head_scales_the_gradient_into_its_input():
    head = DistributionalDuelingHeadModel(8, [16], output_size=4, n_atoms=3, grad_scale=0.5)
    unscaled = DistributionalDuelingHeadModel(8, [16], output_size=4, n_atoms=3, grad_scale=1.0)
    unscaled.load_state_dict(head.state_dict())
    x = torch.randn(5, 8, requires_grad=True)
    head(x).square().sum().backward()
    scaled = x.grad.clone()
    x.grad = None
    unscaled(x).square().sum().backward()
    torch.testing.assert_close(scaled, 0.5 * x.grad)
