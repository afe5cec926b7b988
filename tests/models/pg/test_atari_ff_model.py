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
