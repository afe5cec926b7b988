"""rlpyt's replay names as an rlpyt script meets them: constructors in rlpyt's positional order with its
keyword names and defaults, its public methods, DQN training with ``ReplayBufferCls=`` an rlpyt class;
and the shape of the code behind them (class chains at most 4 deep, overrides that keep signatures)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import numpy as np
import pytest
import torch

import rlrun.replays
from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.algos.dqn.dqn import DQN, SamplesToBuffer, SamplesToBufferTl
from rlrun.algos.dqn.r2d1 import SamplesToBufferRnn
from rlrun.envs.gym import make
from rlrun.models.lstm import RnnState
from rlrun.replays.non_sequence import frame, prioritized, time_limit, uniform
from rlrun.replays.sequence import frame as seq_frame
from rlrun.replays.sequence import prioritized as seq_prioritized
from rlrun.replays.sequence import uniform as seq_uniform
from rlrun.samplers.serial.sampler import SerialSampler

pytestmark = pytest.mark.timeout(60)

REQUIRED = inspect.Parameter.empty
PRI = [
    ("alpha", 0.6),
    ("beta", 0.4),
    ("default_priority", 1),
    ("unique", False),
    ("input_priorities", False),
    ("input_priority_shift", 0),
]
STEP = [("discount", 1), ("n_step_return", 1)]
SEQ = [("rnn_state_interval", REQUIRED), ("batch_T", None)]
HEAD = [("example", REQUIRED), ("size", REQUIRED), ("B", REQUIRED)]
# rlpyt's constructors as its mixins chain them: (positional-or-keyword, keyword-only), in order.
# Its prioritized mixins take their settings first and pass **kwargs on; its frame mixin takes
# example and passes **kwargs on; the sequence base passes **kwargs (discount, n_step_return) on.
RLPYT = {
    uniform.UniformReplayBuffer: (HEAD + STEP, []),
    time_limit.TlUniformReplayBuffer: (HEAD + STEP, []),
    prioritized.PrioritizedReplayBuffer: (PRI, HEAD + STEP),
    time_limit.TlPrioritizedReplayBuffer: (PRI, HEAD + STEP),
    frame.UniformReplayFrameBuffer: (HEAD[:1], HEAD[1:] + STEP),
    frame.PrioritizedReplayFrameBuffer: (PRI, HEAD + STEP),
    seq_uniform.UniformSequenceReplayBuffer: (HEAD + SEQ, STEP),
    seq_prioritized.PrioritizedSequenceReplayBuffer: (PRI, HEAD + SEQ + STEP),
    seq_frame.UniformSequenceReplayFrameBuffer: (HEAD[:1], HEAD[1:] + SEQ + STEP),
    seq_frame.PrioritizedSequenceReplayFrameBuffer: (PRI, HEAD + SEQ + STEP),
}
ASYNC = {
    uniform.AsyncUniformReplayBuffer: uniform.UniformReplayBuffer,
    time_limit.AsyncTlUniformReplayBuffer: time_limit.TlUniformReplayBuffer,
    prioritized.AsyncPrioritizedReplayBuffer: prioritized.PrioritizedReplayBuffer,
    time_limit.AsyncTlPrioritizedReplayBuffer: time_limit.TlPrioritizedReplayBuffer,
    frame.AsyncUniformReplayFrameBuffer: frame.UniformReplayFrameBuffer,
    frame.AsyncPrioritizedReplayFrameBuffer: frame.PrioritizedReplayFrameBuffer,
    seq_uniform.AsyncUniformSequenceReplayBuffer: seq_uniform.UniformSequenceReplayBuffer,
    seq_prioritized.AsyncPrioritizedSequenceReplayBuffer: seq_prioritized.PrioritizedSequenceReplayBuffer,
    seq_frame.AsyncUniformSequenceReplayFrameBuffer: seq_frame.UniformSequenceReplayFrameBuffer,
    seq_frame.AsyncPrioritizedSequenceReplayFrameBuffer: seq_frame.PrioritizedSequenceReplayFrameBuffer,
}
RLRUN_KEYWORDS = {"mid_batch_reset"}  # rlrun's own, keyword-only, after rlpyt's

EXAMPLE = SamplesToBuffer(np.zeros(3, np.float32), np.int64(0), np.float32(0), np.bool_(False))
TL_EXAMPLE = SamplesToBufferTl(*EXAMPLE, timeout=np.bool_(False))


@pytest.mark.parametrize("Cls", [*RLPYT, *ASYNC], ids=lambda c: c.__name__)
def test_constructor_has_rlpyts_order_names_and_defaults(Cls):
    positional, keyword = RLPYT[ASYNC.get(Cls, Cls)]
    params = [p for p in inspect.signature(Cls).parameters.values() if p.name not in RLRUN_KEYWORDS]
    got_positional = [(p.name, p.default) for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    got_keyword = [(p.name, p.default) for p in params if p.kind is p.KEYWORD_ONLY]
    assert (got_positional, got_keyword) == (positional, keyword)
    assert Cls.async_ == (Cls in ASYNC)


def test_positional_construction_in_rlpyt_order():
    replay = uniform.UniformReplayBuffer(EXAMPLE, 40, 2, 0.9, 3)
    assert (replay.T, replay.B, replay.discount, replay.n_step_return) == (20, 2, 0.9, 3)
    replay = time_limit.AsyncTlUniformReplayBuffer(TL_EXAMPLE, 40, 2, 0.5)
    assert replay.async_ and replay.discount == 0.5 and replay.storage.has_timeout
    replay = prioritized.PrioritizedReplayBuffer(0.5, 0.3, 2.0, True, True, 1, example=EXAMPLE, size=40, B=2)
    assert (replay.alpha, replay.beta, replay.default_priority, replay.unique) == (0.5, 0.3, 2.0, True)
    assert replay.input_priorities and replay.input_priority_shift == 1
    rnn_example = SamplesToBufferRnn(*EXAMPLE, prev_rnn_state=RnnState(np.zeros((1, 4), np.float32), np.zeros((1, 4))))
    replay = seq_uniform.UniformSequenceReplayBuffer(rnn_example, 40, 2, 4, 8)
    assert (replay.rnn_state_interval, replay.batch_T, replay.rnn_T) == (4, 8, 5)


def test_rlruns_former_order_for_prioritized_replays_is_refused_with_the_fix():
    # rlrun used to take example, size, B first; rlpyt's first positional is alpha.
    with pytest.raises(TypeError, match="required keyword-only argument: 'example'"):
        prioritized.PrioritizedReplayBuffer(EXAMPLE, size=40, B=2)  # type: ignore[arg-type, call-arg]
    with pytest.raises(TypeError, match=r"alpha must be a number.*example=\.\.\., size=\.\.\., B=\.\.\."):
        prioritized.PrioritizedReplayBuffer(EXAMPLE, example=EXAMPLE, size=40, B=2)  # type: ignore[arg-type]


def batch(start, T=5, B=2):
    """Step s of env b: observation (s, b, 0), action s % 2, reward s."""
    steps = np.arange(start, start + T, dtype=np.float32)
    obs = np.zeros((T, B, 3), np.float32)
    obs[..., 0], obs[..., 1] = steps[:, None], np.arange(B)
    action = np.broadcast_to(steps[:, None] % 2, (T, B)).astype(np.int64)
    reward = np.broadcast_to(steps[:, None], (T, B)).astype(np.float32)
    return SamplesToBuffer(obs, action, reward, np.zeros((T, B), bool))


def test_rlpyts_public_methods_work():
    np.random.seed(0)
    replay = prioritized.PrioritizedReplayBuffer(
        unique=True, example=EXAMPLE, size=40, B=2, discount=0.5, n_step_return=2
    )
    T, idxs = replay.append_samples(batch(0))
    assert T == 5 and idxs == slice(0, 5)
    replay.append_samples(batch(5))
    # compute_returns(T): the returns the T rows just written complete, called before the cursor moves
    # (as append_samples does): rewind the cursor over the 10 rows to recompute them.
    replay.samples_return_[:] = 0
    replay.storage.t = 0
    replay.compute_returns(10)
    replay.storage.t = 10
    np.testing.assert_allclose(replay.samples_return_[:9, 0], np.arange(9) + 0.5 * np.arange(1, 10))
    T_idxs, B_idxs = replay.sample_idxs(14)  # unique: all 14 valid steps (rows 1..7 of both envs)
    assert len(set(zip(T_idxs.tolist(), B_idxs.tolist()))) == 14
    np.testing.assert_array_equal(replay.extract_observation(T_idxs, B_idxs)[:, 0], T_idxs)
    out = replay.extract_batch(T_idxs, B_idxs)
    np.testing.assert_array_equal(out.target_inputs.observation[:, 0].numpy(), T_idxs + 2)
    drawn = replay.sample_batch(4)
    assert drawn.is_weights.shape == (4,)
    replay.update_batch_priorities(np.full(4, 9.0))
    replay.set_beta(1.0)
    assert replay.beta == 1.0 and replay.sampling.max_priority == 9.0
    replay.init_priority_tree()  # afresh: every valid step at the default priority again
    assert replay.sampling.max_priority == 1.0 and set(np.unique(replay.sampling.tree.values)) == {0.0, 1.0}
    with pytest.raises(ValueError, match="unique=True draws 40 different steps"):
        replay.sample_batch(40)
    with pytest.raises(ValueError, match="batch_T is for sequence replays"):
        replay.sample_batch(4, 3)


def test_sequence_replays_public_methods():
    np.random.seed(1)
    rnn_example = SamplesToBufferRnn(*EXAMPLE, prev_rnn_state=RnnState(np.zeros((1, 4), np.float32), np.zeros((1, 4))))
    replay = seq_uniform.UniformSequenceReplayBuffer(rnn_example, 40, 2, 2)
    for start in range(0, 30, 5):
        b = batch(start)
        h = np.broadcast_to(b.observation[:, :, :1, None], (5, 2, 1, 4)).astype(np.float32)
        replay.append_samples(SamplesToBufferRnn(*b, prev_rnn_state=RnnState(h, -h)))
    replay.set_batch_T(6)
    T_idxs, B_idxs = replay.sample_idxs(8)  # the buffer's batch_T
    observation = replay.extract_observation(T_idxs, B_idxs, 6)
    assert observation.shape == (6, 8, 3)
    assert np.all(np.diff(observation[..., 0], axis=0) == 1)  # consecutive steps
    assert replay.sample_batch(8, 3).all_observation.shape == (3 + 1, 8, 3)
    rows = np.arange(0, 20, 2)  # steps 0..29 written to 20 rows: rows 0..9 hold steps 20..29 now
    np.testing.assert_array_equal(replay.samples_prev_rnn_state.h[:, 0, 0, 0], np.where(rows < 10, rows + 20, rows))


def test_dqn_trains_with_an_rlpyt_replay_class_on_cartpole():
    torch.manual_seed(0)
    sampler = SerialSampler(make, dict(id="CartPole-v1"), batch_T=4, batch_B=2, max_decorrelation_steps=0)
    agent = DqnAgent()
    algo = DQN(
        min_steps_learn=16,
        replay_size=400,
        prioritized_replay=True,
        ReplayBufferCls=time_limit.TlPrioritizedReplayBuffer,
    )
    try:
        examples = sampler.initialize(agent, seed=0)
        algo.initialize(agent, 10, sampler.batch_spec, sampler.mid_batch_reset, examples)
        assert type(algo.replay_buffer) is time_limit.TlPrioritizedReplayBuffer
        losses = []
        for itr in range(8):
            agent.sample_mode(itr)
            samples, _ = sampler.obtain_samples(itr)
            agent.train_mode(itr)
            losses += algo.optimize_agent(itr, samples).loss
    finally:
        sampler.shutdown()
    assert len(losses) == 6 * algo.updates_per_optimize and np.all(np.isfinite(losses))
    assert np.unique(algo.replay_buffer.sampling.priorities).size > 2  # |TD errors| came back as priorities


def _replay_classes():
    for info in pkgutil.walk_packages(rlrun.replays.__path__, "rlrun.replays."):
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            if inspect.isclass(cls) and cls.__module__ == module.__name__ and not issubclass(cls, tuple):
                yield cls


def _rlrun_bases(cls):
    return [b for b in cls.__bases__ if b.__module__.startswith("rlrun.")]


def _depth(cls):
    return 1 + max((_depth(b) for b in _rlrun_bases(cls)), default=0)


def _parameters(function):
    """Names, kinds and defaults: what a caller relies on (a narrower return annotation is fine)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def test_replay_class_chains_are_at_most_4_deep_and_overrides_keep_signatures():
    classes = list(_replay_classes())
    assert len(classes) > 20
    deep = {c.__name__: _depth(c) for c in classes if _depth(c) > 4}
    assert not deep
    changed = set()
    for cls in classes:  # every method a class gets from two rlrun classes of its MRO: one signature
        own = [c for c in cls.__mro__ if c.__module__.startswith("rlrun.")]
        names = {n for c in own for n, m in vars(c).items() if inspect.isfunction(m) and n != "__init__"}
        for name in names:
            defs = [(c.__name__, _parameters(vars(c)[name])) for c in own if inspect.isfunction(vars(c).get(name))]
            if len({str(params) for _, params in defs}) > 1:
                changed.add(f"{cls.__name__}.{name}: {defs}")
    assert not changed
