"""Rules that pick which stored steps go into a training batch."""

from __future__ import annotations

import numpy as np

from rlrun.replays.n_step import NStepReturnStorage

__all__ = ["UniformSampling"]


class UniformSampling:
    """Every valid ``[t, b]`` of the storage is equally likely; draws with replacement.

    Uses numpy's global generator, which :func:`rlrun.utils.seed.set_seed` seeds.
    """

    def sample_idxs(self, storage: NStepReturnStorage, batch_B: int) -> tuple[np.ndarray, np.ndarray]:
        """``(T_idxs, B_idxs)``, each ``[batch_B]`` int64, among ``storage.valid_rows()``."""
        start, count = storage.valid_rows()
        if count < 1:
            raise ValueError(
                f"The replay holds {storage.t if not storage.full else storage.T} steps per env, too few to "
                f"sample {storage.n_step_return}-step transitions; append more samples first (for DQN, keep "
                "min_steps_learn above a few sampler batches)."
            )
        T_idxs = (start + np.random.randint(0, count, size=batch_B)) % storage.T
        B_idxs = np.random.randint(0, storage.B, size=batch_B)
        return T_idxs, B_idxs
