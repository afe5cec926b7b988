import pytest
import torch
from torch.distributions import Categorical as TorchCategorical
from torch.distributions import kl_divergence

from rlrun.distributions.categorical import Categorical, DistInfo


def random_probs(*shape, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(*shape, generator=gen), dim=-1)


def test_log_likelihood_matches_torch():
    p = random_probs(3, 5, 4)
    x = torch.randint(0, 4, (3, 5))
    dist = Categorical(dim=4)
    torch.testing.assert_close(dist.log_likelihood(x, DistInfo(p)), TorchCategorical(probs=p).log_prob(x))


def test_entropy_and_perplexity_match_torch():
    p = random_probs(6, 4)
    dist = Categorical(dim=4)
    expected = TorchCategorical(probs=p).entropy()
    torch.testing.assert_close(dist.entropy(DistInfo(p)), expected)
    torch.testing.assert_close(dist.perplexity(DistInfo(p)), expected.exp())
    torch.testing.assert_close(dist.mean_entropy(DistInfo(p)), expected.mean())


def test_kl_matches_torch():
    p, q = random_probs(2, 6, 4, seed=1), random_probs(2, 6, 4, seed=2)
    dist = Categorical(dim=4)
    expected = kl_divergence(TorchCategorical(probs=p), TorchCategorical(probs=q))
    torch.testing.assert_close(dist.kl(DistInfo(p), DistInfo(q)), expected, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(dist.mean_kl(DistInfo(p), DistInfo(q)), expected.mean(), atol=1e-6, rtol=1e-5)


def test_mean_kl_averages_only_valid_entries():
    p, q = random_probs(4, 3, seed=3), random_probs(4, 3, seed=4)
    dist = Categorical(dim=3)
    valid = torch.tensor([1.0, 0.0, 1.0, 0.0])
    kl = dist.kl(DistInfo(p), DistInfo(q))
    torch.testing.assert_close(dist.mean_kl(DistInfo(p), DistInfo(q), valid), (kl[0] + kl[2]) / 2)


def test_likelihood_ratio_matches_probability_ratio_and_carries_grad():
    old = random_probs(5, 3, seed=5)
    logits = torch.randn(5, 3, requires_grad=True)
    new = torch.softmax(logits, -1)
    x = torch.randint(0, 3, (5,))
    ratio = Categorical(dim=3).likelihood_ratio(x, DistInfo(old), DistInfo(new))
    expected = (TorchCategorical(probs=new).log_prob(x) - TorchCategorical(probs=old).log_prob(x)).exp()
    torch.testing.assert_close(ratio, expected)
    ratio.sum().backward()
    assert logits.grad is not None and logits.grad.abs().sum() > 0


def test_sample_frequencies_follow_the_probabilities():
    torch.manual_seed(0)
    p = torch.tensor([0.1, 0.6, 0.3])
    n = 20000
    samples = Categorical(dim=3).sample(DistInfo(p.expand(n, 3)))
    assert samples.shape == (n,) and samples.dtype == torch.long
    freq = torch.bincount(samples, minlength=3).float() / n
    torch.testing.assert_close(freq, p, atol=0.015, rtol=0)


def test_sample_keeps_leading_dims():
    assert Categorical(dim=4).sample(DistInfo(random_probs(3, 2, 4))).shape == (3, 2)
    assert Categorical(dim=4).sample(DistInfo(random_probs(4))).shape == ()


def test_sample_refuses_probabilities_of_the_wrong_size():
    with pytest.raises(ValueError, match="number of actions"):
        Categorical(dim=3).sample(DistInfo(random_probs(2, 4)))


def test_onehot_round_trip():
    dist = Categorical(dim=5)
    idx = torch.tensor([[0, 4], [2, 1]])
    onehot = dist.to_onehot(idx)
    assert onehot.shape == (2, 2, 5) and onehot.dtype == torch.float32
    torch.testing.assert_close(dist.from_onehot(onehot), idx)
