"""Random streams that belong to envs rather than to processes.

An agent stepping ``B`` envs draws its action noise one row per env. When row ``b`` comes from a
generator keyed by ``(seed, env rank)``, env ``r``'s draws depend only on the seed, ``r`` and how many
times its stream was drawn from, not on which other envs share the batch. That is what lets a
``SerialSampler`` and a ``CpuSampler`` with any number of workers produce the same samples.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

__all__ = ["EnvStreams"]

_BLOCK = 64  # draws per env per refill


def _non_negative_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"EnvStreams: {what} must be a non-negative integer, got {value!r}.")
    return int(value)


class EnvStreams:
    """One PCG64 generator per env, keyed by ``(seed, domain, env_rank, epoch)``.

    ``domain`` separates independent uses of the same env rank (e.g. sampling and evaluation);
    ``epoch`` lets a user restart every stream at a fresh, reproducible key (:meth:`restart`).
    :meth:`uniform` returns ``[B, n]`` float64 uniforms in ``[0, 1)``: row ``b`` is the next ``n``
    draws of env ``env_ranks[b]``'s generator. The rows of one env are the same whichever envs
    share the object, so results follow env ranks.

    Each generator fills its row of a ``[B, block]`` array ``block`` draws at a time, and calls read
    columns from it. A generator's ``random(out=row)`` gives the numbers its ``random()`` would give one
    by one, so the draws are those of drawing per step; the per-env Python call (about 0.7 µs) is paid
    once per ``block`` steps instead of every step.
    """

    def __init__(
        self, seed: int, env_ranks: Sequence[int], domain: int = 0, epoch: int = 0, block: int = _BLOCK
    ) -> None:
        self.seed = _non_negative_int(seed, "seed")
        self.env_ranks = [_non_negative_int(r, "each env rank") for r in env_ranks]
        if len(set(self.env_ranks)) != len(self.env_ranks):
            raise ValueError(
                f"EnvStreams: env ranks {self.env_ranks} repeat a rank, which would give two envs the same "
                "random stream. Give every env of the batch its own global rank."
            )
        self.domain = _non_negative_int(domain, "domain")
        if _non_negative_int(block, "block") == 0:
            raise ValueError("EnvStreams: block must be at least 1.")
        self._block = np.empty((self.n_envs, int(block)))
        self._generators: list[np.random.Generator] = []
        self._make_views()
        self.epoch = 0
        self.restart(epoch)

    def _make_views(self) -> None:
        # One [B, 1] tensor view per column of the block, built once: uniform(1) returns one as it is.
        self._rows = list(self._block)
        self._columns = list(torch.split(torch.from_numpy(self._block), 1, dim=1))

    def __getstate__(self) -> dict[str, object]:
        # Pickling and deepcopy would turn the views into separate copies; rebuild them instead.
        state = self.__dict__.copy()
        del state["_rows"], state["_columns"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        if "_block" not in state:  # pickled before the block existed: its generators stand at the next draw
            self._block = np.empty((self.n_envs, _BLOCK))
            self._next = _BLOCK
        self._make_views()

    @property
    def n_envs(self) -> int:
        return len(self.env_ranks)

    def restart(self, epoch: int) -> None:
        """Re-key every stream at ``(seed, domain, env_rank, epoch)``: the same epoch repeats the same draws."""
        self.epoch = _non_negative_int(epoch, "epoch")
        self._generators = [
            np.random.Generator(np.random.PCG64([self.seed, self.domain, rank, self.epoch])) for rank in self.env_ranks
        ]
        # The next unread column of the block; its width means none: draws made under the old key are dropped.
        self._next = self._block.shape[1]

    def _refill(self) -> None:
        for generator, row in zip(self._generators, self._rows):
            generator.random(out=row)
        self._next = 0

    def uniform(self, n: int = 1) -> torch.Tensor:
        """``[B, n]`` float64 uniforms in ``[0, 1)``, one row per env, advancing each stream by ``n``.

        The tensor may be a view of a buffer that later calls overwrite: use or copy it before drawing again.
        """
        if n == 1:  # the common case (one uniform per categorical sample): a column of the block as it is
            if self._next == self._block.shape[1]:
                self._refill()
            column = self._columns[self._next]
            self._next += 1
            return column
        out = np.empty((self.n_envs, n))
        filled = 0
        while filled < n:
            if self._next == self._block.shape[1]:
                self._refill()
            take = min(n - filled, self._block.shape[1] - self._next)
            out[:, filled : filled + take] = self._block[:, self._next : self._next + take]
            self._next += take
            filled += take
        return torch.from_numpy(out)
