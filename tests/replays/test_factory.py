"""make_replay_buffer: every storage x sampling rule x batch kind (x lock) it builds, filled with real
sampler batches (CartPole with an LSTM agent, ALE Pong with the Atari R2D1 agent), returns exactly the
steps the sampler produced; and rlpyt's named buffers are the same compositions."""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
import torch

from rlrun.agents.dqn.atari.atari_r2d1_agent import AtariR2d1Agent
from rlrun.agents.dqn.r2d1_agent import R2d1Agent
from rlrun.algos.dqn.dqn import DQN
from rlrun.algos.dqn.r2d1 import PrioritiesSamplesToBuffer, SamplesToBufferTlRnn
from rlrun.envs.atari.atari_env import AtariEnv
from rlrun.envs.gym import make
from rlrun.replays.factory import Prioritized, Sequences, make_replay_buffer
from rlrun.replays.frame_storage import NStepFrameStorage
from rlrun.replays.non_sequence.frame import AsyncPrioritizedReplayFrameBuffer, UniformReplayFrameBuffer
from rlrun.replays.non_sequence.prioritized import PrioritizedReplayBuffer
from rlrun.replays.non_sequence.time_limit import TlPrioritizedReplayBuffer
from rlrun.replays.non_sequence.uniform import AsyncUniformReplayBuffer, UniformReplayBuffer
from rlrun.replays.sampling import PrioritizedSampling, UniformSampling
from rlrun.replays.sequence.frame import (
    AsyncUniformSequenceReplayFrameBuffer,
    PrioritizedSequenceReplayFrameBuffer,
)
from rlrun.replays.sequence.prioritized import AsyncPrioritizedSequenceReplayBuffer
from rlrun.replays.sequence.uniform import UniformSequenceReplayBuffer
from rlrun.replays.sequences import SequenceReplay, without_rnn_state
from rlrun.replays.storage import NStepReturnStorage
from rlrun.replays.transitions import TransitionReplay
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.shared_memory import is_shared

pytestmark = pytest.mark.timeout(120)

B, BATCH_T, N_BATCHES, N_STEP, DISCOUNT = 2, 5, 9, 2, 0.9
SIZE = 16 * B  # 16 steps per env: 45 written, so the ring wraps twice
SEQ_T, INTERVAL = 4, 2


def collect(EnvCls, env_kwargs, agent):
    """N_BATCHES real sampler batches as R2D1 stores them (timeout and the agent's recorded state)."""
    sampler = SerialSampler(EnvCls, env_kwargs, batch_T=BATCH_T, batch_B=B, max_decorrelation_steps=3)
    torch.manual_seed(0)
    try:
        sampler.initialize(agent, seed=0)
        rows = []
        for itr in range(N_BATCHES):
            samples, _ = sampler.obtain_samples(itr)
            base = DQN.samples_to_buffer_from(
                samples.env.observation,
                samples.agent.action,
                samples.env.reward,
                samples.env.done,
                samples.env.env_info,
            )
            rows.append(copy.deepcopy(SamplesToBufferTlRnn(*base, samples.agent.agent_info.prev_rnn_state)))
    finally:
        sampler.shutdown()
    return rows


@pytest.fixture(scope="module")
def batches():
    with torch.no_grad():
        cartpole = collect(make, dict(id="CartPole-v1", max_episode_steps=12), R2d1Agent())
        pong = collect(AtariEnv, dict(game="pong", horizon=13), AtariR2d1Agent())
    assert any(r.timeout.any() for r in cartpole) and any(r.timeout.any() for r in pong)
    return dict(cartpole=cartpole, pong=pong)


def record(rows, field):
    """Env b's global steps of ``field``: [G, B, ...]."""
    return np.concatenate([np.asarray(getattr(r, field)) for r in rows])


