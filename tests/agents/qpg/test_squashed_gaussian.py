"""SAC's tanh-squashed Gaussian: rlrun's log-likelihood (taking the pre-squash sample) equals
torch.distributions' TransformedDistribution(Normal, TanhTransform) evaluated at the squashed action."""

import math

import pytest
import torch
from torch.distributions import AffineTransform, Independent, Normal, TanhTransform, TransformedDistribution

from rlrun.agents.qpg.sac_agent import MAX_LOG_STD, MIN_LOG_STD
from rlrun.distributions.gaussian import DistInfoStd, Gaussian


def torch_squashed(mean, log_std, squash):
    transforms = [TanhTransform()]
    if squash != 1:
        transforms.append(AffineTransform(0.0, squash))
    return TransformedDistribution(Independent(Normal(mean, log_std.exp()), 1), transforms)


@pytest.mark.parametrize("squash", [1.0, 2.0])
def test_log_likelihood_matches_torch_transformed_distribution(squash):
    torch.manual_seed(0)
    mean = torch.randn(64, 3, dtype=torch.float64)
    log_std = torch.randn(64, 3, dtype=torch.float64) * 0.5
    u = mean + log_std.exp() * torch.randn(64, 3, dtype=torch.float64)
    u = u.clamp(-4, 4)  # keep tanh away from +-1, where torch's inverse loses precision
    ours = Gaussian(dim=3, squash=squash).log_likelihood(u, DistInfoStd(mean=mean, log_std=log_std))
    reference = torch_squashed(mean, log_std, squash).log_prob(squash * torch.tanh(u))
    torch.testing.assert_close(ours, reference, rtol=1e-9, atol=1e-9)


def test_sample_loglikelihood_is_reparameterised_and_consistent():
    torch.manual_seed(1)
    mean = torch.zeros(1000, 2, requires_grad=True)
    log_std = torch.full((1000, 2), -0.5, requires_grad=True)
    dist = Gaussian(dim=2, squash=1.0, min_std=math.exp(MIN_LOG_STD), max_std=math.exp(MAX_LOG_STD))
    action, log_pi = dist.sample_loglikelihood(DistInfoStd(mean=mean, log_std=log_std))
    assert action.abs().max() < 1
    reference = torch_squashed(mean.detach().double(), log_std.detach().double(), 1.0).log_prob(
        action.detach().double()
    )
    torch.testing.assert_close(log_pi.detach().double(), reference, rtol=1e-4, atol=1e-4)
    (action.sum() + log_pi.sum()).backward()
    assert mean.grad is not None and log_std.grad is not None and log_std.grad.abs().sum() > 0


def test_log_std_is_bounded_as_sac_agent_bounds_it():
    dist = Gaussian(dim=1, squash=1.0, min_std=math.exp(MIN_LOG_STD), max_std=math.exp(MAX_LOG_STD))
    u = torch.tensor([[0.3]])
    high = dist.log_likelihood(u, DistInfoStd(mean=torch.zeros(1, 1), log_std=torch.full((1, 1), 10.0)))
    at_max = dist.log_likelihood(u, DistInfoStd(mean=torch.zeros(1, 1), log_std=torch.full((1, 1), float(MAX_LOG_STD))))
    torch.testing.assert_close(high, at_max)
