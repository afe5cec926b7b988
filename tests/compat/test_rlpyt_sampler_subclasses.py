"""Collector and sampler subclasses written for rlpyt run unchanged on rlrun, serial and parallel.

rlpyt's collectors were subclassed by overriding ``start_envs(max_decorrelation_steps)`` and
``collect_batch(agent_inputs, traj_infos, itr)``, building TrajInfos with a bare
``self.TrajInfoCls()``; samplers were subclassed by wrapping ``initialize`` and ``obtain_samples``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.envs.traj_info import TrajInfo
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.collections import TrajInfo as CollectionsTrajInfo
from rlrun.samplers.parallel.cpu.collectors import CpuResetCollector
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.buffer import numpify_buffer, torchify_buffer

pytestmark = pytest.mark.timeout(120)
SAMPLERS = [SerialSampler, CpuSampler]
DISCOUNT = 0.9


class SeenDiscountTrajInfo(TrajInfo):
    """rlpyt style: takes ``**kwargs`` only, and records the discount it was given."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.SeenDiscount = self._discount


class RlpytStyleCollector(CpuResetCollector):
    """Overrides both methods with rlpyt's signatures and writes the batch with its own loop."""

    def start_envs(self, max_decorrelation_steps=0):
        agent_inputs, _ = super().start_envs(max_decorrelation_steps)
        self.started_with = max_decorrelation_steps
        return agent_inputs, [self.TrajInfoCls() for _ in self.envs]

    def collect_batch(self, agent_inputs, traj_infos, itr):
        agent_buf, env_buf = self.samples_np.agent, self.samples_np.env
        completed = []
        observation, action, reward = agent_inputs
        obs_pyt, act_pyt, rew_pyt = torchify_buffer(agent_inputs)
        agent_buf.prev_action[0] = action
        env_buf.prev_reward[0] = reward
        self.agent.sample_mode(itr)
        for t in range(self.batch_T):
            env_buf.observation[t] = observation
            act_pyt, agent_info = self.agent.step(obs_pyt, act_pyt, rew_pyt)
            action = numpify_buffer(act_pyt)
            for b, env in enumerate(self.envs):
                o, r, d, env_info = env.step(action[b])
                traj_infos[b].step(observation[b], action[b], r, d, agent_info[b], env_info)
                if d:
                    completed.append(traj_infos[b].terminate(o))
                    traj_infos[b] = self.TrajInfoCls()
                    o = env.reset()
                    self.agent.reset_one(idx=b)
                observation[b] = o
                reward[b] = r
                env_buf.done[t, b] = d
                env_buf.env_info[t, b] = env_info
            agent_buf.action[t] = action
            env_buf.reward[t] = reward
            agent_buf.agent_info[t] = agent_info
        # ``agent_inputs`` views the arrays updated in place; the next batch continues from them.
        return agent_inputs, traj_infos, completed


class Counting:
    """rlpyt style: wrap ``initialize`` and ``obtain_samples`` around the parent sampler's."""

    def initialize(self, *args, **kwargs):
        examples = super().initialize(*args, **kwargs)
        self.batches = []
        return examples

    def obtain_samples(self, itr):
        samples, traj_infos = super().obtain_samples(itr)
        self.batches.append((itr, int(samples.env.done.sum())))
        return samples, traj_infos


class CountingSerialSampler(Counting, SerialSampler):
    pass


class CountingCpuSampler(Counting, CpuSampler):
    pass


def _cpu_kwargs(SamplerCls):
    if issubclass(SamplerCls, CpuSampler):
        return dict(affinity=dict(workers_cpus=[[0], [1 % 2]], set_affinity=False))
    return {}


def _sample(SamplerCls, n_itr=4, **sampler_kwargs):
    sampler = SamplerCls(
        EnvCls=make,
        env_kwargs=dict(id="CartPole-v1"),
        batch_T=25,
        batch_B=4,
        max_decorrelation_steps=0,
        **sampler_kwargs,
    )
    agent = CategoricalPgAgent()
    # The sampler's seed is the envs' and the action streams'; the model's initial weights come from torch's
    # global generator (a runner seeds it), so two calls compare the same policy only with it seeded.
    torch.manual_seed(0)
    sampler.initialize(agent, seed=3, traj_info_kwargs=dict(discount=DISCOUNT), **_cpu_kwargs(SamplerCls))
    batches, traj_infos = [], []
    try:
        for itr in range(n_itr):
            agent.sample_mode(itr)
            samples, infos = sampler.obtain_samples(itr)
            batches.append(numpify_buffer(samples).env.observation.copy())
            batches.append(numpify_buffer(samples).agent.action.copy())
            traj_infos.extend(infos)
    finally:
        sampler.shutdown()
    return batches, traj_infos


@pytest.mark.parametrize("SamplerCls", SAMPLERS)
def test_a_collector_with_rlpyts_signatures_samples_what_the_built_in_collector_does(SamplerCls):
    ours, our_infos = _sample(SamplerCls)
    theirs, their_infos = _sample(SamplerCls, CollectorCls=RlpytStyleCollector, TrajInfoCls=SeenDiscountTrajInfo)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    assert len(their_infos) == len(our_infos) > 0
    assert [i.Return for i in their_infos] == [i.Return for i in our_infos]


@pytest.mark.parametrize("SamplerCls", SAMPLERS)
def test_a_bare_TrajInfoCls_call_in_a_collector_gets_the_runs_discount(SamplerCls):
    _, infos = _sample(SamplerCls, CollectorCls=RlpytStyleCollector, TrajInfoCls=SeenDiscountTrajInfo)
    assert infos and all(type(i) is SeenDiscountTrajInfo for i in infos)
    for info in infos:
        assert info.SeenDiscount == DISCOUNT
        # CartPole pays 1 per step: the discounted return of a trajectory of length L is a geometric sum.
        assert info.DiscountedReturn == pytest.approx((1 - DISCOUNT**info.Length) / (1 - DISCOUNT))


def test_the_binding_stays_in_the_collector_and_never_changes_the_class():
    _sample(SerialSampler, n_itr=1, TrajInfoCls=SeenDiscountTrajInfo)
    assert SeenDiscountTrajInfo().SeenDiscount == 1.0
    assert TrajInfo()._discount == 1.0
    assert CollectionsTrajInfo is TrajInfo


@pytest.mark.parametrize("SamplerCls", [CountingSerialSampler, CountingCpuSampler])
def test_a_sampler_subclass_wrapping_initialize_and_obtain_samples_trains_under_the_runner(SamplerCls, tmp_path):
    sampler = SamplerCls(
        EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=16, batch_B=4, max_decorrelation_steps=0
    )
    runner = MinibatchRl(
        algo=A2C(discount=DISCOUNT),
        agent=CategoricalPgAgent(),
        sampler=sampler,
        n_steps=5 * 64,
        log_interval_steps=64,
        seed=1,
        **_cpu_kwargs(SamplerCls),
    )
    runner.train()
    assert [itr for itr, _ in sampler.batches] == list(range(5))
    assert sum(n_done for _, n_done in sampler.batches) > 0
