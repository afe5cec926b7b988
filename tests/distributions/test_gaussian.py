import math

import pytest
import torch
from torch.distributions import AffineTransform, Normal, TanhTransform, TransformedDistribution, kl_divergence

from rlrun.distributions.gaussian import DistInfo, DistInfoStd, Gaussian


def info(*lead, dim=3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return DistInfoStd(
        mean=torch.randn(*lead, dim, generator=gen), log_std=0.5 * torch.randn(*lead, dim, generator=gen)
    )


def torch_normal(d):
    return Normal(d.mean, d.log_std.exp())


def test_log_likelihood_matches_torch():
    d = info(4, 5)
    x = torch.randn(4, 5, 3)
    torch.testing.assert_close(Gaussian(3).log_likelihood(x, d), torch_normal(d).log_prob(x).sum(-1))


def test_entropy_matches_torch():
    d = info(6)
    torch.testing.assert_close(Gaussian(3).entropy(d), torch_normal(d).entropy().sum(-1))


def test_kl_matches_torch():
    old, new = info(2, 6, seed=1), info(2, 6, seed=2)
    expected = kl_divergence(torch_normal(old), torch_normal(new)).sum(-1)
    torch.testing.assert_close(Gaussian(3).kl(old, new), expected)
    torch.testing.assert_close(Gaussian(3).mean_kl(old, new), expected.mean())


def test_likelihood_ratio_matches_torch():
    old, new = info(5, seed=3), info(5, seed=4)
    x = torch.randn(5, 3)
    expected = (torch_normal(new).log_prob(x).sum(-1) - torch_normal(old).log_prob(x).sum(-1)).exp()
    torch.testing.assert_close(Gaussian(3).likelihood_ratio(x, old, new), expected)


def test_fixed_std_ignores_log_std_and_broadcasts_over_dims():
    mean = torch.randn(4, 3)
    dist = Gaussian(3, std=0.3)
    reference = Normal(mean, torch.full_like(mean, 0.3))
    x = torch.randn(4, 3)
    torch.testing.assert_close(dist.log_likelihood(x, DistInfo(mean)), reference.log_prob(x).sum(-1))
    torch.testing.assert_close(dist.entropy(DistInfo(mean)), reference.entropy().sum(-1))
    other = torch.randn(4, 3)
    expected_kl = kl_divergence(reference, Normal(other, torch.full_like(other, 0.3))).sum(-1)
    torch.testing.assert_close(dist.kl(DistInfo(mean), DistInfo(other)), expected_kl)


def test_min_and_max_std_bound_a_learned_std_in_the_formulas():
    mean = torch.zeros(2, 1)
    d = DistInfoStd(mean=mean, log_std=torch.tensor([[-10.0], [10.0]]))
    dist = Gaussian(1, min_std=0.1, max_std=2.0)
    expected = Normal(mean, torch.tensor([[0.1], [2.0]])).entropy().sum(-1)
    torch.testing.assert_close(dist.entropy(d), expected)


def test_sample_statistics_follow_mean_and_std():
    torch.manual_seed(0)
    n = 50000
    d = DistInfoStd(
        mean=torch.tensor([1.0, -2.0]).expand(n, 2), log_std=torch.tensor([0.0, math.log(0.5)]).expand(n, 2)
    )
    samples = Gaussian(2).sample(d)
    torch.testing.assert_close(samples.mean(0), torch.tensor([1.0, -2.0]), atol=0.02, rtol=0)
    torch.testing.assert_close(samples.std(0), torch.tensor([1.0, 0.5]), atol=0.02, rtol=0)


def test_sample_is_reparameterised():
    mean = torch.zeros(4, 2, requires_grad=True)
    Gaussian(2, std=1.0).sample(DistInfo(mean)).sum().backward()
    torch.testing.assert_close(mean.grad, torch.ones(4, 2))


def test_clip_bounds_samples_and_noise_clip_bounds_noise():
    n = 1000
    d = DistInfoStd(mean=torch.zeros(n, 2), log_std=torch.full((n, 2), 2.0))
    assert Gaussian(2, clip=1.0).sample(d).abs().max() <= 1.0
    d = DistInfoStd(mean=torch.full((n, 2), 5.0), log_std=torch.full((n, 2), 2.0))
    assert ((Gaussian(2, noise_clip=0.5).sample(d) - 5.0).abs() <= 0.5 + 1e-6).all()


@pytest.mark.parametrize("squash", [1.0, 2.5])
def test_squashed_log_likelihood_matches_torch_tanh_transform(squash):
    d = info(7, dim=2)
    reference = TransformedDistribution(
        Normal(d.mean, d.log_std.exp()), [TanhTransform(), AffineTransform(0.0, squash)]
    )
    raw = torch.randn(7, 2)
    squashed = squash * torch.tanh(raw)
    dist = Gaussian(2, squash=squash)
    torch.testing.assert_close(dist.log_likelihood(raw, d), reference.log_prob(squashed).sum(-1), atol=1e-4, rtol=1e-4)


def test_sample_loglikelihood_returns_squashed_sample_and_its_density():
    torch.manual_seed(1)
    d = info(5, dim=2)
    dist = Gaussian(2, squash=1.0)
    sample, logli = dist.sample_loglikelihood(d)
    assert sample.abs().max() < 1
    reference = TransformedDistribution(Normal(d.mean, d.log_std.exp()), [TanhTransform()])
    torch.testing.assert_close(logli, reference.log_prob(sample).sum(-1), atol=1e-3, rtol=1e-3)
    assert dist.squash == 1.0


def test_squash_has_no_entropy_or_kl():
    d = info(2)
    with pytest.raises(NotImplementedError, match="squash"):
        Gaussian(3, squash=1.0).entropy(d)
    with pytest.raises(NotImplementedError, match="squash"):
        Gaussian(3, squash=1.0).kl(d, d)


def test_clip_and_squash_together_are_refused():
    with pytest.raises(ValueError, match="clip or squash"):
        Gaussian(2, clip=1.0, squash=1.0)
    dist = Gaussian(2, clip=1.0)
    with pytest.raises(ValueError, match="set_clip\\(None\\)"):
        dist.set_squash(1.0)


def test_std_of_the_wrong_size_or_sign_is_refused():
    with pytest.raises(ValueError, match="1 or 3 values"):
        Gaussian(3, std=[0.1, 0.2])
    with pytest.raises(ValueError, match=">= 0"):
        Gaussian(3, std=-0.1)


def test_zero_std_samples_the_squashed_mean_as_rlpyt_did_for_deterministic_acting():
    mean = torch.tensor([[0.3, -2.0], [1.5, 0.0]])
    dist = Gaussian(2, squash=2.0)
    dist.set_std(0.0)
    dist_info = DistInfoStd(mean=mean, log_std=torch.zeros_like(mean))
    assert torch.equal(dist.sample(dist_info), 2.0 * torch.tanh(mean))
    assert torch.equal(dist.sample(dist_info, uniform=torch.rand(2, 2)), 2.0 * torch.tanh(mean))


def test_sample_refuses_a_mean_of_the_wrong_size():
    with pytest.raises(ValueError, match="action dim"):
        Gaussian(2).sample(info(4, dim=3))
