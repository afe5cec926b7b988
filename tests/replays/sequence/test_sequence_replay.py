"""Sequence replays: stored RNN states at the interval, sequence contents across episode ends and the
ring's wrap, valid starts only, resets and filler, frame stacks, and prioritized starts with input
priorities."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlrun.replays.frame_storage import NStepFrameStorage
from rlrun.replays.sequence.frame import PrioritizedSequenceReplayFrameBuffer, UniformSequenceReplayFrameBuffer
from rlrun.replays.sequence.n_step import SamplesFromReplay, SamplesFromReplayTl
from rlrun.replays.sequence.prioritized import PrioritizedSequenceReplayBuffer, SamplesFromReplayPri
from rlrun.replays.sequence.uniform import UniformSequenceReplayBuffer
from rlrun.utils.collections import namedarraytuple

pytestmark = pytest.mark.timeout(60)

Rnn = namedarraytuple("Rnn", ["h", "c"])
SamplesToBufferRnn = namedarraytuple(
    "SamplesToBufferRnn", ["observation", "action", "reward", "done", "prev_rnn_state"]
)
SamplesToBufferRnnTl = namedarraytuple(
    "SamplesToBufferRnnTl", ["observation", "action", "reward", "done", "timeout", "prev_rnn_state"]
)
PrioritiesSamplesToBuffer = namedarraytuple("PrioritiesSamplesToBuffer", ["priorities", "samples"])
EXAMPLE = SamplesToBufferRnn(
    np.zeros(2, np.float32),
    np.int64(0),
    np.float32(0),
    np.bool_(False),
    Rnn(np.zeros((1, 3), np.float32), np.zeros((1, 3), np.float32)),
)


def batch(start, T, B=2, done_at=(), timeout_at=()):
    """Global step s of env b: observation (s, b), action s, reward s, state h = s + 1000 b."""
    steps = np.arange(start, start + T)
    obs = np.zeros((T, B, 2), np.float32)
    obs[..., 0] = steps[:, None]
    obs[..., 1] = np.arange(B)
    done = np.zeros((T, B), bool)
    timeout = np.zeros((T, B), bool)
    for s, b in done_at:
        if start <= s < start + T:
            done[s - start, b] = True
    for s, b in timeout_at:
        if start <= s < start + T:
            done[s - start, b] = timeout[s - start, b] = True
    h = np.broadcast_to((steps[:, None] + 1000 * np.arange(B))[:, :, None, None], (T, B, 1, 3)).astype(np.float32)
    action = np.broadcast_to(steps[:, None], (T, B)).astype(np.int64)
    return obs, action, action.astype(np.float32), done, timeout, Rnn(h, -h)


def samples(start, T, **kw):
    obs, action, reward, done, _timeout, rnn = batch(start, T, **kw)
    return SamplesToBufferRnn(obs, action, reward, done, rnn)


def test_states_are_kept_at_the_interval_and_sequences_start_only_there():
    np.random.seed(0)
    replay = UniformSequenceReplayBuffer(EXAMPLE, size=50, B=2, rnn_state_interval=4, batch_T=6, n_step_return=2)
    assert replay.T == 28  # ceil(50 / 2) = 25, up to a multiple of 4
    assert replay.rnn_states.states.h.shape == (7, 2, 1, 3)
    for start in range(0, 60, 10):  # batches of 10 do not align with the interval
        replay.append_samples(samples(start, 10))
    out = replay.sample_batch(500)
    assert isinstance(out, SamplesFromReplay)
    first = out.all_observation[0, :, 0]
    env = out.all_observation[0, :, 1]
    assert torch.all(first % 4 == 0)  # global step % 4 == row % 4 since T % 4 == 0
    # Every step of the sequence and its n-step target is still stored: steps 60 - 28 + 1 ... 59.
    assert first.min() >= 60 - 28 + 3 and (first + 6 + 2 - 1).max() <= 59
    np.testing.assert_array_equal(out.init_rnn_state.h[:, 0, 0], first + 1000 * env)
    np.testing.assert_array_equal(out.init_rnn_state.c, -out.init_rnn_state.h)


def test_sequence_contents_across_the_wrap_and_episode_ends():
    np.random.seed(1)
    replay = UniformSequenceReplayBuffer(
        EXAMPLE, size=24, B=2, rnn_state_interval=2, batch_T=5, n_step_return=2, discount=0.5
    )
    done_at = [(41, 0)]  # env 0's episode ends at step 41
    for start in range(0, 48, 8):
        replay.append_samples(samples(start, 8, done_at=done_at))
    out = replay.sample_batch(400)
    steps = out.all_observation[..., 0]  # [5 + 2, batch_B]
    first = steps[0]
    np.testing.assert_array_equal(steps, first[None] + torch.arange(7)[:, None])
    assert out.all_observation.shape == (7, 400, 2) and out.return_.shape == (5, 400)
    np.testing.assert_array_equal(out.all_action, steps - 1)  # previous actions (raw)
    np.testing.assert_array_equal(out.all_reward, steps - 1)
    env0 = out.all_observation[0, :, 1] == 0
    assert env0.any() and (~env0).any()
    reset = out.all_reset
    np.testing.assert_array_equal(reset, env0[None] & (steps == 42))
    r = steps[:5]
    ends = env0[None] & (r <= 41) & (r + 1 >= 41)  # window of 2 reaches the done at 41
    expected = torch.where(ends & (r == 41), r, r + 0.5 * (r + 1))
    np.testing.assert_allclose(out.return_, expected)
    np.testing.assert_array_equal(out.done_n, ends)
    assert out.valid.all()


def test_time_limit_sequences_carry_timeout_windows():
    example = SamplesToBufferRnnTl(*tuple(EXAMPLE)[:4], np.bool_(False), EXAMPLE.prev_rnn_state)
    replay = UniformSequenceReplayBuffer(example, size=40, B=2, rnn_state_interval=1, batch_T=4, n_step_return=3)
    obs, action, reward, done, timeout, rnn = batch(0, 16, timeout_at=[(9, 1)])
    replay.append_samples(SamplesToBufferRnnTl(obs, action, reward, done, timeout, rnn))
    out = replay.extract_batch(np.array([7]), np.array([1]), 4)
    assert isinstance(out, SamplesFromReplayTl)
    np.testing.assert_array_equal(out.timeout_n[:, 0], [True, True, True, False])  # windows 7..9, 8..10, 9..11
    np.testing.assert_array_equal(out.steps_n[:, 0], [2, 1, 1, 3])  # windows stop before the cut at 9
    assert not out.done_n.any()


def test_wait_reset_filler_is_invalid_and_the_next_batch_starts_an_episode():
    replay = UniformSequenceReplayBuffer(EXAMPLE, size=40, B=2, rnn_state_interval=4, batch_T=8, mid_batch_reset=False)
    replay.append_samples(samples(0, 4))
    replay.append_samples(samples(4, 4, done_at=[(5, 0)]))  # steps 6, 7 of env 0 are filler
    replay.append_samples(samples(8, 4))
    replay.append_samples(samples(12, 4))
    out = replay.extract_batch(np.array([4, 4]), np.array([0, 1]), 8)
    np.testing.assert_array_equal(out.valid[:, 0], [True, True, False, False, True, True, True, True])
    assert out.valid[:, 1].all()
    np.testing.assert_array_equal(out.all_reset[:, 0].nonzero().flatten(), [2, 3, 4])  # after done, after filler
    assert not out.all_reset[:, 1].any()


def test_no_state_stored_starts_anywhere_from_none():
    example = namedarraytuple("S", ["observation", "action", "reward", "done"])(*tuple(EXAMPLE)[:4])
    replay = UniformSequenceReplayBuffer(example, size=30, B=1, rnn_state_interval=0, batch_T=3)
    replay.append_samples(namedarraytuple("S", example._fields)(*batch(0, 20, B=1)[:4]))
    out = replay.sample_batch(300)
    assert out.init_rnn_state is None
    assert len(set(out.all_observation[0, :, 0].tolist())) > 10  # any row can start


def test_missing_state_field_and_dynamic_batch_T():
    example = namedarraytuple("S", ["observation", "action", "reward", "done"])(*tuple(EXAMPLE)[:4])
    with pytest.raises(ValueError, match="prev_rnn_state"):
        UniformSequenceReplayBuffer(example, size=30, B=1, rnn_state_interval=2)
    replay = UniformSequenceReplayBuffer(EXAMPLE, size=40, B=2, rnn_state_interval=2)
    replay.append_samples(samples(0, 16))
    with pytest.raises(ValueError, match="batch_T"):
        replay.sample_batch(4)
    assert replay.sample_batch(4, batch_T=3).done.shape == (3, 4)
    replay.set_batch_T(5)
    assert replay.sample_batch(4).done.shape == (5, 4)


def frame_samples(start, T, B, k, done_at=()):
    """Stacks like AtariEnv's: frame of step s in env b is filled with s + 100 b; zeros before an
    episode's first frame."""
    obs = np.zeros((T, B, k, 2, 2), np.uint8)
    hist = {}
    for b in range(B):
        ep_start = 0
        for s in range(0, start + T):
            if s >= start:
                for f in range(k):
                    src = s - (k - 1 - f)
                    obs[s - start, b, f] = (src + 100 * b) % 256 if src >= ep_start else 0
            if (s, b) in done_at:
                ep_start = s + 1
        hist[b] = ep_start
    _o, action, reward, done, _t, rnn = batch(start, T, B=B, done_at=done_at)
    return SamplesToBufferRnn(obs, action, reward, done, rnn)


