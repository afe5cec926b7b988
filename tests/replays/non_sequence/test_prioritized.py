"""PrioritizedReplayBuffer: priorities of new and updated steps, draws in proportion to p^alpha,
importance-sampling weights, and invalid steps (incomplete windows, overwritten history, wait-reset
filler) that are never drawn and get their priority back once valid."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlrun.replays.non_sequence.frame import PrioritizedReplayFrameBuffer
from rlrun.replays.non_sequence.prioritized import PrioritizedReplayBuffer, SamplesFromReplayPri, SamplesFromReplayTlPri
from rlrun.replays.non_sequence.time_limit import TlPrioritizedReplayBuffer, TlUniformReplayBuffer
from rlrun.utils.collections import namedarraytuple

pytestmark = pytest.mark.timeout(30)

SamplesToBuffer = namedarraytuple("SamplesToBuffer", ["observation", "action", "reward", "done"])
SamplesToBufferTl = namedarraytuple("SamplesToBufferTl", ["observation", "action", "reward", "done", "timeout"])
EXAMPLE = SamplesToBuffer(np.zeros(2, np.float32), np.int64(0), np.float32(0), np.bool_(False))


def batch(steps, B=1, dones=None):
    """[T, B] batch whose observation is (step number, env index)."""
    T = len(steps)
    obs = np.zeros((T, B, 2), np.float32)
    obs[..., 0] = np.asarray(steps, np.float32)[:, None]
    obs[..., 1] = np.arange(B)
    done = np.zeros((T, B), bool) if dones is None else np.asarray(dones, bool).reshape(T, B)
    return SamplesToBuffer(obs, np.ones((T, B), np.int64), np.ones((T, B), np.float32), done)


def leaves(replay):
    return replay.sampling.tree.values.reshape(replay.T, replay.B)


def test_new_steps_get_the_default_then_the_largest_priority_given():
    np.random.seed(0)
    replay = PrioritizedReplayBuffer(example=EXAMPLE, size=20, B=1, alpha=0.5, default_priority=4)
    replay.append_samples(batch(range(8)))
    # Valid rows 1..6 (row 0 has no previous step, row 7 no next observation): 4 ** 0.5 each.
    np.testing.assert_array_equal(leaves(replay)[:, 0], [0] + [2.0] * 6 + [0] * 13)
    out = replay.sample_batch(6)
    rows = out.agent_inputs.observation[:, 0].long()
    replay.update_batch_priorities(torch.full((6,), 9.0))
    np.testing.assert_allclose(leaves(replay)[rows, 0], 3.0)
    replay.append_samples(batch(range(8, 12)))
    np.testing.assert_allclose(leaves(replay)[8:11, 0], 3.0)  # new valid rows: the max so far, 9 ** 0.5


def test_draws_follow_priority_to_the_alpha_and_weights_undo_them():
    np.random.seed(1)
    replay = PrioritizedReplayBuffer(example=EXAMPLE, size=16, B=2, alpha=0.7, beta=0.5)
    replay.append_samples(batch(range(6), B=2))  # valid rows 1..4 of both envs: 8 steps
    out = replay.sample_batch(2000)
    assert isinstance(out, SamplesFromReplayPri)
    step, env = out.agent_inputs.observation[:, 0], out.agent_inputs.observation[:, 1]
    assert set(step.tolist()) == {1, 2, 3, 4}  # all valid steps drawn, no other
    replay.update_batch_priorities(step + 4 * env)  # priority of step s of env b: s + 4b
    out = replay.sample_batch(200_000)
    step, env = out.agent_inputs.observation[:, 0].numpy(), out.agent_inputs.observation[:, 1].numpy()
    p = (step + 4 * env) ** 0.7
    all_p = np.array([s + 4 * b for b in (0, 1) for s in (1, 2, 3, 4)]) ** 0.7
    freq = np.array([np.mean((step == s) & (env == b)) for b in (0, 1) for s in (1, 2, 3, 4)])
    np.testing.assert_allclose(freq, all_p / all_p.sum(), atol=0.004)
    np.testing.assert_allclose(out.is_weights.numpy(), (p.min() / p) ** 0.5, rtol=1e-6)
    assert out.is_weights.dtype == torch.float32 and out.is_weights.max() == 1.0
    replay.set_beta(1.0)
    out = replay.sample_batch(500)
    p = (out.agent_inputs.observation[:, 0] + 4 * out.agent_inputs.observation[:, 1]).double() ** 0.7
    torch.testing.assert_close(out.is_weights.double(), p.min() / p, rtol=1e-6, atol=0)


def check_tree(replay):
    """Every leaf is the stored priority where the step is valid, else zero."""
    st = replay.storage
    T_idxs, B_idxs = np.meshgrid(np.arange(st.T), np.arange(st.B), indexing="ij")
    valid = st.is_valid(T_idxs, B_idxs)
    np.testing.assert_array_equal(leaves(replay), np.where(valid, replay.sampling.priorities, 0.0))
    assert valid.any() == (replay.sampling.tree.total > 0)
    return valid


class FrameStacks:
    """Stacks of k tiny frames per env as AtariEnv builds them: oldest first, zeros before a reset."""

    def __init__(self, B, k=3):
        self.stacks = np.zeros((B, k, 2, 2), np.uint8)
        self.count = 0

    def advance(self, done):
        """The next observations after a step that ended with ``done`` ([B])."""
        for b, d in enumerate(done):
            self.count += 1
            frame = np.full((1, 2, 2), self.count % 250 + 1, np.uint8)
            self.stacks[b] = np.concatenate([np.zeros_like(self.stacks[b, :-1]) if d else self.stacks[b, 1:], frame])


@pytest.mark.parametrize("frames", [False, True], ids=["whole", "frames"])
@pytest.mark.parametrize("mid_batch_reset", [True, False], ids=["reset", "wait_reset"])
def test_invalid_steps_have_zero_priority_and_valid_ones_keep_theirs_through_appends_and_updates(
    frames, mid_batch_reset
):
    rng = np.random.default_rng(0)
    np.random.seed(0)
    B, n = 3, 2
    if frames:
        example = SamplesToBufferTl(
            np.zeros((3, 2, 2), np.uint8), np.int64(0), np.float32(0), np.bool_(False), np.bool_(False)
        )
        replay = PrioritizedReplayFrameBuffer(
            example=example, size=13 * B, B=B, n_step_return=n, mid_batch_reset=mid_batch_reset
        )
        stacks = FrameStacks(B)
    else:
        example = SamplesToBufferTl(*EXAMPLE, timeout=np.bool_(False))
        replay = PrioritizedReplayBuffer(
            example=example, size=13 * B, B=B, n_step_return=n, mid_batch_reset=mid_batch_reset
        )
    drawn_filler, pending = 0, False
    for it in range(60):
        T = int(rng.integers(1, 6))
        done = rng.random((T, B)) < 0.25
        if not mid_batch_reset:  # collectors write done=True on the filler after an env's done
            done = np.logical_or.accumulate(done, axis=0)
        obs = []
        for t in range(T):
            if frames:
                obs.append(stacks.stacks.copy())
                stacks.advance(done[t])
            else:
                obs.append(np.stack([np.full(B, it * 10 + t), np.arange(B)], -1).astype(np.float32))
        replay.append_samples(
            SamplesToBufferTl(
                np.stack(obs),
                np.ones((T, B), np.int64),
                rng.random((T, B)).astype(np.float32),
                done,
                done & (rng.random((T, B)) < 0.5),
            )
        )
        valid = check_tree(replay)
        if pending:  # drawn before this append: some of its steps may have turned invalid meanwhile
            replay.update_batch_priorities(rng.random(64) * 3)
            pending = False
            valid = check_tree(replay)
        if not valid.any():
            continue
        T_idxs, B_idxs = replay.sampling.sample_idxs(replay.storage, 64)
        assert valid[T_idxs, B_idxs].all()
        if replay.storage.samples_valid is not None:
            drawn_filler += int((~replay.storage.samples_valid[T_idxs, B_idxs]).sum())
        if it % 2:
            pending = True
        else:
            replay.update_batch_priorities(rng.random(64) * 3)
            check_tree(replay)
    assert drawn_filler == 0
    if not mid_batch_reset:
        assert (~replay.storage.samples_valid).sum() > 5  # there was filler to avoid


def test_batch_has_timeout_fields_and_weights_and_tl_names_require_timeout():
    example = SamplesToBufferTl(*EXAMPLE, timeout=np.bool_(False))
    replay = TlPrioritizedReplayBuffer(example=example, size=10, B=1, n_step_return=2)
    b = batch(range(6))
    replay.append_samples(SamplesToBufferTl(*b, timeout=np.zeros((6, 1), bool)))
    out = replay.sample_batch(4)
    assert isinstance(out, SamplesFromReplayTlPri) and out.steps_n.shape == out.is_weights.shape == (4,)
    for Cls in (TlUniformReplayBuffer, TlPrioritizedReplayBuffer):
        with pytest.raises(ValueError, match="needs a field 'timeout'"):
            Cls(example=EXAMPLE, size=10, B=1)


def test_bad_priorities_and_updates_before_a_draw_are_refused():
    replay = PrioritizedReplayBuffer(example=EXAMPLE, size=10, B=1)
    with pytest.raises(RuntimeError, match="before any batch"):
        replay.update_batch_priorities(np.ones(2))
    replay.append_samples(batch(range(6)))
    replay.sample_batch(4)
    with pytest.raises(ValueError, match="4 steps"):
        replay.update_batch_priorities(np.ones(3))
    with pytest.raises(ValueError, match="finite"):
        replay.update_batch_priorities(np.array([1.0, np.nan, 1.0, 1.0]))
    with pytest.raises(ValueError, match="too few to sample"):
        PrioritizedReplayBuffer(example=EXAMPLE, size=10, B=1).sample_batch(2)
