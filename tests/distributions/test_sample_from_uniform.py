"""Sampling from given uniforms: a deterministic, checkable map (what per-env random streams feed)."""

from __future__ import annotations

import math

import pytest
import torch

from rlrun.distributions.categorical import Categorical, DistInfo
from rlrun.distributions.epsilon_greedy import CategoricalEpsilonGreedy, EpsilonGreedy
from rlrun.distributions.gaussian import DistInfoStd, Gaussian

TOP = 1 - 2.0**-53  # the largest float64 uniform in [0, 1)


def test_categorical_inverts_the_cdf_and_never_picks_zero_probability_actions():
    prob = torch.tensor([0.25, 0.0, 0.5, 0.25])
    uniform = torch.tensor([0.0, 0.2499, 0.25, 0.7499, 0.75, TOP], dtype=torch.float64)
    action = Categorical(dim=4).sample(DistInfo(prob.expand(6, 4)), uniform=uniform[:, None])
    assert action.tolist() == [0, 0, 2, 2, 3, 3]
    assert action.dtype == torch.long


def test_categorical_top_uniform_skips_a_zero_probability_last_action():
    prob = torch.tensor([[0.5, 0.5, 0.0], [0.3, 0.3, 0.3]])  # the second row sums to 0.9
    action = Categorical(dim=3).sample(DistInfo(prob), uniform=torch.full((2, 1), TOP, dtype=torch.float64))
    assert action.tolist() == [1, 2]


