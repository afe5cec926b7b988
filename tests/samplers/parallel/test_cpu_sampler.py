"""CpuSampler on real CartPole envs in forked workers: the batch, trajectory infos, collectors, evaluation."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
from parallel_helpers import CARTPOLE, cpu_sampler, start

from rlrun.envs.gym import make
from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.collectors import BaseEvalCollector
from rlrun.samplers.parallel.cpu.collectors import CpuEvalCollector, CpuWaitResetCollector
from rlrun.utils.buffer import buffer_method

pytestmark = pytest.mark.timeout(60)


def test_each_column_replays_exactly_in_a_fresh_env_with_its_env_ranks_seed(leak_check):
    """Worker columns land where they belong: column b is env rank rank * B + b, seeded seed + that."""
    T, B, seed, rank = 30, 4, 11, 1
    sampler = cpu_sampler(T=T, B=B)
    start(sampler, seed=seed, n_workers=2, world_size=2, rank=rank)
    batches = [buffer_method(sampler.obtain_samples(itr)[0], "clone") for itr in range(2)]
    sampler.shutdown()
    for b in range(B):
        env = make(**CARTPOLE)
        env.seed(seed + rank * B + b)
        observation = env.reset()
        for samples in batches:
            for t in range(T):
                np.testing.assert_allclose(samples.env.observation[t, b].numpy(), observation)
                observation, reward, done, _ = env.step(int(samples.agent.action[t, b]))
                assert samples.env.reward[t, b] == reward
                assert bool(samples.env.done[t, b]) == done
                if done:
                    observation = env.reset()


def test_every_done_has_its_traj_info_and_counts_match(leak_check):
    sampler = cpu_sampler(T=60, B=4)
    start(sampler, traj_info_kwargs=dict(discount=0.9))
    n_done = n_infos = 0
    for itr in range(3):
        samples, infos = sampler.obtain_samples(itr)
        n_done += int(samples.env.done.sum())
        n_infos += len(infos)
        for info in infos:
            assert info.Length == info.Return  # CartPole pays 1 per step
            assert info.DiscountedReturn == pytest.approx(sum(0.9**k for k in range(info.Length)))
    sampler.shutdown()
    assert n_infos == n_done > 0


def test_wait_reset_collector_fills_steps_after_done_and_resets_next_batch(leak_check):
    sampler = cpu_sampler(T=60, B=4, CollectorCls=CpuWaitResetCollector)
    start(sampler)
    assert sampler.mid_batch_reset is False
    first = buffer_method(sampler.obtain_samples(0)[0], "clone")
    second, _ = sampler.obtain_samples(1)
    sampler.shutdown()
    for b in range(4):
        done = first.env.done[:, b].numpy()
        assert done.any(), "CartPole episodes with a random policy end within 60 steps"
        t_done = int(np.argmax(done))
        assert done[t_done:].all()  # every step after the first done is filler, marked done
        assert (first.env.reward[t_done + 1 :, b] == 0).all()
        assert not second.env.done[0, b]  # reset before the next batch
        assert not torch.equal(second.env.observation[0, b], first.env.observation[-1, b])


def test_evaluation_runs_each_eval_envs_quota_of_whole_episodes(leak_check):
    sampler = cpu_sampler(B=4, eval_n_envs=4, eval_max_steps=20_000, eval_max_trajectories=6)
    start(sampler)
    sampler.obtain_samples(0)
    infos = sampler.evaluate_agent(1)
    samples, _ = sampler.obtain_samples(2)  # training resumes after evaluation
    sampler.shutdown()
    assert len(infos) == 6
    assert all(info.Length == info.Return > 0 for info in infos)
    assert samples.env.observation.shape == (20, 4, 4)


class QueueOnlyEvalCollector(CpuEvalCollector):
    """Puts finished TrajInfos on ``traj_infos_queue`` and returns nothing, ending with rlpyt's None marker."""

    def collect_evaluation(self, itr):
        super().collect_evaluation(itr)  # puts each finished TrajInfo on self.traj_infos_queue
        self.traj_infos_queue.put(None)
        return None


class RlpytStyleEvalCollector(BaseEvalCollector):
    """rlpyt's way: step every env until ``sync.stop_eval``, putting each finished episode on the queue."""

    def collect_evaluation(self, itr):
        traj_infos = [self.new_traj_info() for _ in self.envs]
        observations = [env.reset() for env in self.envs]
        for _ in range(self.max_T):
            for b, env in enumerate(self.envs):
                action = env.action_space.sample()
                o, r, d, env_info = env.step(action)
                traj_infos[b].step(observations[b], action, r, d, None, env_info)
                if d:
                    self.traj_infos_queue.put(traj_infos[b].terminate(o))
                    traj_infos[b] = self.new_traj_info()
                    o = env.reset()
                observations[b] = o
            if self.sync.stop_eval.value:
                break
        self.traj_infos_queue.put(None)


