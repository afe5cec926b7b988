"""Process targets for the asynchronous replay tests: a copier that appends, an optimiser that draws."""

from __future__ import annotations

import time

import numpy as np

from rlrun.algos.dqn.dqn import SamplesToBuffer


def replay_writer(replay, n_batches, T, done_every=0):
    """A copier: appends batches whose every field at global step s (per env) holds s."""
    B = replay.B
    step = 0
    for _ in range(n_batches):
        s = np.arange(step, step + T, dtype=np.int64)[:, None].repeat(B, axis=1)
        done = (s % done_every == done_every - 1) if done_every else np.zeros((T, B), bool)
        replay.append_samples(
            SamplesToBuffer(
                observation=np.repeat(s[..., None], 3, axis=-1).astype(np.float32),
                action=s.copy(),
                reward=s.astype(np.float32),
                done=done,
            )
        )
        step += T


def replay_reader(replay, stop, results, index, batch_B, n_step, update_priorities):
    """Draws batches until ``stop[0]``; counts draws and inconsistent transitions (a step whose fields
    disagree, or whose window or target does not follow it) in ``results[index]``."""
    while not stop[0]:
        try:
            batch = replay.sample_batch(batch_B)
        except ValueError:  # not enough appended yet
            time.sleep(0.001)
            continue
        s = batch.action.numpy().astype(np.float64)
        obs = batch.agent_inputs.observation.numpy()
        target = batch.target_inputs.observation.numpy()
        expected_return = sum(s + i for i in range(n_step))  # discount 1, no dones
        bad = (
            (obs != s[:, None]).any(axis=1)
            | (target != (s + n_step)[:, None]).any(axis=1)
            | (batch.return_.numpy() != expected_return)
        )
        results[index, 1] += int(bad.sum())
        results[index, 0] += 1
        if update_priorities:
            replay.update_batch_priorities(np.random.random(batch_B) + 0.1)
