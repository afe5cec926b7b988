"""Seeding of every random number generator a run touches."""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import torch

__all__ = ["set_seed", "make_seed", "get_seed", "set_envs_seeds", "derive_seed"]

_log = logging.getLogger(__name__)
_seed: int | None = None


def set_seed(seed: int) -> None:
    """Seed Python's ``random``, numpy's global generator and torch (CPU and every CUDA device)."""
    global _seed
    seed = int(seed) % (2**32)
    _seed = seed
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    _log.debug("Seed set to %d.", seed)


def get_seed() -> int | None:
    """The seed last given to :func:`set_seed` in this process, or None."""
    return _seed


def make_seed() -> int:
    """A fresh 32-bit seed from the clock, the process id and OS entropy: differs between calls."""
    mixed = (time.time_ns() ^ (os.getpid() << 16)) ^ int.from_bytes(os.urandom(4), "little")
    return mixed % (2**32)


class _Seedable(Protocol):
    def seed(self, seed: int) -> object: ...


def set_envs_seeds(envs: Sequence[_Seedable], seed: int | None) -> None:
    """Give env ``i`` the seed ``seed + i``, so seeds follow env ranks rather than processes."""
    if seed is None:
        return
    for i, env in enumerate(envs):
        env.seed(int(seed) + i)


def derive_seed(seed: int, *keys: int) -> int:
    """A 32-bit seed for the stream named by ``keys`` (e.g. a domain, a rank), independent of ``seed + i``.

    Mixed by numpy's ``SeedSequence``, so nearby seeds and keys give unrelated results: a sampler
    worker's global RNGs never share a seed with an env, or with a worker of another rank.
    """
    entropy = [int(seed) % (2**32), *(int(k) for k in keys)]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])
