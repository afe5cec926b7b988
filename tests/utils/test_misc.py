"""rlrun.utils.misc: minibatch indexes, numpy-or-torch allocation, ring-buffer sequence extraction."""

import numpy as np
import pytest
import torch

from rlrun.utils.misc import empty, extract_sequences, iterate_mb_idxs, zeros

pytestmark = pytest.mark.timeout(30)


def test_iterate_mb_idxs_yields_consecutive_slices_and_drops_the_remainder():
    batches = list(iterate_mb_idxs(10, 3))
    assert batches == [slice(0, 3), slice(3, 6), slice(6, 9)]
    data = np.arange(10)
    assert [data[b].tolist() for b in batches] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


def test_iterate_mb_idxs_shuffled_takes_disjoint_minibatches_of_one_permutation():
    batches = list(iterate_mb_idxs(10, 3, shuffle=True, rng=np.random.default_rng(0)))
    assert len(batches) == 3 and all(b.shape == (3,) for b in batches)
    taken = np.concatenate(batches)
    assert len(set(taken.tolist())) == 9 and taken.min() >= 0 and taken.max() < 10


def test_iterate_mb_idxs_shuffle_uses_numpys_global_generator_without_rng():
    np.random.seed(3)
    first = [b.tolist() for b in iterate_mb_idxs(8, 4, shuffle=True)]
    np.random.seed(3)
    again = [b.tolist() for b in iterate_mb_idxs(8, 4, shuffle=True)]
    assert first == again
    assert sorted(first[0] + first[1]) == list(range(8))


def test_iterate_mb_idxs_edge_cases():
    assert list(iterate_mb_idxs(2, 3)) == []
    assert list(iterate_mb_idxs(0, 1)) == []
    with pytest.raises(ValueError, match="minibatch_size"):
        list(iterate_mb_idxs(4, 0))


@pytest.mark.parametrize("fn", [zeros, empty])
def test_zeros_and_empty_pick_torch_or_numpy_by_dtype(fn):
    t = fn((2, 3), torch.float32)
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.shape == (2, 3)
    a = fn((2, 3), np.int16)
    assert isinstance(a, np.ndarray) and a.dtype == np.int16 and a.shape == (2, 3)
    assert isinstance(fn(4, np.dtype("float64")), np.ndarray)  # a numpy dtype equal to float stays numpy
    assert isinstance(fn(4, "uint8"), np.ndarray)
    assert isinstance(fn(4, float), torch.Tensor)  # torch takes Python's float, as rlpyt relied on


def test_zeros_are_zero():
    assert not zeros(5, torch.int64).any()
    assert not zeros((5,), np.float32).any()


def _ring():
    L, B = 6, 3
    return np.arange(L * B * 2).reshape(L, B, 2)  # [L, B, 2]


def test_extract_sequences_in_range():
    x = _ring()
    out = extract_sequences(x, [0, 2], [1, 2], 3)
    assert out.shape == (3, 2, 2)
    np.testing.assert_array_equal(out[:, 0], x[0:3, 1])
    np.testing.assert_array_equal(out[:, 1], x[2:5, 2])


def test_extract_sequences_wraps_past_the_end_and_before_the_start():
    x = _ring()
    out = extract_sequences(x, np.array([4, -1]), np.array([0, 1]), 3)
    np.testing.assert_array_equal(out[:, 0], x[[4, 5, 0], 0])
    np.testing.assert_array_equal(out[:, 1], x[[5, 0, 1], 1])


def test_extract_sequences_of_a_tensor_is_a_tensor_of_the_same_dtype():
    x = torch.from_numpy(_ring()).float()
    out = extract_sequences(x, torch.tensor([5]), torch.tensor([2]), 2)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    assert torch.equal(out[:, 0], x[[5, 0], 2])


def test_extract_sequences_returns_a_copy():
    x = _ring()
    out = extract_sequences(x, [0], [0], 2)
    out[:] = -1
    assert (x >= 0).all()


def test_extract_sequences_refuses_mismatched_indexes():
    with pytest.raises(ValueError, match="same length"):
        extract_sequences(_ring(), [0, 1], [0], 2)
