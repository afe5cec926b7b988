"""Action distributions: each turns a ``dist_info`` namedarraytuple into samples, likelihoods, KLs."""

from rlrun.distributions.base import Distribution
from rlrun.distributions.categorical import Categorical, DistInfo
from rlrun.distributions.epsilon_greedy import CategoricalEpsilonGreedy, EpsilonGreedy
from rlrun.distributions.gaussian import DistInfoStd, Gaussian

__all__ = [
    "Distribution",
    "Categorical",
    "DistInfo",
    "Gaussian",
    "DistInfoStd",
    "EpsilonGreedy",
    "CategoricalEpsilonGreedy",
]
