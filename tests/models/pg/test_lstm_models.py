"""The LSTM policy-and-value models: output shapes over [T, B], [B] and unbatched input, and the state.

Every model keeps the B dim in its state ([N, B, H]) even for unbatched input, and one call over a
sequence equals step-by-step calls that carry the state along.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

from rlrun.models.lstm import RnnState
from rlrun.models.pg.atari_lstm_model import AtariLstmModel
from rlrun.models.pg.mlp_lstm_model import CategoricalPgLstmModel
from rlrun.models.pg.mujoco_lstm_model import MujocoLstmModel

pytestmark = pytest.mark.timeout(60)

IMAGE_SHAPE = (1, 104, 80)
LEADS = [(), (3,), (5, 3)]


def atari(lead, n_actions=6):
    image = torch.randint(0, 256, (*lead, *IMAGE_SHAPE), dtype=torch.uint8)
    action = F.one_hot(torch.randint(0, n_actions, lead), n_actions).float()
    return image, action, torch.randn(lead)


def vector(lead, obs_dim=3, action_dim=2, onehot=True):
    observation = torch.randn(*lead, obs_dim)
    if onehot:
        action = F.one_hot(torch.randint(0, action_dim, lead), action_dim).float()
    else:
        action = torch.randn(*lead, action_dim)
    return observation, action, torch.randn(lead)


def batch_size(lead) -> int:
    return lead[-1] if lead else 1


def random_state(n_layers, B, H):
    return RnnState(h=torch.randn(n_layers, B, H), c=torch.randn(n_layers, B, H))


@pytest.mark.parametrize("lead", LEADS)
def test_atari_lstm_model_shapes_with_and_without_a_state(lead):
    torch.manual_seed(0)
    model = AtariLstmModel(IMAGE_SHAPE, output_size=6, fc_sizes=32, lstm_size=16)
    B = batch_size(lead)
    for state in (None, random_state(1, B, 16)):
        pi, v, next_state = model(*atari(lead), state)
        assert pi.shape == (*lead, 6) and v.shape == lead
        torch.testing.assert_close(pi.sum(-1), torch.ones(lead))
        assert isinstance(next_state, RnnState)
        assert next_state.h.shape == next_state.c.shape == (1, B, 16)


@pytest.mark.parametrize("lead", LEADS)
def test_mujoco_lstm_model_shapes(lead):
    torch.manual_seed(0)
    model = MujocoLstmModel((3,), action_size=2, hidden_sizes=[8], lstm_size=16)
    B = batch_size(lead)
    for state in (None, random_state(1, B, 16)):
        mu, log_std, v, next_state = model(*vector(lead, onehot=False), state)
        assert mu.shape == log_std.shape == (*lead, 2) and v.shape == lead
        assert next_state.h.shape == next_state.c.shape == (1, B, 16)


@pytest.mark.parametrize("shared_lstm, n_layers", [(False, 2), (True, 1)])
@pytest.mark.parametrize("lead", LEADS)
def test_categorical_lstm_model_shapes(lead, shared_lstm, n_layers):
    torch.manual_seed(0)
    model = CategoricalPgLstmModel((3,), action_size=2, hidden_sizes=(8,), lstm_size=16, shared_lstm=shared_lstm)
    B = batch_size(lead)
    for state in (None, random_state(n_layers, B, 16)):
        pi, v, next_state = model(*vector(lead), state)
        assert pi.shape == (*lead, 2) and v.shape == lead
        torch.testing.assert_close(pi.sum(-1), torch.ones(lead))
        assert next_state.h.shape == next_state.c.shape == (n_layers, B, 16)


def test_first_categorical_policy_is_near_uniform_and_towers_are_separate():
    torch.manual_seed(0)
    model = CategoricalPgLstmModel((3,), action_size=2)
    pi, v, _ = model(*vector((4, 5)))
    assert (pi - 0.5).abs().max() < 0.05
    v.sum().backward()  # the value's gradient does not reach the policy's tower
    assert all(p.grad is None for p in model.pi.parameters())
    assert any(p.grad is not None for p in model.v.parameters())


def test_categorical_lstm_model_can_put_its_mlp_after_the_lstm_and_skip_the_previous_step():
    """sb3-contrib's layout: the LSTM reads the observation alone, an MLP sits between it and the heads."""
    torch.manual_seed(0)
    model = CategoricalPgLstmModel(
        (3,), 2, hidden_sizes=(), lstm_size=16, head_hidden_sizes=(8, 8), reads_prev_step=False
    )
    assert model.pi.lstm.input_size == 3 and model.v.lstm.input_size == 3
    assert [m.out_features for m in model.pi.head_mlp.modules() if isinstance(m, torch.nn.Linear)] == [8, 8]
    observation, action, reward = vector((5, 4))
    pi, v, state = model(observation, action, reward)
    other_pi, other_v, other_state = model(observation, 1 - action, reward + 3.0)
    torch.testing.assert_close((other_pi, other_v, other_state.h), (pi, v, state.h))  # no previous step read
    reading = CategoricalPgLstmModel((3,), 2, hidden_sizes=(), lstm_size=16)
    assert reading.pi.lstm.input_size == 3 + 2 + 1  # by default it reads the one-hot action and the reward


