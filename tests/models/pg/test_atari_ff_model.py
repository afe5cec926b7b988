import pytest
import torch

from rlrun.models.pg.atari_ff_model import AtariFfModel

IMAGE_SHAPE = (4, 104, 80)


@pytest.mark.parametrize("lead", [(), (2,), (3, 2)])
def test_atari_ff_model_returns_probabilities_and_values(lead):
    model = AtariFfModel(IMAGE_SHAPE, output_size=6)
    image = torch.randint(0, 256, (*lead, *IMAGE_SHAPE), dtype=torch.uint8)
    pi, v = model(image, None, None)
    assert pi.shape == (*lead, 6)
    assert v.shape == lead
    torch.testing.assert_close(pi.sum(-1), torch.ones(lead))
    assert (pi >= 0).all()


def test_atari_ff_model_does_not_modify_float_input():
    model = AtariFfModel(IMAGE_SHAPE, output_size=2)
    image = torch.full((1, *IMAGE_SHAPE), 255.0)
    model(image, None, None)
    assert (image == 255.0).all()


def test_the_nature_network_with_orthogonal_init_has_cleanrls_layers_and_a_near_uniform_first_policy():
    torch.manual_seed(0)
    nature = dict(channels=(32, 64, 64), kernel_sizes=(8, 4, 3), strides=(4, 2, 1), paddings=(0, 0, 0), fc_sizes=512)
    model = AtariFfModel(IMAGE_SHAPE, output_size=6, orthogonal_init=True, **nature)
    convs = [m for m in model.conv.modules() if isinstance(m, torch.nn.Conv2d)]
    assert [c.out_channels for c in convs] == [32, 64, 64] and model.pi.in_features == 512
    layers = [*convs, *(m for m in model.conv.modules() if isinstance(m, torch.nn.Linear)), model.pi, model.value]
    assert all(float(layer.bias.detach().abs().max()) == 0 for layer in layers)
    for layer, gain in [(convs[0], 2**0.5), (model.pi, 0.01), (model.value, 1.0)]:
        w = layer.weight.detach().reshape(layer.weight.shape[0], -1)  # orthogonal rows (fewer rows than columns)
        torch.testing.assert_close(w @ w.T, gain**2 * torch.eye(w.shape[0]), atol=1e-4, rtol=1e-4)
    pi, _ = model(torch.randint(0, 256, (5, *IMAGE_SHAPE), dtype=torch.uint8))
    assert float((pi.detach() - 1 / 6).abs().max()) < 0.01  # the 0.01 gain on the policy output
    plain = AtariFfModel(IMAGE_SHAPE, output_size=6, **nature)
    assert float(plain.pi.bias.detach().abs().max()) > 0  # torch's default init otherwise
