"""Frame replays against real ALE Pong: every stack they rebuild is the one AtariEnv showed, at episode
starts, across the ring's end and after wait-reset filler; n-step returns and targets follow the
recorded episodes. Plus the memory per step and the refusal of envs that do not stack frames."""

from __future__ import annotations

import numpy as np
import pytest

from rlrun.algos.dqn.dqn import SamplesToBuffer, SamplesToBufferTl
from rlrun.envs.atari.atari_env import AtariEnv
from rlrun.replays.frame_storage import NStepFrameStorage
from rlrun.replays.non_sequence.frame import PrioritizedReplayFrameBuffer, UniformReplayFrameBuffer

pytestmark = pytest.mark.timeout(60)

B, BATCH_T, N_STEP, DISCOUNT = 2, 5, 3, 0.5


class Recorder:
    """Steps B Pong envs like rlrun's collectors (reset at once, or wait for the batch end) and keeps
    every step's observation, action, reward, done and timeout per env."""

    def __init__(self, wait_reset: bool, seed: int = 0):
        # Short horizons: time-limit cuts every few batches, at different steps in the two envs.
        self.envs = [AtariEnv("pong", horizon=h, max_start_noops=0) for h in (11, 17)]
        self.rng = np.random.default_rng(seed)
        self.wait_reset = wait_reset
        self.obs = [env.reset() for env in self.envs]
        for _ in range(7):  # env 1 starts mid-episode, as after decorrelation steps
            self.obs[1] = self.envs[1].step(int(self.rng.integers(6))).observation
        self.need_reset = [False] * B
        self.log = {k: [[] for _ in range(B)] for k in ("observation", "action", "reward", "done", "timeout", "filler")}

    def batch(self, timeout_field: bool):
        rows = {k: np.zeros((BATCH_T, B), dtype) for k, dtype in (("action", np.int64), ("reward", np.float32))}
        rows.update(done=np.zeros((BATCH_T, B), bool), timeout=np.zeros((BATCH_T, B), bool))
        rows.update(filler=np.zeros((BATCH_T, B), bool))
        observation = np.zeros((BATCH_T, B, 4, 104, 80), np.uint8)
        for b, env in enumerate(self.envs):  # wait-reset: reset before the batch
            if self.need_reset[b]:
                self.obs[b], self.need_reset[b] = env.reset(), False
        for t in range(BATCH_T):
            for b, env in enumerate(self.envs):
                observation[t, b] = self.obs[b]
                a = int(self.rng.integers(6))
                rows["action"][t, b] = a
                if self.need_reset[b]:  # filler
                    rows["done"][t, b] = rows["filler"][t, b] = True
                else:
                    o, r, d, info = env.step(a)
                    # Pong scores rarely in such short episodes: a made-up reward per step tests the returns.
                    r += self.rng.integers(-3, 4) / 4
                    rows["reward"][t, b], rows["done"][t, b], rows["timeout"][t, b] = r, d, info.timeout
                    if d and self.wait_reset:
                        self.need_reset[b] = True
                    else:
                        self.obs[b] = env.reset() if d else o
                for k in self.log:
                    self.log[k][b].append(observation[t, b].copy() if k == "observation" else rows[k][t, b])
        if timeout_field:
            return SamplesToBufferTl(observation, rows["action"], rows["reward"], rows["done"], rows["timeout"])
        return SamplesToBuffer(observation, rows["action"], rows["reward"], rows["done"])

    def window(self, b, g, timeout_field):
        """Brute-force n-step return, steps, done_n and timeout_n of env b's step g."""
        ret, steps, done_n, timeout_n = 0.0, 0, False, False
        for j in range(N_STEP):
            cut = timeout_field and bool(self.log["timeout"][b][g + j])
            if cut and j > 0:  # the window stops before a later cut step
                timeout_n = True
                break
            ret += DISCOUNT**j * self.log["reward"][b][g + j]
            steps += 1
            if self.log["done"][b][g + j]:
                done_n, timeout_n = not cut, cut
                break
        return ret, steps, done_n, timeout_n


