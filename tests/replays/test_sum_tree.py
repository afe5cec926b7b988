"""SumTree: draws in proportion to the values, updates in batches, and stays exact in float64."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlrun.replays.sum_tree import SumTree

pytestmark = pytest.mark.timeout(30)


def test_draws_are_proportional_to_the_values():
    rng = np.random.default_rng(0)
    tree = SumTree(6)  # not a power of two: two padding leaves that must never be drawn
    values = np.array([1.0, 0.0, 3.0, 6.0, 0.0, 10.0])
    tree.set(np.arange(6), values)
    assert tree.total == 20.0
    idxs, drawn = tree.sample(200_000, rng=rng)
    np.testing.assert_array_equal(drawn, values[idxs])
    freq = np.bincount(idxs, minlength=6) / len(idxs)
    expected = values / values.sum()
    # Binomial standard error at 200k draws is below 0.0012: 5 of them.
    np.testing.assert_allclose(freq, expected, atol=0.006)
    assert freq[1] == 0 and freq[4] == 0


def test_set_updates_sums_and_keeps_the_last_of_repeated_indexes():
    tree = SumTree(5)
    tree.set([0, 1, 2, 3, 4], [1.0, 2.0, 3.0, 4.0, 5.0])
    tree.set([2, 4, 2], [10.0, 0.0, 7.0])
    np.testing.assert_array_equal(tree.values, [1, 2, 7, 4, 0])
    assert tree.total == 14.0
    # find: cumulative masses land on the leaf that holds them; zero leaves are skipped.
    np.testing.assert_array_equal(
        tree.find(np.array([0.0, 0.999, 1.0, 2.999, 3.0, 9.999, 10.0, 13.999])), [0, 0, 1, 1, 2, 2, 3, 3]
    )
    with pytest.raises(ValueError, match="finite and non-negative"):
        tree.set([0], [np.nan])
    with pytest.raises(IndexError):
        tree.set([5], [1.0])


def test_many_updates_leave_the_tree_equal_to_one_built_from_scratch():
    rng = np.random.default_rng(1)
    size = 3000
    tree = SumTree(size)
    for _ in range(2000):  # small batches: the incremental path; every 10th a large one: the rebuild path
        m = 32 if _ % 10 else 1000
        idxs = rng.integers(0, size, m)
        # Values over 16 orders of magnitude, and zeros: what float32 or accumulated differences get wrong.
        values = np.where(rng.random(m) < 0.2, 0.0, 10.0 ** rng.uniform(-8, 8, m))
        tree.set(idxs, values)
    fresh = SumTree(size)
    fresh.values[:] = tree.values
    fresh.rebuild()
    np.testing.assert_array_equal(tree.tree, fresh.tree)  # bit for bit
    assert tree.total == pytest.approx(math.fsum(tree.values), rel=1e-12)


def test_draws_never_end_on_a_zero_leaf_even_at_rounding_boundaries():
    rng = np.random.default_rng(2)
    size = 1 << 12
    tree = SumTree(size)
    values = np.zeros(size)
    values[::3] = 10.0 ** rng.uniform(-12, 12, len(values[::3]))  # tiny values next to huge ones
    tree.set(np.arange(size), values)
    idxs, drawn = tree.sample(100_000, rng=rng)
    assert (drawn > 0).all()
    # Targets at and just below the total, where rounding can leave more mass than a right subtree holds,
    # over trees whose last leaves (and the padding after them) are zero.
    for _ in range(200):
        size = int(rng.integers(3, 200))
        values = np.where(rng.random(size) < 0.5, 0.0, 10.0 ** rng.uniform(-10, 10, size))
        values[-1] = 0.0
        if not values.any():
            continue
        tree = SumTree(size)
        tree.set(np.arange(size), values)
        below = np.nextafter(tree.total, 0) - np.abs(rng.normal(0, 1e-12, 20)) * tree.total
        leaves = tree.find(np.concatenate([below, [np.nextafter(tree.total, 0), tree.total]]))
        assert (leaves < size).all() and (tree.values[leaves] > 0).all()


def test_an_all_zero_tree_refuses_to_sample_and_a_single_leaf_tree_works():
    with pytest.raises(ValueError, match="all zero"):
        SumTree(4).sample(1)
    tree = SumTree(1)
    tree.set([0], [2.5])
    assert tree.total == 2.5 and tree.sample(3)[0].tolist() == [0, 0, 0]
