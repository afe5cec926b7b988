"""UniformReplayBuffer: ring wrap-around, n-step bookkeeping, valid indexes, batch contents."""

import numpy as np
import psutil
import pytest
import torch

from rlrun.replays.non_sequence.n_step import SamplesFromReplay, SamplesFromReplayTl
from rlrun.replays.non_sequence.uniform import UniformReplayBuffer
from rlrun.utils.collections import namedarraytuple

SamplesToBuffer = namedarraytuple("SamplesToBuffer", ["observation", "action", "reward", "done"])
SamplesToBufferTl = namedarraytuple("SamplesToBufferTl", ["observation", "action", "reward", "done", "timeout"])

EXAMPLE = SamplesToBuffer(
    observation=np.zeros(2, np.float32), action=np.int64(0), reward=np.float32(0), done=np.bool_(False)
)


def batch(steps, rewards, dones, B=1, timeouts=None):
    """A [T, B] batch whose observation is (step number, env index) and action = step number + 1."""
    T = len(steps)
    obs = np.zeros((T, B, 2), np.float32)
    obs[..., 0] = np.asarray(steps, np.float32)[:, None]
    obs[..., 1] = np.arange(B)[None, :]
    fields = dict(
        observation=obs,
        action=np.repeat(np.asarray(steps, np.int64)[:, None] + 1, B, axis=1),
        reward=np.repeat(np.asarray(rewards, np.float32)[:, None], B, axis=1),
        done=np.repeat(np.asarray(dones, bool)[:, None], B, axis=1),
    )
    if timeouts is None:
        return SamplesToBuffer(**fields)
    return SamplesToBufferTl(**fields, timeout=np.repeat(np.asarray(timeouts, bool)[:, None], B, axis=1))


def test_size_rounds_up_to_whole_rows_and_append_wraps_around_the_ring():
    replay = UniformReplayBuffer(EXAMPLE, size=5, B=2)
    assert (replay.T, replay.size) == (3, 6)
    replay.append_samples(batch([0, 1], [0, 0], [0, 0], B=2))
    T, idxs = replay.append_samples(batch([2, 3], [0, 0], [0, 0], B=2))
    assert T == 2
    np.testing.assert_array_equal(idxs, [2, 0])
    assert replay.t == 1
    np.testing.assert_array_equal(replay.samples.observation[:, 0, 0], [3, 1, 2])


def test_append_accepts_torch_tensors_from_the_sampler():
    replay = UniformReplayBuffer(EXAMPLE, size=8, B=1)
    replay.append_samples(type(b := batch([0, 1], [1, 2], [0, 0]))(*(torch.from_numpy(x) for x in b)))
    np.testing.assert_array_equal(replay.samples.reward[:2, 0], [1, 2])


def test_n_step_returns_match_hand_computation_across_appends():
    # n=3, discount .5, rewards 1..6, episode ends at step 2.
    # row0 = 1 + .5*2 + .25*3 = 2.75, row1 = 2 + .5*3 = 3.5, row2 = 3 (all done_n);
    # row3 = 4 + .5*5 + .25*6 = 8 (not done_n), complete only once reward 6 is in.
    replay = UniformReplayBuffer(EXAMPLE, size=10, B=1, discount=0.5, n_step_return=3)
    replay.append_samples(batch([0, 1, 2], [1, 2, 3], [0, 0, 1]))
    replay.append_samples(batch([3, 4], [4, 5], [0, 0]))
    st = replay.storage
    np.testing.assert_allclose(st.samples_return_[:3, 0], [2.75, 3.5, 3])
    np.testing.assert_array_equal(st.samples_done_n[:3, 0], [True, True, True])
    assert st.samples_return_[3, 0] == 0  # window of row 3 not complete yet
    replay.append_samples(batch([5], [6], [0]))
    assert st.samples_return_[3, 0] == 8
    assert not st.samples_done_n[3, 0]


