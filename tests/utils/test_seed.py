"""Seeding of random, numpy and torch (rlrun.utils.seed)."""

from __future__ import annotations

import random

import numpy as np
import torch

from rlrun.utils.seed import get_seed, make_seed, set_envs_seeds, set_seed


def draw() -> tuple:
    return random.random(), float(np.random.rand()), float(torch.rand(1))


def test_set_seed_reproduces_random_numpy_and_torch():
    set_seed(123)
    first = draw()
    set_seed(123)
    second = draw()
    set_seed(124)
    third = draw()

    assert first == second
    assert all(a != b for a, b in zip(first, third))
    assert get_seed() == 124


def test_make_seed_differs_between_calls_and_fits_32_bits():
    seeds = [make_seed() for _ in range(20)]

    assert len(set(seeds)) == 20
    assert all(0 <= s < 2**32 for s in seeds)


def test_set_envs_seeds_gives_consecutive_seeds_by_rank():
    class Env:
        def seed(self, seed):
            self.seeded = seed

    envs = [Env(), Env(), Env()]
    set_envs_seeds(envs, 10)

    assert [e.seeded for e in envs] == [10, 11, 12]


def test_derive_seed_is_stable_and_keys_streams_apart():
    from rlrun.utils.seed import derive_seed

    assert derive_seed(7, 1, 0) == derive_seed(7, 1, 0)
    seeds = {derive_seed(seed, 99, rank, worker) for seed in range(4) for rank in range(3) for worker in range(4)}
    assert len(seeds) == 4 * 3 * 4
    assert all(0 <= s < 2**32 for s in seeds)
    assert not seeds & set(range(100))  # none collides with small seed + env rank values
    assert derive_seed(-1, 0) == derive_seed(2**32 - 1, 0)  # seeds are taken mod 2**32, as set_seed does
