"""The qpg MLPs: output shapes for every leading-dims layout, bounded deterministic actions, and the
critic reading the action."""

import pytest
import torch

from rlrun.models.qpg.mlp import MuMlpModel, PiMlpModel, QofMuMlpModel, VMlpModel

OBS_SHAPE = (3,)


@pytest.mark.parametrize("lead", [(), (5,), (4, 5)])
def test_each_model_keeps_the_leading_dims(lead):
    obs = torch.randn(*lead, *OBS_SHAPE)
    action = torch.rand(*lead, 2) * 2 - 1
    mu = MuMlpModel(OBS_SHAPE, [16], action_size=2)(obs, None, None)
    mean, log_std = PiMlpModel(OBS_SHAPE, [16], action_size=2)(obs, None, None)
    q = QofMuMlpModel(OBS_SHAPE, [16], action_size=2)(obs, None, None, action)
    v = VMlpModel(OBS_SHAPE, [16])(obs, None, None)
    assert mu.shape == mean.shape == log_std.shape == (*lead, 2)
    assert q.shape == v.shape == lead


def test_mu_is_bounded_by_output_max():
    model = MuMlpModel(OBS_SHAPE, [8], action_size=1, output_max=2.0)
    mu = model(1e4 * torch.randn(100, *OBS_SHAPE))
    assert mu.abs().max() <= 2.0 and mu.abs().max() > 1.0


def test_q_depends_on_the_action_and_gradients_reach_it():
    model = QofMuMlpModel(OBS_SHAPE, [8], action_size=1)
    obs = torch.randn(6, *OBS_SHAPE)
    action = torch.zeros(6, 1, requires_grad=True)
    q = model(obs, None, None, action)
    q.sum().backward()
    assert action.grad is not None and action.grad.abs().sum() > 0


def test_uint_observations_are_cast_to_float():
    obs = torch.ones(2, *OBS_SHAPE, dtype=torch.uint8)
    assert MuMlpModel(OBS_SHAPE, [4], action_size=1)(obs).dtype == torch.float32