def test_n_step_returns_wrap_around_the_end_of_the_ring():
    # 6 rows, n=2, discount .5; rewards 1..8 so rows hold 7, 8, 3, 4, 5, 6 after wrapping (cursor 2).
    # row3 = 4 + .5*5 = 6.5, row5 = 6 + .5*7 = 9.5 (its window crosses the end), row0 = 7 + .5*8 = 11.
    replay = UniformReplayBuffer(EXAMPLE, size=6, B=1, discount=0.5, n_step_return=2)
    replay.append_samples(batch([0, 1, 2, 3], [1, 2, 3, 4], [0] * 4))
    replay.append_samples(batch([4, 5, 6, 7], [5, 6, 7, 8], [0] * 4))
    ret = replay.storage.samples_return_[:, 0]
    np.testing.assert_allclose([ret[3], ret[4], ret[5], ret[0]], [6.5, 8, 9.5, 11])


def sampled_rows(replay, draws=3000):
    T_idxs, _ = replay.sampling.sample_idxs(replay.storage, draws)
    return set(T_idxs.tolist())


def test_sampling_excludes_rows_without_a_complete_window_or_previous_step():
    np.random.seed(0)
    replay = UniformReplayBuffer(EXAMPLE, size=8, B=1, n_step_return=2)
    replay.append_samples(batch(range(5), [1] * 5, [0] * 5))
    # Cursor 5: row 0 has no previous step, rows 3, 4 lack the reward or observation at t + 2.
    assert sampled_rows(replay) == {1, 2}
    replay.append_samples(batch(range(5, 10), [1] * 5, [0] * 5))
    # Wrapped, cursor 2: rows 0, 1 lack their window, row 2 (cursor) lost its previous step.
    assert sampled_rows(replay) == {3, 4, 5, 6, 7}


def test_sampling_before_any_complete_window_raises_with_advice():
    replay = UniformReplayBuffer(EXAMPLE, size=8, B=1, n_step_return=3)
    replay.append_samples(batch([0, 1, 2], [1] * 3, [0] * 3))
    with pytest.raises(ValueError, match="too few to sample 3-step"):
        replay.sample_batch(4)


def test_sample_batch_shapes_and_types():
    np.random.seed(1)
    replay = UniformReplayBuffer(EXAMPLE, size=30, B=3, n_step_return=2, discount=0.9)
    replay.append_samples(batch(range(8), [1] * 8, [0] * 8, B=3))
    out = replay.sample_batch(7)
    assert isinstance(out, SamplesFromReplay)
    assert out.agent_inputs.observation.shape == (7, 2) and out.target_inputs.observation.shape == (7, 2)
    for x in (out.action, out.return_, out.done, out.done_n, out.agent_inputs.prev_reward):
        assert isinstance(x, torch.Tensor) and x.shape == (7,)
    assert out.done_n.dtype == torch.bool and out.return_.dtype == torch.float32
    # The target is the same env, n steps later.
    torch.testing.assert_close(out.target_inputs.observation[:, 0], out.agent_inputs.observation[:, 0] + 2)
    torch.testing.assert_close(out.target_inputs.observation[:, 1], out.agent_inputs.observation[:, 1])


def test_extract_batch_zeroes_previous_action_and_reward_at_episode_start():
    replay = UniformReplayBuffer(EXAMPLE, size=10, B=1)
    replay.append_samples(batch(range(6), [10, 20, 30, 40, 50, 60], [0, 0, 1, 0, 0, 0]))
    out = replay.extract_batch(np.array([2, 3]), np.array([0, 0]))
    # Row 2 continues the episode (prev: step 1), row 3 starts a new one after the done at row 2.
    assert out.agent_inputs.prev_action.tolist() == [2, 0]
    assert out.agent_inputs.prev_reward.tolist() == [20, 0]
    # Target of row 2 is row 3, whose previous step ended an episode.
    assert out.target_inputs.prev_action.tolist() == [0, 4]