def test_categorical_lstm_model_standardises_observations_by_the_statistics_it_was_given():
    """With normalize_observation the outputs depend on observations only through their standardised
    values: an affine change of the observations, folded into the statistics, changes nothing."""
    torch.manual_seed(0)
    model = CategoricalPgLstmModel((3,), 2, hidden_sizes=(8,), lstm_size=16, normalize_observation=True)
    observation, action, reward = vector((6, 4))
    observation = observation * torch.tensor([0.01, 2.0, 0.2]) + 0.5
    model.update_obs_rms(observation)
    torch.testing.assert_close(model.obs_rms.mean, observation.reshape(-1, 3).mean(0))
    pi, v, _ = model(observation, action, reward)
    scaled = copy.deepcopy(model)
    scaled.obs_rms.count.zero_()
    scaled.update_obs_rms(observation * 10 - 3)
    scaled_pi, scaled_v, _ = scaled(observation * 10 - 3, action, reward)
    torch.testing.assert_close((scaled_pi, scaled_v), (pi, v), rtol=1e-4, atol=1e-5)
    plain = CategoricalPgLstmModel((3,), 2, hidden_sizes=(8,), lstm_size=16)
    plain.load_state_dict({k: p for k, p in model.state_dict().items() if not k.startswith("obs_rms")})
    plain_pi, _, _ = plain(observation * 10 - 3, action, reward)  # without statistics the scale shows
    assert (plain_pi - pi).abs().max() > 1e-3


MODELS = {
    "atari": (lambda: AtariLstmModel(IMAGE_SHAPE, output_size=6, fc_sizes=32, lstm_size=16), atari, 1),
    "mujoco": (
        lambda: MujocoLstmModel((3,), 2, hidden_sizes=[8], lstm_size=16),
        lambda lead: vector(lead, onehot=False),
        1,
    ),
    "categorical": (lambda: CategoricalPgLstmModel((3,), 2, hidden_sizes=(8,), lstm_size=16), vector, 2),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_one_call_over_a_sequence_equals_steps_that_carry_the_state(name):
    make_model, make_inputs, n_layers = MODELS[name]
    torch.manual_seed(0)
    model = make_model()
    T, B = 6, 3
    inputs = make_inputs((T, B))
    init = random_state(n_layers, B, 16)
    with torch.no_grad():
        *outputs, final = model(*inputs, init)
        state = init
        for t in range(T):
            *step_outputs, state = model(*(x[t] for x in inputs), state)
            for whole, part in zip(outputs, step_outputs):
                torch.testing.assert_close(whole[t], part, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(final.h, state.h, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(final.c, state.c, rtol=1e-5, atol=1e-6)


def test_the_state_changes_the_outputs_and_none_means_zeros():
    torch.manual_seed(0)
    model = CategoricalPgLstmModel((3,), 2, lstm_size=16)
    inputs = vector((4,))
    zeros = RnnState(h=torch.zeros(2, 4, 16), c=torch.zeros(2, 4, 16))
    with torch.no_grad():
        pi_none, v_none, _ = model(*inputs, None)
        pi_zero, v_zero, _ = model(*inputs, zeros)
        pi_rand, v_rand, _ = model(*inputs, random_state(2, 4, 16))
    torch.testing.assert_close(pi_none, pi_zero)
    torch.testing.assert_close(v_none, v_zero)
    assert not torch.allclose(v_none, v_rand)


def test_mujoco_lstm_model_standardizes_observations_with_its_running_statistics():
    torch.manual_seed(0)
    model = MujocoLstmModel((3,), 2, hidden_sizes=[8], lstm_size=16, normalize_observation=True)
    plain = MujocoLstmModel((3,), 2, hidden_sizes=[8], lstm_size=16)
    plain.load_state_dict(model.state_dict(), strict=False)  # the same weights, without the statistics
    observation, action, reward = vector((4, 2), onehot=False)
    model.update_obs_rms(observation * 100 + 50)
    assert model.obs_rms is not None
    mean, std = model.obs_rms.mean, model.obs_rms.var.sqrt()
    with torch.no_grad():
        normalized = model(observation * std + mean, action, reward)[:3]
        expected = plain(observation, action, reward)[:3]
        clipped = model(torch.full_like(observation, 1e9), action, reward)[:3]
        at_clip = plain(torch.full_like(observation, model.norm_obs_clip), action, reward)[:3]
    for got, want in [*zip(normalized, expected), *zip(clipped, at_clip)]:
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