@pytest.mark.parametrize("eval_collector", [CpuEvalCollector, QueueOnlyEvalCollector])
def test_evaluation_gets_trajectories_that_collectors_return_or_put_on_the_queue_once_each(leak_check, eval_collector):
    sampler = cpu_sampler(
        B=4, eval_n_envs=4, eval_max_steps=20_000, eval_max_trajectories=6, eval_CollectorCls=eval_collector
    )
    start(sampler)
    first, second = sampler.evaluate_agent(0), sampler.evaluate_agent(1)
    sampler.shutdown()
    assert len(first) == len(second) == 6
    assert len({id(info) for info in first}) == 6


def test_an_rlpyt_style_eval_collector_stops_once_its_worker_has_its_share_of_trajectories(leak_check):
    # 2 workers x 2 eval envs; eval_max_trajectories=6 gives each worker 3. rlpyt's collector steps until
    # stop_eval: without it the 5,000 steps per env would finish hundreds of random CartPole episodes.
    sampler = cpu_sampler(
        B=4, eval_n_envs=4, eval_max_steps=20_000, eval_max_trajectories=6, eval_CollectorCls=RlpytStyleEvalCollector
    )
    start(sampler)
    infos = sampler.evaluate_agent(0)
    samples, _ = sampler.obtain_samples(1)
    sampler.shutdown()
    assert 6 <= len(infos) <= 8  # a worker may finish both envs' episodes in its last step
    assert all(isinstance(info, TrajInfo) and info.Length > 0 for info in infos)
    assert samples.env.observation.shape == (20, 4, 4)


def test_evaluation_warns_about_episodes_cut_by_eval_max_steps(leak_check, caplog):
    sampler = cpu_sampler(B=2, eval_n_envs=2, eval_max_steps=4, eval_max_trajectories=2)
    start(sampler)
    with caplog.at_level(logging.WARNING, logger="rlrun.samplers.parallel.base"):
        infos = sampler.evaluate_agent(0)
    sampler.shutdown()
    assert infos == []
    assert "2 episode(s) were still running at eval_max_steps=4" in caplog.text


def _prefer_action(model, action: int) -> None:
    """Make the policy pick ``action`` with probability ~1 (weights written in place, as an optimizer does)."""
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        last_pi_layer = [m for m in model.pi.modules() if isinstance(m, torch.nn.Linear)][-1]
        last_pi_layer.bias[action] = 50.0


def test_workers_act_with_the_weights_the_master_just_wrote(leak_check):
    sampler = cpu_sampler(B=4)
    agent = start(sampler)
    _prefer_action(agent.model, 1)
    ones, _ = sampler.obtain_samples(0)
    assert (ones.agent.action == 1).all()
    _prefer_action(agent.model, 0)
    zeros, _ = sampler.obtain_samples(1)
    sampler.shutdown()
    assert (zeros.agent.action == 0).all()


def test_weights_of_a_separately_trained_model_reach_workers_through_sync_shared_memory(leak_check):
    sampler = cpu_sampler(B=4)
    agent = start(sampler)
    agent.to_device("cpu")  # the trained model becomes a copy; shared_model stays what workers read
    assert agent.model is not agent.shared_model
    _prefer_action(agent.model, 1)
    samples, _ = sampler.obtain_samples(0)
    sampler.shutdown()
    assert (samples.agent.action == 1).all()


def test_workers_write_the_value_of_the_observation_after_the_batch_as_bootstrap_value(leak_check):
    T, B, seed = 5, 4, 3
    sampler = cpu_sampler(T=T, B=B)
    agent = start(sampler, seed=seed, bootstrap_value=True)
    samples, _ = sampler.obtain_samples(0)
    samples = buffer_method(samples, "clone")
    sampler.shutdown()
    next_observation = torch.zeros(B, 4)
    for b in range(B):  # replay each env to find the observation that follows the batch
        env = make(**CARTPOLE)
        env.seed(seed + b)
        observation = env.reset()
        for t in range(T):
            observation, _, done, _ = env.step(int(samples.agent.action[t, b]))
            if done:
                observation = env.reset()
        next_observation[b] = torch.from_numpy(observation)
    expected = agent.value(next_observation, samples.agent.action[-1], samples.env.reward[-1])
    torch.testing.assert_close(samples.agent.bootstrap_value[0], expected)


def test_shutdown_is_idempotent_and_a_stopped_sampler_says_so(leak_check):
    sampler = cpu_sampler()
    start(sampler)
    sampler.obtain_samples(0)
    sampler.shutdown()
    sampler.shutdown()
    leak_check.assert_clean()
    with pytest.raises(RuntimeError, match="not running: call initialize"):
        sampler.obtain_samples(1)


def test_worker_global_seeds_differ_from_env_seeds_and_between_ranks(leak_check):
    seeds = []
    for rank in (0, 1):
        sampler = cpu_sampler(B=4)
        start(sampler, seed=7, world_size=2, rank=rank)
        affinity = dict(workers_cpus=((0,), (0,)), set_affinity=False)
        seeds += [w.seed for w in sampler._worker_settings(affinity, 7, [2, 2])]
        sampler.shutdown()
    assert len(set(seeds)) == 4
    assert not set(seeds) & {7 + env_rank for env_rank in range(8)}
