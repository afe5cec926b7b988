import pytest
import torch

from rlrun.models.dqn.mlp import DqnMlpModel


@pytest.mark.parametrize("dueling", [False, True])
@pytest.mark.parametrize("lead", [(), (5,), (3, 5)])
def test_dqn_mlp_model_gives_one_q_per_action(lead, dueling):
    model = DqnMlpModel((4,), action_size=2, dueling=dueling)
    assert model(torch.randn(*lead, 4), None, None).shape == (*lead, 2)


def test_dqn_mlp_model_flattens_multidimensional_observations_and_casts_to_float():
    model = DqnMlpModel((2, 3), action_size=3, hidden_sizes=(16,))
    obs = torch.randint(0, 5, (7, 2, 3))
    assert model(obs, None, None).shape == (7, 3)


def test_dqn_mlp_model_ignores_prev_action_and_reward():
    model = DqnMlpModel((4,), action_size=2)
    obs = torch.randn(3, 4)
    torch.testing.assert_close(model(obs, torch.ones(3, 2), torch.ones(3)), model(obs, None, None))