def check_valid_rows(replay, rec, timeout_field):
    st = replay.storage
    G = len(rec.log["done"][0])  # steps written per env
    T_idxs, B_idxs = np.meshgrid(np.arange(st.T), np.arange(B), indexing="ij")
    valid = st.is_valid(T_idxs, B_idxs)
    T_idxs, B_idxs = T_idxs[valid], B_idxs[valid]
    if T_idxs.size == 0:
        return 0
    out = replay.extract_batch(T_idxs, B_idxs)
    for i, (t, b) in enumerate(zip(T_idxs.tolist(), B_idxs.tolist())):
        g = t + st.T * ((G - 1 - t) // st.T)  # the latest step written at row t
        assert not rec.log["filler"][b][g]
        np.testing.assert_array_equal(out.agent_inputs.observation[i].numpy(), rec.log["observation"][b][g])
        ret, steps, done_n, timeout_n = rec.window(b, g, timeout_field)
        assert out.return_[i].item() == pytest.approx(ret)
        assert out.done_n[i].item() == done_n
        cut_here = timeout_field and bool(rec.log["timeout"][b][g])
        target = g + (steps - cut_here if timeout_n else N_STEP)
        if not done_n:  # a terminal window's target is not used
            np.testing.assert_array_equal(out.target_inputs.observation[i].numpy(), rec.log["observation"][b][target])
        if timeout_field:
            assert (out.timeout_n[i].item(), out.steps_n[i].item()) == (timeout_n, steps)
        new_episode = g == 0 or rec.log["done"][b][g - 1]
        assert out.agent_inputs.prev_action[i].item() == (0 if new_episode else rec.log["action"][b][g - 1])
    return len(T_idxs)


@pytest.mark.parametrize(
    "ReplayCls, wait_reset, timeout_field",
    [
        (UniformReplayFrameBuffer, False, True),
        (UniformReplayFrameBuffer, True, False),
        (PrioritizedReplayFrameBuffer, False, False),
        (PrioritizedReplayFrameBuffer, True, True),
    ],
    ids=["uniform-reset-timeout", "uniform-wait_reset", "prioritized-reset", "prioritized-wait_reset-timeout"],
)
def test_frame_replay_rebuilds_what_pong_showed_at_episode_starts_and_across_the_wrap(
    ReplayCls, wait_reset, timeout_field
):
    np.random.seed(0)
    rec = Recorder(wait_reset)
    first = rec.batch(timeout_field)
    # 16 steps per env: the ring wraps every 3.2 batches, through episodes cut every 11 and 17 steps.
    replay = ReplayCls(
        example=first[0, 0], size=16 * B, B=B, discount=DISCOUNT, n_step_return=N_STEP, mid_batch_reset=not wait_reset
    )
    checked, starts = 0, 0
    batch = first
    for _ in range(20):
        replay.append_samples(batch)
        checked += check_valid_rows(replay, rec, timeout_field)
        if checked:  # the sampling rule draws valid rows only
            assert replay.storage.is_valid(*replay.sampling.sample_idxs(replay.storage, 256)).all()
        starts += int(replay.storage.samples_history.min() < 3)
        batch = rec.batch(timeout_field)
    assert replay.storage.full and checked > 300 and starts > 5
    assert sum(np.sum(d) for d in rec.log["done"]) > 8  # several episode ends, hence starts, in the data


def pong_example(timeout=True):
    fields = (np.zeros((4, 104, 80), np.uint8), np.int64(0), np.float32(0), np.bool_(False))
    return SamplesToBufferTl(*fields, np.bool_(False)) if timeout else SamplesToBuffer(*fields)


def allocated_bytes(storage):
    arrays = [*storage.samples, storage.samples_frames, storage.samples_history]
    arrays += [
        getattr(storage, a) for a in ("samples_return_", "samples_done_n", "samples_timeout_n", "samples_steps_n")
    ]
    return sum({id(a): a.nbytes for a in arrays if a is not None}.values())


def test_a_million_pong_steps_fit_in_8_gib():
    storage = NStepFrameStorage(pong_example(), size=1000, B=1, n_step_return=3)
    per_step = storage.bytes_per_step(pong_example())
    assert per_step == 104 * 80 + 8 + 4 + 1 + 1 + (4 + 1) + (1 + 8) + 1  # frame, fields, n-step, time limits, history
    assert allocated_bytes(storage) <= per_step * storage.size + 3 * 104 * 80  # + the 3 frames before row 0
    assert per_step * 10**6 <= 8 * 2**30


def test_observations_that_are_not_oldest_first_frame_stacks_are_refused_at_the_first_batch():
    frames = np.random.default_rng(0).integers(0, 255, (12, 104, 80), dtype=np.uint8)
    # Newest frame first: consecutive observations do not share shifted frames the frame replay expects.
    obs = np.stack([frames[t : t + 4][::-1] for t in range(8)])[:, None]
    batch = SamplesToBuffer(obs, np.zeros((8, 1), np.int64), np.zeros((8, 1), np.float32), np.zeros((8, 1), bool))
    replay = UniformReplayFrameBuffer(pong_example(timeout=False), size=32, B=1)
    with pytest.raises(ValueError, match="cannot rebuild the observation.*ReplayBufferCls=UniformReplayBuffer"):
        replay.append_samples(batch)
    with pytest.raises(ValueError, match="stack frames along their first dim"):
        UniformReplayFrameBuffer(SamplesToBuffer(np.zeros(4, np.float32), 0, 0.0, False), size=32, B=1)
