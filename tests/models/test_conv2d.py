import pytest
import torch

from rlrun.models.conv2d import Conv2dHeadModel, Conv2dModel


@pytest.mark.parametrize("lead", [(), (2,), (3, 2)])
def test_conv2d_model_keeps_leading_dims(lead):
    model = Conv2dModel(4, [8, 16], [8, 4], [4, 2], [0, 1])
    out = model(torch.randn(*lead, 4, 104, 80))
    assert out.shape[: len(lead)] == lead
    assert out.shape[len(lead) :] == (16, 12, 9)


@pytest.mark.parametrize("use_maxpool", [False, True])
def test_conv_out_size_matches_a_forward_pass(use_maxpool):
    model = Conv2dModel(3, [8, 16, 16], [5, 3, 3], [2, 2, 1], [1, 1, 1], use_maxpool=use_maxpool)
    out = model(torch.randn(2, 3, 45, 61))
    assert model.conv_out_size(45, 61) == out[0].numel()


def test_maxpool_replaces_conv_strides():
    model = Conv2dModel(1, [4, 4], [3, 3], [2, 1], use_maxpool=True)
    convs = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    pools = [m for m in model.modules() if isinstance(m, torch.nn.MaxPool2d)]
    assert [c.stride for c in convs] == [(1, 1), (1, 1)]
    assert len(pools) == 1 and pools[0].kernel_size == 2


def test_conv2d_model_refuses_mismatched_layer_lists():
    with pytest.raises(ValueError, match="one entry per layer"):
        Conv2dModel(4, [8, 16], [8], [4, 2])


def test_conv2d_model_head_sizes_points_to_conv2d_head_model():
    with pytest.raises(ValueError, match="Conv2dHeadModel"):
        Conv2dModel(4, [8], [3], [1], head_sizes=[32])


def test_conv_out_size_refuses_images_too_small():
    model = Conv2dModel(1, [4], [8], [4])
    with pytest.raises(ValueError, match="too small"):
        model.conv_out_size(4, 4)


@pytest.mark.parametrize("lead", [(), (2,), (3, 2)])
def test_conv2d_head_model_outputs_output_size(lead):
    model = Conv2dHeadModel((4, 104, 80), [16, 32], [8, 4], [4, 2], hidden_sizes=[64], output_size=5, paddings=[0, 1])
    assert model.output_size == 5
    assert model(torch.randn(*lead, 4, 104, 80)).shape == (*lead, 5)


def test_conv2d_head_model_without_head_returns_flat_conv_features():
    model = Conv2dHeadModel((4, 104, 80), [16, 32], [8, 4], [4, 2], hidden_sizes=None, paddings=[0, 1])
    assert model.output_size == model.conv_out_size == 32 * 12 * 9
    assert model(torch.randn(3, 4, 104, 80)).shape == (3, model.conv_out_size)
