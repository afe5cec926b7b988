import pytest
import torch

from rlrun.models.dqn.atari_dqn_model import AtariDqnModel

IMAGE_SHAPE = (4, 104, 80)


def frames(*lead):
    return torch.randint(0, 256, (*lead, *IMAGE_SHAPE), dtype=torch.uint8)


@pytest.mark.parametrize("dueling", [False, True])
@pytest.mark.parametrize("lead", [(), (2,), (3, 2)])
def test_atari_dqn_model_gives_one_q_per_action_for_uint8_frames(lead, dueling):
    model = AtariDqnModel(IMAGE_SHAPE, output_size=6, dueling=dueling)
    q = model(frames(*lead), None, None)
    assert q.shape == (*lead, 6)
    assert q.dtype == torch.float32


def test_atari_dqn_model_scales_pixels_to_unit_range_without_touching_the_input():
    model = AtariDqnModel(IMAGE_SHAPE, output_size=3)
    x = frames(2)
    as_float = x.float()
    torch.testing.assert_close(model(x, None, None), model(as_float, None, None))
    torch.testing.assert_close(as_float, x.float())  # float input not scaled in place
    captured = []
    model.conv.register_forward_hook(lambda m, inp, out: captured.append(inp[0]))
    model(x, None, None)
    assert captured[0].max() <= 1.0


def test_atari_dqn_model_maxpool_variant_runs():
    model = AtariDqnModel(IMAGE_SHAPE, output_size=4, use_maxpool=True)
    assert model(frames(2), None, None).shape == (2, 4)