def global_steps(replay, T_idxs):
    """The global step each row holds (the latest written there)."""
    G = N_BATCHES * BATCH_T
    return T_idxs + replay.T * ((G - 1 - T_idxs) // replay.T)


def check_transitions(replay, rows):
    obs, action, done, timeout = (record(rows, f) for f in ("observation", "action", "done", "timeout"))
    T_idxs, B_idxs = replay.sample_idxs(256)
    out = replay.extract_batch(T_idxs, B_idxs)
    g = global_steps(replay, T_idxs)
    np.testing.assert_array_equal(out.agent_inputs.observation.numpy(), obs[g, B_idxs])
    np.testing.assert_array_equal(out.action.numpy(), action[g, B_idxs])
    for i, (gi, b) in enumerate(zip(g, B_idxs)):
        new_episode = gi == 0 or done[gi - 1, b]
        assert out.agent_inputs.prev_action[i].item() == (0 if new_episode else action[gi - 1, b])
        if out.done_n[i]:
            continue  # a terminal window's target is not used
        # A full window bootstraps n steps on; one cut by a time limit from the last step it holds.
        steps = out.steps_n[i].item() - int(timeout[gi, b]) if out.timeout_n[i] else N_STEP
        np.testing.assert_array_equal(out.target_inputs.observation[i].numpy(), obs[gi + steps, b])
    assert timeout.any()


def check_sequences(replay, rows):
    obs, action = record(rows, "observation"), record(rows, "action")
    h = np.concatenate([np.asarray(r.prev_rnn_state.h) for r in rows])
    T_idxs, B_idxs = replay.sample_idxs(64)
    assert np.all(T_idxs % INTERVAL == 0)
    out = replay.extract_batch(T_idxs, B_idxs, SEQ_T)
    g = global_steps(replay, T_idxs)
    steps = g[None, :] + np.arange(SEQ_T + N_STEP)[:, None]
    np.testing.assert_array_equal(out.all_observation.numpy(), obs[steps, B_idxs[None, :]])
    np.testing.assert_array_equal(out.all_action[1:].numpy(), action[steps[:-1], B_idxs[None, :]])
    np.testing.assert_array_equal(out.init_rnn_state.h.numpy(), h[g, B_idxs])


COMBINATIONS = list(itertools.product([False, True], repeat=4))  # frames, prioritized, sequence, async_


@pytest.mark.parametrize(
    "frames, prioritized, sequence, async_",
    COMBINATIONS,
    ids=[
        "-".join(n for n, on in zip(("frames", "prioritized", "sequence", "async"), c) if on) or "plain"
        for c in COMBINATIONS
    ],
)
def test_every_combination_returns_the_steps_the_sampler_produced(batches, frames, prioritized, sequence, async_):
    np.random.seed(0)
    rows = batches["pong" if frames else "cartpole"]
    if not sequence:
        rows = [without_rnn_state(r) for r in rows]
    replay = make_replay_buffer(
        rows[0][0, 0],
        SIZE,
        B,
        discount=DISCOUNT,
        n_step_return=N_STEP,
        frames=frames,
        prioritized=Prioritized(alpha=0.7, beta=0.5) if prioritized else None,
        sequence=Sequences(INTERVAL, SEQ_T) if sequence else None,
        async_=async_,
    )
    assert isinstance(replay, SequenceReplay if sequence else TransitionReplay)
    assert type(replay.storage) is (NStepFrameStorage if frames else NStepReturnStorage)
    assert type(replay.sampling) is (PrioritizedSampling if prioritized else UniformSampling)
    assert replay.async_ == async_ and (replay.rw_lock is not None) == async_
    assert is_shared(replay.samples.action) == async_
    for r in rows:
        replay.append_samples(r)
    (check_sequences if sequence else check_transitions)(replay, rows)
    batch = replay.sample_batch(8)
    assert batch.return_.shape == ((SEQ_T, 8) if sequence else (8,))
    assert "steps_n" in batch._fields  # the rows carry timeout
    assert ("is_weights" in batch._fields) == prioritized
    if prioritized:
        assert batch.is_weights.shape == (8,) and batch.is_weights.max() == 1
        replay.update_batch_priorities(torch.arange(1.0, 9.0))
        assert replay.sampling.max_priority == 8.0
    else:
        with pytest.raises(TypeError, match="prioritized"):
            replay.update_batch_priorities(torch.ones(8))
    if frames:
        assert replay.n_frames == 4 and replay.samples_new_frames.shape == (replay.T, B, 104, 80)


NAMED = [
    # (an rlpyt name, how rlpyt's order builds it, the factory's keywords for the same replay)
    (UniformReplayBuffer, lambda ex: UniformReplayBuffer(ex, SIZE, B, DISCOUNT, N_STEP), {}),
    (AsyncUniformReplayBuffer, lambda ex: AsyncUniformReplayBuffer(ex, SIZE, B, DISCOUNT, N_STEP), dict(async_=True)),
    (
        PrioritizedReplayBuffer,
        lambda ex: PrioritizedReplayBuffer(
            0.7, 0.5, 2, example=ex, size=SIZE, B=B, discount=DISCOUNT, n_step_return=N_STEP
        ),
        dict(prioritized=Prioritized(0.7, 0.5, 2)),
    ),
    (
        TlPrioritizedReplayBuffer,
        lambda ex: TlPrioritizedReplayBuffer(example=ex, size=SIZE, B=B, discount=DISCOUNT, n_step_return=N_STEP),
        dict(prioritized=Prioritized()),
    ),
    (
        UniformReplayFrameBuffer,
        lambda ex: UniformReplayFrameBuffer(ex, size=SIZE, B=B, discount=DISCOUNT, n_step_return=N_STEP),
        dict(frames=True),
    ),
    (
        AsyncPrioritizedReplayFrameBuffer,
        lambda ex: AsyncPrioritizedReplayFrameBuffer(
            0.5, example=ex, size=SIZE, B=B, discount=DISCOUNT, n_step_return=N_STEP
        ),
        dict(frames=True, prioritized=Prioritized(alpha=0.5), async_=True),
    ),
    (
        UniformSequenceReplayBuffer,
        lambda ex: UniformSequenceReplayBuffer(ex, SIZE, B, INTERVAL, SEQ_T, discount=DISCOUNT, n_step_return=N_STEP),
        dict(sequence=Sequences(INTERVAL, SEQ_T)),
    ),
    (
        AsyncPrioritizedSequenceReplayBuffer,
        lambda ex: AsyncPrioritizedSequenceReplayBuffer(
            0.6,
            0.4,
            1,
            False,
            True,
            1,
            example=ex,
            size=SIZE,
            B=B,
            rnn_state_interval=INTERVAL,
            batch_T=SEQ_T,
            discount=DISCOUNT,
            n_step_return=N_STEP,
        ),  # fmt: skip
        dict(
            prioritized=Prioritized(input_priorities=True, input_priority_shift=1),
            sequence=Sequences(INTERVAL, SEQ_T),
            async_=True,
        ),
    ),
    (
        AsyncUniformSequenceReplayFrameBuffer,
        lambda ex: AsyncUniformSequenceReplayFrameBuffer(
            ex, size=SIZE, B=B, rnn_state_interval=INTERVAL, batch_T=SEQ_T, discount=DISCOUNT, n_step_return=N_STEP
        ),
        dict(frames=True, sequence=Sequences(INTERVAL, SEQ_T), async_=True),
    ),
    (
        PrioritizedSequenceReplayFrameBuffer,
        lambda ex: PrioritizedSequenceReplayFrameBuffer(
            example=ex,
            size=SIZE,
            B=B,
            rnn_state_interval=INTERVAL,
            batch_T=SEQ_T,
            discount=DISCOUNT,
            n_step_return=N_STEP,
        ),  # fmt: skip
        dict(frames=True, prioritized=Prioritized(), sequence=Sequences(INTERVAL, SEQ_T)),
    ),
]


@pytest.mark.parametrize("Cls, build, factory_kwargs", NAMED, ids=[n[0].__name__ for n in NAMED])
def test_rlpyt_names_built_in_rlpyt_order_draw_what_the_factory_draws(batches, Cls, build, factory_kwargs):
    frames = factory_kwargs.get("frames", False)
    rows = batches["pong" if frames else "cartpole"]
    if "sequence" not in factory_kwargs:
        rows = [without_rnn_state(r) for r in rows]
    input_priorities = factory_kwargs.get("prioritized", Prioritized()).input_priorities
    if input_priorities:  # R2D1's rows: a priority per env with the samples
        rows = [PrioritiesSamplesToBuffer(np.arange(1.0, B + 1) * (i + 1), r) for i, r in enumerate(rows)]
    example = (rows[0].samples if input_priorities else rows[0])[0, 0]
    named = build(example)
    composed = make_replay_buffer(example, SIZE, B, discount=DISCOUNT, n_step_return=N_STEP, **factory_kwargs)
    assert type(named) is Cls and named.async_ == Cls.async_ == composed.async_
    assert repr(named) == repr(composed).replace(type(composed).__name__, Cls.__name__)
    for r in rows:
        named.append_samples(r)
        composed.append_samples(r)
    for replay in (named, composed):
        np.random.seed(5)
        replay.drawn = replay.sample_batch(16)
    assert_same(named.drawn, composed.drawn)


def assert_same(a, b):
    assert type(a) is type(b)
    if isinstance(a, tuple):
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    elif a is not None:
        assert torch.equal(a, b)
