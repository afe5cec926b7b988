"""EnvStreams: per-env generators keyed by (seed, env rank), independent of the batch they sit in."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

from rlrun.utils.random_streams import EnvStreams


def draws(streams: EnvStreams, n_steps: int, n: int = 3) -> np.ndarray:
    """``[n_steps, B, n]`` draws, copied out of the reused buffer."""
    return np.stack([streams.uniform(n).numpy().copy() for _ in range(n_steps)])


def test_an_env_draws_the_same_numbers_whatever_envs_share_its_batch():
    alone = draws(EnvStreams(seed=5, env_ranks=[3]), 20)[:, 0]
    in_four = draws(EnvStreams(seed=5, env_ranks=[0, 1, 2, 3]), 20)[:, 3]
    in_eight_reordered = draws(EnvStreams(seed=5, env_ranks=[7, 3, 6, 5, 4, 2, 1, 0]), 20)[:, 1]
    np.testing.assert_array_equal(alone, in_four)
    np.testing.assert_array_equal(alone, in_eight_reordered)


def test_different_ranks_seeds_and_domains_give_unrelated_streams():
    base = draws(EnvStreams(seed=5, env_ranks=[0, 1]), 200, n=1).reshape(200, 2)
    other_seed = draws(EnvStreams(seed=6, env_ranks=[0]), 200, n=1).reshape(200)
    other_domain = draws(EnvStreams(seed=5, env_ranks=[0], domain=1), 200, n=1).reshape(200)
    for a, b in [(base[:, 0], base[:, 1]), (base[:, 0], other_seed), (base[:, 0], other_domain)]:
        assert not np.any(a == b)
        assert abs(np.corrcoef(a, b)[0, 1]) < 0.25  # 200 pairs: |r| of independent draws is ~0.07


def test_uniforms_lie_in_unit_interval_and_are_uniform():
    u = draws(EnvStreams(seed=0, env_ranks=range(16)), 500, n=2).reshape(-1)
    assert u.min() >= 0 and u.max() < 1
    counts = np.histogram(u, bins=10, range=(0, 1))[0]
    expected = u.size / 10
    chi2 = np.sum((counts - expected) ** 2 / expected)
    assert chi2 < 27.9  # the 0.999 quantile of chi-square with 9 degrees of freedom


def test_drawing_n_at_once_continues_the_same_stream_as_drawing_one_by_one():
    together = EnvStreams(seed=1, env_ranks=[2]).uniform(4).numpy().copy()
    single = EnvStreams(seed=1, env_ranks=[2])
    one_by_one = np.concatenate([single.uniform(1).numpy().copy() for _ in range(4)], axis=1)
    np.testing.assert_array_equal(together, one_by_one)


@pytest.mark.parametrize("block", [1, 5, 64])
def test_draws_read_from_the_block_are_each_generators_own_sequence_across_refills(block):
    # Each env's numbers are those of a PCG64 keyed (seed, domain, rank, epoch) drawn one by one, whatever
    # the block size and however the calls' n cross its boundaries; a restart drops what was pre-drawn.
    streams = EnvStreams(seed=7, env_ranks=[4, 0], domain=2, block=block)
    sizes = [1, 1, 3, 1, 7, 12, 1, 1, 2, 30, 1]
    got = np.concatenate([streams.uniform(n).numpy().copy() for n in sizes], axis=1)
    for b, rank in enumerate([4, 0]):
        expected = np.random.Generator(np.random.PCG64([7, 2, rank, 0])).random(sum(sizes))
        np.testing.assert_array_equal(got[b], expected)
    streams.uniform(1)
    streams.restart(epoch=3)
    after = np.concatenate([streams.uniform(1).numpy().copy() for _ in range(block + 2)], axis=1)
    np.testing.assert_array_equal(after[1], np.random.Generator(np.random.PCG64([7, 2, 0, 3])).random(block + 2))
    with pytest.raises(ValueError, match="block must be at least 1"):
        EnvStreams(seed=0, env_ranks=[0], block=0)


def test_restart_repeats_an_epoch_and_changes_with_the_epoch():
    streams = EnvStreams(seed=3, env_ranks=[0, 1])
    first = draws(streams, 5)
    streams.restart(epoch=0)
    np.testing.assert_array_equal(draws(streams, 5), first)
    streams.restart(epoch=1)
    second = draws(streams, 5)
    assert not np.any(second == first)
    np.testing.assert_array_equal(second[:, 1], draws(EnvStreams(seed=3, env_ranks=[1], epoch=1), 5)[:, 0])


@pytest.mark.parametrize("copy_fn", [lambda s: pickle.loads(pickle.dumps(s)), copy.deepcopy])
def test_a_pickled_or_copied_stream_continues_where_the_original_was(copy_fn):
    original = EnvStreams(seed=4, env_ranks=[0, 5], block=8)
    draws(original, 3)
    original.uniform(1)  # mid-block
    clone = copy_fn(original)
    np.testing.assert_array_equal(draws(clone, 4), draws(original, 4))
    np.testing.assert_array_equal(
        np.stack([clone.uniform(1).numpy().copy() for _ in range(20)]),
        np.stack([original.uniform(1).numpy().copy() for _ in range(20)]),
    )


def test_a_stream_pickled_before_the_block_existed_continues_at_its_generators_next_draw():
    # Checkpoints written before the pre-drawn block hold the generators alone, each at its next draw.
    streams = EnvStreams(seed=2, env_ranks=[3, 1])
    state = {k: streams.__dict__[k] for k in ("seed", "env_ranks", "domain", "epoch")}
    generators = [np.random.Generator(np.random.PCG64([2, 0, rank, 0])) for rank in (3, 1)]
    for generator in generators:
        generator.random(5)  # five draws made before the checkpoint
    state["_generators"] = generators
    old = EnvStreams.__new__(EnvStreams)
    old.__setstate__(state)
    expected = np.random.Generator(np.random.PCG64([2, 0, 1, 0])).random(5 + 70)[5:]
    np.testing.assert_array_equal(np.concatenate([old.uniform(1).numpy()[1].copy() for _ in range(70)]), expected)


def test_uniform_returns_a_float64_torch_view_of_shape_b_by_n():
    streams = EnvStreams(seed=0, env_ranks=[4, 9, 1])
    u = streams.uniform(5)
    assert isinstance(u, torch.Tensor) and u.dtype == torch.float64 and u.shape == (3, 5)
    assert streams.uniform(1).shape == (3, 1)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(seed=-1, env_ranks=[0]), "seed must be a non-negative integer"),
        (dict(seed=None, env_ranks=[0]), "seed must be a non-negative integer"),
        (dict(seed=0, env_ranks=[0, -2]), "env rank must be a non-negative integer"),
        (dict(seed=0, env_ranks=[1, 2, 1]), "repeat a rank"),
    ],
)
def test_bad_seeds_and_ranks_are_refused_with_the_cause(kwargs, match):
    with pytest.raises(ValueError, match=match):
        EnvStreams(**kwargs)
