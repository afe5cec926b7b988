"""Asynchronous replays: a copier process appends while optimiser processes draw, under the RWLock."""

from __future__ import annotations

import multiprocessing as mp
import pickle
import time

import numpy as np
import pytest
from replay_workers import replay_reader, replay_writer

from rlrun.algos.dqn.dqn import SamplesToBuffer, SamplesToBufferTl
from rlrun.replays.non_sequence.frame import AsyncPrioritizedReplayFrameBuffer, AsyncUniformReplayFrameBuffer
from rlrun.replays.non_sequence.prioritized import AsyncPrioritizedReplayBuffer, PrioritizedReplayBuffer
from rlrun.replays.non_sequence.time_limit import AsyncTlPrioritizedReplayBuffer, AsyncTlUniformReplayBuffer
from rlrun.replays.non_sequence.uniform import AsyncUniformReplayBuffer, UniformReplayBuffer
from rlrun.utils.shared_memory import is_shared, np_mp_array

EXAMPLE = SamplesToBuffer(
    observation=np.zeros(3, np.float32), action=np.int64(0), reward=np.float32(0), done=np.bool_(False)
)


def run_copier_and_readers(replay, ctx, n_batches=150, T=5, n_readers=2, n_step=2, update_priorities=False):
    stop = np_mp_array(1, np.int64)
    results = np_mp_array((n_readers, 2), np.int64)
    readers = [
        ctx.Process(target=replay_reader, args=(replay, stop, results, i, 32, n_step, update_priorities))
        for i in range(n_readers)
    ]
    for p in readers:
        p.start()
    copier = ctx.Process(target=replay_writer, args=(replay, n_batches, T))
    copier.start()
    copier.join(60)
    deadline = time.monotonic() + 30
    while results[:, 0].min() < 20 and time.monotonic() < deadline:  # each reader drew from the full replay too
        time.sleep(0.01)
    stop[0] = 1
    for p in readers:
        p.join(10)
    assert copier.exitcode == 0 and all(p.exitcode == 0 for p in readers)
    return results


# Spawn: three children that import torch take about 50 s on a loaded 2-core machine.
@pytest.mark.parametrize("start_method", ["fork", pytest.param("spawn", marks=pytest.mark.slow)])
def test_readers_draw_only_whole_transitions_while_a_copier_appends(start_method, leak_check):
    replay = AsyncUniformReplayBuffer(example=EXAMPLE, size=400, B=4, discount=1.0, n_step_return=2)
    results = run_copier_and_readers(replay, mp.get_context(start_method))
    assert results[:, 1].sum() == 0, f"inconsistent transitions drawn: {results[:, 1]}"
    assert results[:, 0].min() >= 20
    # The cursor is shared: this process sees what the copier appended (150 batches of 5 rows, ring of 100).
    assert replay.t == (150 * 5) % replay.T and replay.storage.full
    assert replay.samples.action[replay.t - 1, 0] == 150 * 5 - 1


def test_prioritized_priorities_and_tree_are_shared_and_stay_consistent(leak_check):
    replay = AsyncPrioritizedReplayBuffer(example=EXAMPLE, size=400, B=4, discount=1.0, n_step_return=2)
    results = run_copier_and_readers(replay, mp.get_context("fork"), update_priorities=True)
    assert results[:, 1].sum() == 0
    sampling = replay.sampling
    # The readers' updates raised the shared running maximum above the default priority of 1.
    assert sampling.max_priority > 1.0
    # The tree the copier and the readers wrote is the tree rebuilt from its leaves, bit for bit.
    tree = sampling.tree.tree.copy()
    sampling.tree.rebuild()
    np.testing.assert_array_equal(tree, sampling.tree.tree)
    batch = replay.sample_batch(16)
    assert batch.is_weights.shape == (16,)


def test_async_buffers_live_in_shared_memory_and_sync_ones_do_not():
    frame_example = EXAMPLE._replace(observation=np.zeros((4, 2, 2), np.uint8))
    tl_example = SamplesToBufferTl(*EXAMPLE, timeout=np.bool_(False))
    for Cls, example in (
        (AsyncUniformReplayBuffer, EXAMPLE),
        (AsyncPrioritizedReplayBuffer, EXAMPLE),
        (AsyncUniformReplayFrameBuffer, frame_example),
        (AsyncPrioritizedReplayFrameBuffer, frame_example),
        (AsyncTlUniformReplayBuffer, tl_example),
        (AsyncTlPrioritizedReplayBuffer, tl_example),
    ):
        replay = Cls(example=example, size=64, B=2, discount=0.99, n_step_return=1)
        assert replay.async_ and is_shared(replay.samples.action) and is_shared(replay.storage._cursor), Cls
        if hasattr(replay.sampling, "tree"):
            assert is_shared(replay.sampling.tree.tree) and is_shared(replay.sampling.priorities), Cls
    for Cls in (UniformReplayBuffer, PrioritizedReplayBuffer):
        replay = Cls(example=EXAMPLE, size=64, B=2)
        assert not replay.async_ and not is_shared(replay.samples.action)


def test_async_replay_state_dict_is_a_copy_that_loads_back():
    replay = AsyncUniformReplayBuffer(example=EXAMPLE, size=40, B=2, discount=1.0, n_step_return=1)
    T = 5
    s = np.arange(T)[:, None].repeat(2, axis=1)
    replay.append_samples(
        SamplesToBuffer(np.repeat(s[..., None], 3, -1).astype(np.float32), s, s.astype(np.float32), s < 0)
    )
    state = pickle.loads(pickle.dumps(replay.state_dict()))
    other = AsyncUniformReplayBuffer(example=EXAMPLE, size=40, B=2, discount=1.0, n_step_return=1)
    other.load_state_dict(state)
    assert other.t == T
    np.testing.assert_array_equal(other.samples.action, replay.samples.action)
