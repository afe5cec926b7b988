import pytest
import torch

from rlrun.models.mlp import MlpModel


@pytest.mark.parametrize("lead", [(), (5,), (3, 5)])
def test_mlp_keeps_any_leading_dims(lead):
    model = MlpModel(4, [8, 8], output_size=3)
    assert model(torch.randn(*lead, 4)).shape == (*lead, 3)


def test_mlp_without_output_size_ends_with_the_nonlinearity():
    model = MlpModel(4, [8, 6], nonlinearity=torch.nn.ReLU)
    out = model(torch.randn(100, 4))
    assert model.output_size == 6
    assert out.shape == (100, 6)
    assert (out >= 0).all()


def test_mlp_with_no_hidden_layers_is_linear():
    model = MlpModel(4, None, output_size=2)
    layers = list(model.modules())
    assert sum(isinstance(m, torch.nn.Linear) for m in layers) == 1
    x = torch.randn(7, 4)
    torch.testing.assert_close(model(2 * x) - model(x), model(x) - model(torch.zeros(7, 4)))


def test_mlp_int_hidden_size_means_one_layer():
    model = MlpModel(4, 16, output_size=2)
    assert [m.out_features for m in model.modules() if isinstance(m, torch.nn.Linear)] == [16, 2]


def test_mlp_with_nothing_to_output_is_refused():
    with pytest.raises(ValueError, match="hidden_sizes or an output_size"):
        MlpModel(4, [])
