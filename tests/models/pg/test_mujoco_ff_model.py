import pytest
import torch

from rlrun.models.pg.mujoco_ff_model import MujocoFfModel


@pytest.mark.parametrize("lead", [(), (5,), (3, 5)])
def test_mujoco_ff_model_returns_mean_log_std_and_value(lead):
    model = MujocoFfModel((3,), action_size=2, init_log_std=-0.5)
    mu, log_std, v = model(torch.randn(*lead, 3), None, None)
    assert mu.shape == log_std.shape == (*lead, 2)
    assert v.shape == lead
    torch.testing.assert_close(log_std, torch.full((*lead, 2), -0.5))
    assert (mu.abs() <= 1).all()  # tanh on the mean by default


def test_mujoco_ff_model_log_std_is_learnable():
    model = MujocoFfModel((3,), action_size=2)
    _, log_std, _ = model(torch.randn(4, 3), None, None)
    log_std.sum().backward()
    torch.testing.assert_close(model.log_std.grad, torch.full((2,), 4.0))


def test_mujoco_ff_model_without_mu_nonlinearity_is_unbounded():
    model = MujocoFfModel((3,), action_size=1, mu_nonlinearity=None)
    with torch.no_grad():
        model.mu.model[-1].bias.fill_(5.0)
        model.mu.model[-1].weight.zero_()
    mu, _, _ = model(torch.randn(3), None, None)
    torch.testing.assert_close(mu, torch.tensor([5.0]))


def test_observation_normalisation_uses_running_statistics_and_clips():
    model = MujocoFfModel((2,), action_size=1, normalize_observation=True, norm_obs_clip=3)
    data = torch.tensor([[10.0, -5.0], [12.0, -5.0]])
    model.update_obs_rms(data)
    torch.testing.assert_close(model.obs_rms.mean, torch.tensor([11.0, -5.0]))
    seen = []
    model.v.register_forward_pre_hook(lambda m, inp: seen.append(inp[0]))
    model(torch.tensor([[12.0, -5.0], [1000.0, -5.0]]), None, None)
    # (12 - 11) / 1 = 1; (1000 - 11) clipped at 3; second dim has var 0, floored at 1e-6: 0 / 1e-3.
    torch.testing.assert_close(seen[0], torch.tensor([[1.0, 0.0], [3.0, 0.0]]))


def test_update_obs_rms_is_a_no_op_without_normalisation():
    model = MujocoFfModel((2,), action_size=1)
    model.update_obs_rms(torch.randn(5, 2))
    assert model.obs_rms is None