def test_categorical_frequencies_from_uniforms_match_the_probabilities():
    prob = torch.tensor([0.1, 0.6, 0.3])
    n = 20_000
    uniform = torch.rand(n, 1, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    action = Categorical(dim=3).sample(DistInfo(prob.expand(n, 3)), uniform=uniform)
    frequency = torch.bincount(action, minlength=3).double() / n
    torch.testing.assert_close(frequency, prob.double(), atol=0.015, rtol=0)


def test_categorical_numpy_path_and_torch_path_choose_the_same_actions():
    # float32 on the CPU goes through numpy; float16 takes the torch path that CUDA tensors take. float16
    # values are exact in float32, so both paths see the same float64 CDF and must agree everywhere.
    gen = torch.Generator().manual_seed(3)
    prob16 = torch.softmax(torch.randn(500, 7, generator=gen), dim=-1).half()
    prob16[::5, 2] = 0  # zero-probability actions, and rows that no longer sum to 1
    uniform = torch.rand(500, 1, generator=gen, dtype=torch.float64)
    uniform[::7] = TOP
    dist = Categorical(dim=7)
    from_torch = dist.sample(DistInfo(prob16), uniform=uniform)
    from_numpy = dist.sample(DistInfo(prob16.float()), uniform=uniform)
    assert torch.equal(from_torch, from_numpy) and from_numpy.dtype == from_torch.dtype == torch.long
    assert not (from_numpy[::5] == 2).any()
    single = dist.sample(DistInfo(prob16[0].float()), uniform=uniform[0])  # one env: a 0-d action
    assert single.shape == () and single.item() == from_numpy[0].item()
    with pytest.raises(ValueError, match="diverged"):
        dist.sample(DistInfo(torch.zeros(2, 7, dtype=torch.float16)), uniform=torch.zeros(2, 1))


@pytest.mark.parametrize("batch, dim", [(1, 2), (8, 2), (16, 6), (32, 8)])
def test_categorical_python_path_for_small_batches_matches_the_numpy_path(monkeypatch, batch, dim):
    # Up to _PYTHON_MAX_SIZE probabilities the CDF is inverted in plain Python; it must pick exactly the
    # actions the numpy path picks, zero-probability actions and the top uniform included.
    import rlrun.distributions.categorical as categorical

    gen = torch.Generator().manual_seed(batch * dim)
    dist = Categorical(dim=dim)
    for trial in range(50):
        prob = torch.softmax(3 * torch.randn(batch, dim, generator=gen), dim=-1)
        prob[trial % batch, trial % dim] = 0
        uniform = torch.rand(batch, 1, generator=gen, dtype=torch.float64)
        uniform[(trial + 1) % batch] = TOP
        assert prob.numel() <= categorical._PYTHON_MAX_SIZE
        small = dist.sample(DistInfo(prob), uniform=uniform)
        monkeypatch.setattr(categorical, "_PYTHON_MAX_SIZE", 0)
        large = dist.sample(DistInfo(prob), uniform=uniform)
        monkeypatch.undo()
        assert torch.equal(small, large) and small.dtype == large.dtype == torch.long
        assert (prob.gather(-1, small[:, None]) > 0).all()
    single = dist.sample(DistInfo(prob[0]), uniform=uniform[0])  # one env: a 0-d action, as numpy gives
    assert single.shape == () and single.item() == small[0].item()
    leading = dist.sample(DistInfo(prob.reshape(1, batch, dim)), uniform=uniform.reshape(1, batch, 1))
    assert leading.shape == (1, batch) and torch.equal(leading[0], small)


def test_categorical_rejects_nan_probabilities_and_wrong_uniform_shapes():
    dist = Categorical(dim=2)
    with pytest.raises(ValueError, match="diverged"):
        dist.sample(DistInfo(torch.tensor([[0.5, 0.5], [math.nan, math.nan]])), uniform=torch.zeros(2, 1))
    with pytest.raises(ValueError, match="diverged"):
        dist.sample(DistInfo(torch.zeros(2, 2)), uniform=torch.zeros(2, 1))
    with pytest.raises(ValueError, match="diverged"):  # the numpy path, above the Python path's size
        dist.sample(DistInfo(torch.full((200, 2), math.nan)), uniform=torch.zeros(200, 1))
    with pytest.raises(ValueError, match=r"needs \(2, 1\)"):
        dist.sample(DistInfo(torch.full((2, 2), 0.5)), uniform=torch.zeros(3, 1))


def test_gaussian_noise_is_the_inverse_normal_cdf_of_the_uniform():
    mean = torch.tensor([[1.0, -2.0], [0.0, 0.5]])
    log_std = torch.log(torch.tensor([[2.0, 0.5], [1.0, 3.0]]))
    phi_of_one = 0.5 * (1 + math.erf(1 / math.sqrt(2)))  # P(N(0, 1) < 1)
    uniform = torch.tensor([[0.5, phi_of_one], [1 - phi_of_one, 0.5]], dtype=torch.float64)
    sample = Gaussian(dim=2).sample(DistInfoStd(mean, log_std), uniform=uniform)
    torch.testing.assert_close(sample, torch.tensor([[1.0, -1.5], [-1.0, 0.5]]))


def test_gaussian_extreme_uniforms_give_finite_symmetric_noise():
    uniform = torch.tensor([[0.0], [TOP]], dtype=torch.float64)
    sample = Gaussian(dim=1).sample(DistInfoStd(torch.zeros(2, 1), torch.zeros(2, 1)), uniform=uniform)
    assert torch.isfinite(sample).all()
    torch.testing.assert_close(sample[0], -sample[1])
    assert 8 < sample[1].item() < 8.5


def test_gaussian_clip_and_squash_apply_to_noise_from_uniforms():
    info = DistInfoStd(torch.zeros(1, 1), torch.zeros(1, 1))
    high = torch.tensor([[0.999]], dtype=torch.float64)  # about 3.09 std
    assert Gaussian(dim=1, clip=1.0).sample(info, uniform=high).item() == 1.0
    squashed = Gaussian(dim=1, squash=2.0).sample(info, uniform=high).item()
    assert squashed == pytest.approx(2 * math.tanh(3.0902), abs=1e-3)


def test_epsilon_greedy_explores_where_the_first_uniform_is_below_epsilon():
    q = torch.tensor([[0.0, 5.0, 1.0]]).expand(4, 3)
    uniform = torch.tensor([[0.05, 0.0], [0.05, TOP], [0.5, 0.0], [0.09, 0.4]], dtype=torch.float64)
    action = EpsilonGreedy(dim=3, epsilon=0.1).sample(q, uniform=uniform)
    assert action.tolist() == [0, 2, 1, 1]


def test_epsilon_greedy_with_one_epsilon_per_env_reads_the_coin_of_each_row():
    q = torch.tensor([[0.0, 5.0, 1.0]]).expand(3, 3)
    uniform = torch.tensor([[0.3, 0.0], [0.3, 0.0], [0.3, 0.0]], dtype=torch.float64)
    action = EpsilonGreedy(dim=3, epsilon=torch.tensor([0.1, 0.5, 0.2])).sample(q, uniform=uniform)
    assert action.tolist() == [1, 0, 1]


def test_categorical_epsilon_greedy_passes_uniforms_through():
    z = torch.tensor([0.0, 1.0])
    p = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]])  # action 1 has the larger mean
    dist = CategoricalEpsilonGreedy(dim=2, z=z, epsilon=0.5)
    uniform = torch.tensor([[0.9, 0.0], [0.1, 0.0]], dtype=torch.float64)
    assert dist.sample(p, uniform=uniform).tolist() == [1, 0]