def test_frame_sequences_rebuild_every_stack():
    np.random.seed(2)
    k, B = 3, 2
    example = SamplesToBufferRnn(np.zeros((k, 2, 2), np.uint8), *tuple(EXAMPLE)[1:])
    replay = UniformSequenceReplayFrameBuffer(example, size=40, B=B, rnn_state_interval=2, batch_T=6, n_step_return=2)
    assert isinstance(replay.storage, NStepFrameStorage)
    done_at = {(23, 0), (30, 1)}
    full = frame_samples(0, 48, B, k, done_at)
    for start in range(0, 48, 6):
        replay.append_samples(frame_samples(start, 6, B, k, done_at))
    out = replay.sample_batch(300)
    steps = out.all_action + 1  # all_action starts one step before the observations
    env = torch.arange(B)[None, None].expand(8, 300, B)
    for i in range(300):
        b = int((out.init_rnn_state.h[i, 0, 0] // 1000).item())
        np.testing.assert_array_equal(out.all_observation[:, i].numpy(), full.observation[steps[:, i].numpy(), b])
    del env


def test_prioritized_starts_are_slots_with_input_priorities_shifted_back():
    np.random.seed(3)
    replay = PrioritizedSequenceReplayBuffer(
        example=EXAMPLE, size=64, B=2, rnn_state_interval=4, batch_T=8, n_step_return=1, alpha=1.0, beta=1.0,
        default_priority=1, input_priorities=True, input_priority_shift=1,
    )  # fmt: skip
    assert replay.sampling.tree.size == (32 // 4) * 2
    for start in range(0, 24, 4):
        p = np.array([10.0 + start, 20.0 + start])
        replay.append_samples(PrioritiesSamplesToBuffer(p, samples(start, 4)))
    pri = replay.sampling.priorities
    # Batch starting at step s (slot s / 4) gave its priorities to slot s / 4 - 1.
    np.testing.assert_allclose(pri[0:5, 0], [14, 18, 22, 26, 30])
    np.testing.assert_allclose(pri[4, 1], 40)
    np.testing.assert_allclose(pri[5, :], [36, 36])  # the newest slot: the largest priority given before it
    leaves = replay.sampling.tree.values.reshape(8, 2)
    # Valid starts: slot 1 (rows 4..11) to slot 3 (rows 12..19, target row 20 <= 23 - 1): row 0 never.
    valid_slots = [1, 2, 3]
    np.testing.assert_allclose(leaves[valid_slots], pri[valid_slots])
    assert np.all(leaves[[0, 4, 5, 6, 7]] == 0)
    out = replay.sample_batch(4000)
    assert isinstance(out, SamplesFromReplayPri)
    first = out.all_observation[0, :, 0]
    env = out.all_observation[0, :, 1]
    assert set(first.tolist()) == {4.0, 8.0, 12.0}
    p = pri[(first // 4).long().numpy(), env.long().numpy()]
    expected = p / pri[valid_slots].sum()
    share = {(f, e): ((first == f) & (env == e)).float().mean().item() for f in (4.0, 8.0, 12.0) for e in (0.0, 1.0)}
    for (f, e), got in share.items():
        want = pri[int(f) // 4, int(e)] / pri[valid_slots].sum()
        assert abs(got - want) < 0.03, (f, e, got, want)
    np.testing.assert_allclose(out.is_weights.numpy(), (p.min() / p), rtol=1e-5)
    del expected
    replay.update_batch_priorities(torch.full((4000,), 5.0))
    np.testing.assert_allclose(replay.sampling.tree.values.reshape(8, 2)[valid_slots], 5.0)


def test_prioritized_needs_batch_T_and_refuses_unwanted_input_priorities():
    with pytest.raises(ValueError, match="batch_T"):
        PrioritizedSequenceReplayBuffer(example=EXAMPLE, size=64, B=2, rnn_state_interval=4)
    replay = UniformSequenceReplayBuffer(EXAMPLE, size=64, B=2, rnn_state_interval=4, batch_T=4)
    with pytest.raises(ValueError, match="input priorities"):
        replay.append_samples(PrioritiesSamplesToBuffer(np.ones(2), samples(0, 4)))


def test_prioritized_frame_sequences():
    k = 2
    example = SamplesToBufferRnn(np.zeros((k, 2, 2), np.uint8), *tuple(EXAMPLE)[1:])
    replay = PrioritizedSequenceReplayFrameBuffer(example=example, size=40, B=1, rnn_state_interval=2, batch_T=4)
    for start in range(0, 30, 6):
        replay.append_samples(frame_samples(start, 6, 1, k))
    out = replay.sample_batch(8)
    assert out.all_observation.shape == (5, 8, k, 2, 2) and out.is_weights.shape == (8,)
