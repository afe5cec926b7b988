import pytest
import torch

from rlrun.models.pg.mlp import CategoricalPgMlpModel


@pytest.mark.parametrize("shared_trunk", [False, True])
@pytest.mark.parametrize("lead", [(), (5,), (3, 5)])
def test_pg_mlp_model_returns_probabilities_and_values(lead, shared_trunk):
    model = CategoricalPgMlpModel((4,), action_size=3, shared_trunk=shared_trunk)
    pi, v = model(torch.randn(*lead, 4), None, None)
    assert pi.shape == (*lead, 3)
    assert v.shape == lead
    torch.testing.assert_close(pi.sum(-1), torch.ones(lead))


def test_pg_mlp_model_starts_near_uniform_policy():
    torch.manual_seed(0)
    model = CategoricalPgMlpModel((4,), action_size=2)
    pi, _ = model(torch.randn(256, 4), None, None)
    assert (pi - 0.5).abs().max() < 0.05


def test_pg_mlp_model_layers_are_orthogonal_with_zero_bias():
    model = CategoricalPgMlpModel((4,), action_size=2, hidden_sizes=(64, 64))
    first = model.pi.model[0]
    w = first.weight  # [64, 4]: orthonormal columns scaled by sqrt(2)
    torch.testing.assert_close(w.T @ w, 2 * torch.eye(4), atol=1e-5, rtol=0)
    assert (first.bias == 0).all()


def test_separate_trunks_share_no_parameters_and_shared_trunk_does():
    separate = CategoricalPgMlpModel((4,), action_size=2)
    shared = CategoricalPgMlpModel((4,), action_size=2, shared_trunk=True)
    assert sum(p.numel() for p in shared.parameters()) < sum(p.numel() for p in separate.parameters())
    assert separate.trunk is None
