import pytest
import torch

from rlrun.agents.dqn.epsilon_greedy import linear_epsilon, log_spaced_epsilons


@pytest.mark.parametrize(
    "itr,expected", [(0, 1.0), (10, 1.0), (12, 0.82), (15, 0.55), (19, 0.19), (20, 0.1), (1000, 0.1)]
)
def test_linear_epsilon_at_and_between_the_boundaries(itr, expected):
    assert linear_epsilon(itr, 10, 20, 1.0, 0.1) == pytest.approx(expected)


def test_linear_epsilon_with_equal_itrs_steps_at_once():
    assert linear_epsilon(4, 5, 5, 1.0, 0.1) == 1.0
    assert linear_epsilon(5, 5, 5, 1.0, 0.1) == pytest.approx(0.1)


def test_linear_epsilon_is_elementwise_for_vectors():
    final = torch.tensor([0.1, 0.01])
    torch.testing.assert_close(linear_epsilon(15, 10, 20, torch.ones(2), final), (1 + final) / 2)


def test_log_spaced_epsilons_run_from_min_to_final_evenly_in_log():
    eps = log_spaced_epsilons(3, 0.001, 0.1)
    torch.testing.assert_close(eps, torch.tensor([0.001, 0.01, 0.1]))


def test_log_spaced_epsilons_need_positive_values():
    with pytest.raises(ValueError, match="positive"):
        log_spaced_epsilons(3, 0.0, 0.1)
