import pytest
import torch

from rlrun.models.utils import conv2d_output_shape, polyak_update, scale_grad, strip_ddp_state_dict, update_state_dict


@pytest.mark.parametrize("k,s,p", [(8, 4, 0), (4, 2, 1), (3, 1, 1), ((3, 5), (2, 1), (0, 2))])
def test_conv2d_output_shape_matches_torch(k, s, p):
    conv = torch.nn.Conv2d(1, 1, kernel_size=k, stride=s, padding=p)
    out = conv(torch.zeros(1, 1, 84, 77))
    assert conv2d_output_shape(84, 77, k, s, p) == tuple(out.shape[-2:])


def test_scale_grad_scales_only_the_backward_pass():
    x = torch.ones(3, requires_grad=True)
    y = scale_grad(x, 0.25)
    torch.testing.assert_close(y, x.detach())
    y.sum().backward()
    torch.testing.assert_close(x.grad, torch.full((3,), 0.25))


def test_update_state_dict_hard_copies_with_tau_1():
    source, target = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    update_state_dict(target, source.state_dict(), tau=1)
    for a, b in zip(source.parameters(), target.parameters()):
        torch.testing.assert_close(a, b)


def test_update_state_dict_averages_with_tau():
    source, target = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    old = {k: v.clone() for k, v in target.state_dict().items()}
    update_state_dict(target, source.state_dict(), tau=0.1)
    for k, v in target.state_dict().items():
        torch.testing.assert_close(v, 0.1 * source.state_dict()[k] + 0.9 * old[k])


def test_update_state_dict_copies_integer_buffers():
    source, target = torch.nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)
    source.num_batches_tracked += 7
    update_state_dict(target, source.state_dict(), tau=0.5)
    assert int(target.num_batches_tracked) == 7


@pytest.mark.parametrize("tau", [0, -0.5, 1.5])
def test_update_state_dict_refuses_tau_outside_0_1(tau):
    model = torch.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="tau"):
        update_state_dict(model, model.state_dict(), tau=tau)


def test_strip_ddp_state_dict_drops_module_prefix():
    sd = {"module.weight": 1, "bias": 2}
    assert strip_ddp_state_dict(sd) == {"weight": 1, "bias": 2}


def _bn_mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(), torch.nn.Linear(4, 1))


@pytest.mark.parametrize("tau", [0.005, 0.3, 1.0])
def test_polyak_update_equals_update_state_dict(tau):
    torch.manual_seed(0)
    source, target = _bn_mlp(), _bn_mlp()
    source.train()(torch.randn(8, 3))  # moves BatchNorm's running stats and its integer counter
    expected = _bn_mlp()
    expected.load_state_dict(target.state_dict())
    update_state_dict(expected, source.state_dict(), tau)
    polyak_update(target, source, tau)
    for (key, want), got in zip(expected.state_dict().items(), target.state_dict().values()):
        torch.testing.assert_close(got, want, msg=key)
    assert int(target[1].num_batches_tracked) == 1


def test_polyak_update_refuses_other_architectures_and_bad_tau():
    with pytest.raises(ValueError, match="copy of the source's architecture"):
        polyak_update(torch.nn.Linear(3, 2), _bn_mlp(), 0.1)
    with pytest.raises(ValueError, match="tau"):
        polyak_update(torch.nn.Linear(3, 2), torch.nn.Linear(3, 2), 0.0)
