import numpy as np
import pytest
import torch

from rlrun.distributions.epsilon_greedy import CategoricalEpsilonGreedy, EpsilonGreedy


def test_epsilon_zero_takes_the_argmax():
    q = torch.randn(2, 50, 4)
    dist = EpsilonGreedy(dim=4, epsilon=0.0)
    action = dist.sample(q)
    assert action.dtype == torch.long
    torch.testing.assert_close(action, q.argmax(-1))


def test_epsilon_one_is_uniform():
    torch.manual_seed(0)
    q = torch.tensor([10.0, 0.0, 0.0, 0.0]).expand(20000, 4)
    action = EpsilonGreedy(dim=4, epsilon=1.0).sample(q)
    freq = torch.bincount(action, minlength=4).float() / len(action)
    torch.testing.assert_close(freq, torch.full((4,), 0.25), atol=0.015, rtol=0)


def test_greedy_action_frequency_is_one_minus_epsilon_plus_its_random_share():
    torch.manual_seed(0)
    eps = 0.2
    q = torch.tensor([0.0, 3.0]).expand(20000, 2)
    action = EpsilonGreedy(dim=2, epsilon=eps).sample(q)
    assert abs((action == 1).float().mean().item() - (1 - eps + eps / 2)) < 0.015


def test_vector_epsilon_applies_per_env_along_the_b_dim():
    torch.manual_seed(0)
    B, T = 3, 5000
    eps = torch.tensor([0.0, 0.5, 1.0])
    dist = EpsilonGreedy(dim=2)
    dist.set_epsilon(eps)
    q = torch.tensor([1.0, 0.0]).expand(T, B, 2)
    non_greedy = (dist.sample(q) == 1).float().mean(0)  # random picks action 1 half of the time
    torch.testing.assert_close(non_greedy, eps / 2, atol=0.025, rtol=0)
    assert dist.sample(q[0]).shape == (B,)


def test_epsilon_accepts_numpy_vectors_and_one_element_tensors():
    dist = EpsilonGreedy(dim=2)
    dist.set_epsilon(np.array([0.1, 0.2]))
    torch.testing.assert_close(dist.epsilon, torch.tensor([0.1, 0.2]))
    dist.set_epsilon(torch.tensor([0.3]))
    assert dist.epsilon == pytest.approx(0.3)


def test_vector_epsilon_of_the_wrong_length_is_refused():
    dist = EpsilonGreedy(dim=2)
    dist.set_epsilon(torch.tensor([0.1, 0.2, 0.3]))
    with pytest.raises(ValueError, match="one epsilon per env"):
        dist.sample(torch.randn(4, 2))


@pytest.mark.parametrize("eps", [-0.1, 1.5, torch.tensor([0.5, 2.0])])
def test_epsilon_outside_0_1_is_refused(eps):
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        EpsilonGreedy(dim=2).set_epsilon(eps)


def test_categorical_epsilon_greedy_takes_argmax_of_expected_value():
    z = torch.tensor([-1.0, 0.0, 1.0])
    p = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], [[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]]])
    dist = CategoricalEpsilonGreedy(dim=2, z=z, epsilon=0.0)
    torch.testing.assert_close(dist.sample(p), torch.tensor([1, 0]))


def test_categorical_epsilon_greedy_without_atoms_says_how_to_fix():
    with pytest.raises(ValueError, match="set_z"):
        CategoricalEpsilonGreedy(dim=2).sample(torch.rand(1, 2, 3))


def test_rlpyt_signature_epsilon_first_and_dim_from_the_q_values():
    dist = EpsilonGreedy(0.0)  # rlpyt: EpsilonGreedy(epsilon=1, **kwargs)
    q = torch.tensor([[0.0, 3.0, 1.0], [2.0, 0.0, 1.0]])
    assert dist.sample(q).tolist() == [1, 0]
    explore = EpsilonGreedy(1.0).sample(q.repeat(500, 1))
    assert set(explore.tolist()) == {0, 1, 2}  # random actions over the 3 actions q has