def test_timeout_windows_stop_before_the_cut_and_bootstrap_from_its_observation():
    # n=2, discount .5, all rewards 1, episode cut by a time limit at step 2 (column of timeouts).
    # row0: window [0, 1], complete: 1.5, target row 2. row1: window [1, 2] reaches the cut at 2, so it
    # stops before it: 1 over 1 step, timeout_n, target row 2 (s_2 was seen: exact). row2: the cut step
    # itself: 1 over 1 step, target row 2 (s_3 was never seen; s_2 stands in).
    replay = UniformReplayBuffer(
        SamplesToBufferTl(*EXAMPLE, timeout=np.bool_(False)), size=10, B=1, discount=0.5, n_step_return=2
    )
    replay.append_samples(batch(range(6), [1] * 6, [0, 0, 1, 0, 0, 0], timeouts=[0, 0, 1, 0, 0, 0]))
    out = replay.extract_batch(np.array([0, 1, 2, 3]), np.zeros(4, np.int64))
    assert isinstance(out, SamplesFromReplayTl)
    np.testing.assert_allclose(out.return_, [1.5, 1, 1, 1.5])
    assert out.done_n.tolist() == [False] * 4
    assert out.timeout_n.tolist() == [False, True, True, False]
    assert out.timeout.tolist() == [False, False, True, False]
    assert out.steps_n.tolist() == [2, 1, 1, 2]
    assert out.target_inputs.observation[:, 0].tolist() == [2, 2, 2, 5]


def test_terminal_windows_are_done_n_when_timeout_is_stored():
    replay = UniformReplayBuffer(
        SamplesToBufferTl(*EXAMPLE, timeout=np.bool_(False)), size=10, B=1, discount=0.5, n_step_return=2
    )
    replay.append_samples(batch(range(6), [1] * 6, [0, 0, 1, 0, 0, 0], timeouts=[0] * 6))
    out = replay.extract_batch(np.array([0, 1, 2]), np.zeros(3, np.int64))
    assert out.done_n.tolist() == [False, True, True]
    assert out.timeout_n.tolist() == [False, False, False]


def test_wrong_B_too_small_size_and_missing_fields_are_refused():
    with pytest.raises(ValueError, match="too few for 3-step returns"):
        UniformReplayBuffer(EXAMPLE, size=8, B=2, n_step_return=3)
    with pytest.raises(ValueError, match="needs a field 'done'"):
        UniformReplayBuffer(namedarraytuple("Partial", ["observation", "action", "reward"])(0, 0, 0), 10, 1)
    replay = UniformReplayBuffer(EXAMPLE, size=20, B=2)
    with pytest.raises(ValueError, match="built for B=2 envs but the samples have B=3"):
        replay.append_samples(batch([0], [0], [0], B=3))


def test_replay_larger_than_machine_memory_is_refused_before_allocation():
    atari_like = SamplesToBuffer(np.zeros((4, 84, 84), np.uint8), np.int64(0), np.float32(0), np.bool_(False))
    steps = psutil.virtual_memory().total // (4 * 84 * 84) + 1
    with pytest.raises(ValueError, match="lower replay_size"):
        UniformReplayBuffer(atari_like, size=steps, B=1)


def test_wait_reset_filler_is_never_drawn_even_when_almost_all_steps_are_filler():
    np.random.seed(2)
    replay = UniformReplayBuffer(EXAMPLE, size=16 * 8, B=8, mid_batch_reset=False)
    done = np.zeros((10, 8), bool)
    done[0, :7] = True  # envs 0-6 end at their first step: the rest of the batch is filler
    done[2, 7] = True  # env 7 at its third
    b = batch(range(10), [1] * 10, [0] * 10, B=8)
    replay.append_samples(type(b)(b.observation, b.action, b.reward, done))
    np.testing.assert_array_equal(replay.storage.samples_valid[:10, :7], np.repeat(np.arange(10)[:, None] == 0, 7, 1))
    T_idxs, B_idxs = replay.sampling.sample_idxs(replay.storage, 500)
    # Valid rows 1..8; of those only env 7's rows 1 and 2 are real steps.
    assert set(zip(T_idxs.tolist(), B_idxs.tolist())) == {(1, 7), (2, 7)}
