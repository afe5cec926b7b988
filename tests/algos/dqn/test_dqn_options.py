"""DQN's options: which replay it builds, prioritized replay (priorities from |TD error|, beta
annealing), wait-reset samplers whose filler is never trained on, and all options at once on Pong."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlrun.agents.dqn.atari.atari_dqn_agent import AtariDqnAgent
from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.algos.dqn.dqn import DQN, SamplesToBuffer
from rlrun.envs.atari.atari_env import AtariEnv
from rlrun.envs.gym import make
from rlrun.replays.frame_storage import NStepFrameStorage
from rlrun.replays.non_sequence.uniform import UniformReplayBuffer
from rlrun.replays.sampling import MIN_PRIORITY, PrioritizedSampling
from rlrun.replays.storage import NStepReturnStorage
from rlrun.samplers.collections import BatchSpec
from rlrun.samplers.collectors import WaitResetCollector
from rlrun.samplers.serial.sampler import SerialSampler

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Small models on a shared 2-core machine: more threads only contend."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def examples(observation):
    return dict(observation=observation, action=np.int64(0), reward=np.float32(0), done=np.bool_(False), env_info=None)


ATARI_OBS = np.zeros((4, 104, 80), np.uint8)
VECTOR_OBS = np.zeros(4, np.float32)


class RecordingReplay(UniformReplayBuffer):
    def __init__(self, **kwargs):
        type(self).kwargs = kwargs
        super().__init__(
            **{k: v for k, v in kwargs.items() if k in ("example", "size", "B", "discount", "n_step_return")}
        )


@pytest.mark.parametrize(
    "observation, prioritized, Storage",
    [
        (ATARI_OBS, False, NStepFrameStorage),
        (ATARI_OBS, True, NStepFrameStorage),
        (VECTOR_OBS, False, NStepReturnStorage),
        (VECTOR_OBS, True, NStepReturnStorage),
        (ATARI_OBS.astype(np.float32), False, NStepReturnStorage),  # float frames: not Atari's uint8 stacks
    ],
)
def test_replay_is_frame_based_for_uint8_frame_stacks_and_prioritized_on_request(observation, prioritized, Storage):
    algo = DQN(replay_size=1000, prioritized_replay=prioritized, pri_alpha=0.5, pri_beta_init=0.3, default_priority=2)
    algo.mid_batch_reset = True
    algo.initialize_replay_buffer(examples(observation), BatchSpec(4, 2))
    assert type(algo.replay_buffer.storage) is Storage
    assert isinstance(algo.replay_buffer.sampling, PrioritizedSampling) == prioritized
    assert not algo.replay_buffer.async_
    if prioritized:
        assert (algo.replay_buffer.alpha, algo.replay_buffer.beta, algo.replay_buffer.default_priority) == (0.5, 0.3, 2)


def test_replay_buffer_cls_overrides_the_choice_and_gets_the_prioritized_and_wait_reset_keywords():
    algo = DQN(replay_size=1000, prioritized_replay=True, ReplayBufferCls=RecordingReplay)
    algo.mid_batch_reset = False
    algo.initialize_replay_buffer(examples(ATARI_OBS), BatchSpec(4, 2))
    assert type(algo.replay_buffer) is RecordingReplay
    assert {
        k: RecordingReplay.kwargs[k] for k in ("size", "B", "alpha", "beta", "default_priority", "mid_batch_reset")
    } == dict(size=1000, B=2, alpha=0.6, beta=0.4, default_priority=1.0, mid_batch_reset=False)

    class OldStyleReplay(UniformReplayBuffer):
        def __init__(self, example, size, B, discount, n_step_return):
            super().__init__(example, size, B, discount, n_step_return)

    algo = DQN(replay_size=1000, ReplayBufferCls=OldStyleReplay)
    algo.mid_batch_reset = False
    with pytest.raises(TypeError, match="takes no mid_batch_reset keyword"):
        algo.initialize_replay_buffer(examples(VECTOR_OBS), BatchSpec(4, 2))
    algo = DQN(replay_size=1000, ReplayBufferCls=RecordingReplay)
    algo.mid_batch_reset = True
    algo.initialize_replay_buffer(examples(VECTOR_OBS), BatchSpec(4, 2))
    assert set(RecordingReplay.kwargs) == {"example", "size", "B", "discount", "n_step_return"}


class TdRecordingDQN(DQN):
    def loss(self, samples):
        loss, td = super().loss(samples)
        self.last_td, self.last_is_weights = td, samples.is_weights
        return loss, td


def run_dqn(algo, CollectorCls=None, env_kwargs=None, T=8, B=2, itrs=6):
    torch.manual_seed(0)
    np.random.seed(0)
    kwargs = {} if CollectorCls is None else dict(CollectorCls=CollectorCls)
    sampler = SerialSampler(
        make, env_kwargs or dict(id="CartPole-v1"), batch_T=T, batch_B=B, max_decorrelation_steps=0, **kwargs
    )
    agent = DqnAgent()
    try:
        examples = sampler.initialize(agent, seed=0)
        algo.initialize(agent, 100, sampler.batch_spec, sampler.mid_batch_reset, examples)
        for itr in range(itrs):
            agent.sample_mode(itr)
            samples, _ = sampler.obtain_samples(itr)
            agent.train_mode(itr)
            yield itr, algo.optimize_agent(itr, samples)
    finally:
        sampler.shutdown()


def test_prioritized_dqn_sets_priorities_to_td_errors_and_anneals_beta():
    # Batches of 16 steps: learning from itr 2, beta from .4 at itr 2 to 1 at itr 64 // 16 = 4.
    algo = TdRecordingDQN(
        min_steps_learn=32, replay_size=1000, prioritized_replay=True, pri_alpha=0.5, pri_beta_steps=64, delta_clip=None
    )
    betas = []
    for itr, opt_info in run_dqn(algo):
        replay = algo.replay_buffer
        betas.append(replay.beta)
        if itr >= 2:
            assert len(opt_info.loss) == 4  # replay_ratio 8 * 16 / 32
            s = replay.sampling
            expected = np.maximum(algo.last_td.numpy(), MIN_PRIORITY) ** 0.5
            # Where a step was drawn twice the last value counts: compare the unique ones.
            leaf = s.last_T_idxs * replay.B + s.last_B_idxs
            _, first = np.unique(leaf[::-1], return_index=True)
            last = len(leaf) - 1 - first
            np.testing.assert_allclose(s.priorities[s.last_T_idxs[last], s.last_B_idxs[last]], expected[last])
            assert s.max_priority >= algo.last_td.max().item()
            assert algo.last_is_weights.max().item() == pytest.approx(1.0) and algo.last_is_weights.min().item() > 0
    assert betas == pytest.approx([0.4, 0.4, 0.4, 0.7, 1.0, 1.0])


@pytest.mark.parametrize("prioritized", [False, True], ids=["uniform", "prioritized"])
def test_wait_reset_sampler_filler_is_stored_but_never_trained_on(prioritized):
    # Episodes cut after 3 steps in batches of 8: most of each batch after the first cut is filler.
    algo = DQN(min_steps_learn=16, replay_size=1000, n_step_return=2, prioritized_replay=prioritized)
    _, opt_info = list(run_dqn(algo, WaitResetCollector, dict(id="CartPole-v1", max_episode_steps=3)))[-1]
    st = algo.replay_buffer.storage
    written = st.samples_valid[: st.t]
    assert (~written).sum() > written.sum() / 2  # a lot of filler
    # Filler follows a done in every env: the storage marks exactly the steps after the first done of each batch.
    done = st.samples.done[: st.t].reshape(-1, 8, 2)
    after_done = np.zeros_like(done)
    after_done[:, 1:] = np.logical_or.accumulate(done[:, :-1], axis=1)
    np.testing.assert_array_equal(~written, after_done.reshape(-1, 2))
    T_idxs, B_idxs = algo.replay_buffer.sampling.sample_idxs(st, 5000)
    assert st.samples_valid[T_idxs, B_idxs].all()
    assert np.isfinite(opt_info.loss).all() and len(opt_info.loss) == 4


@pytest.mark.timeout(120)
def test_all_options_together_train_on_pong_frames():
    """Dueling model, double DQN, 3-step returns, prioritized frame replay, on real Pong batches."""
    sampler = SerialSampler(AtariEnv, dict(game="pong", horizon=40), batch_T=4, batch_B=2, max_decorrelation_steps=0)
    agent = AtariDqnAgent(model_kwargs=dict(dueling=True))
    algo = DQN(
        batch_size=8,
        min_steps_learn=48,
        replay_size=80,
        replay_ratio=1,
        n_step_return=3,
        double_dqn=True,
        prioritized_replay=True,
        target_update_interval=2,
    )
    torch.manual_seed(0)
    try:
        examples = sampler.initialize(agent, seed=0)
        algo.initialize(agent, 100, sampler.batch_spec, sampler.mid_batch_reset, examples)
        replay = algo.replay_buffer
        assert isinstance(replay.storage, NStepFrameStorage) and isinstance(replay.sampling, PrioritizedSampling)
        assert agent.model.dueling
        losses = []
        for itr in range(14):  # 56 steps per env: the 40-step ring wraps, through episodes of 40 steps
            agent.sample_mode(itr)
            samples, _ = sampler.obtain_samples(itr)
            agent.train_mode(itr)
            losses += algo.optimize_agent(itr, samples).loss
    finally:
        sampler.shutdown()
    assert algo.replay_buffer.storage.full and len(losses) == 8 and np.isfinite(losses).all()
    batch = algo.replay_buffer.sample_batch(8)
    assert (
        batch.agent_inputs.observation.shape == (8, 4, 104, 80) and batch.agent_inputs.observation.dtype == torch.uint8
    )


def test_samples_to_buffer_rows_are_what_the_frame_replay_stores():
    algo = DQN(replay_size=1000)
    row = algo.examples_to_buffer(examples(ATARI_OBS))
    assert type(row) is SamplesToBuffer
