"""Algorithm subclasses written for rlpyt run unchanged on rlrun, under the serial and the CPU sampler.

rlpyt's A2C computed its loss from the whole batch, ``loss(samples)``, and both A2C and PPO returned
``(loss, entropy, perplexity)``; subclasses override ``loss`` or unpack ``super().loss(...)``. DQN
subclasses store extra replay fields through ``examples_to_buffer`` and ``samples_to_buffer``.
"""

from __future__ import annotations

import math

import pytest
import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.dqn.dqn import DQN, SamplesToBufferTl
from rlrun.algos.pg.a2c import A2C
from rlrun.algos.pg.base import LossTerms
from rlrun.algos.pg.ppo import PPO
from rlrun.envs.gym import make
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.collections import namedarraytuple

pytestmark = pytest.mark.timeout(120)
SAMPLERS = [SerialSampler, CpuSampler]


class A2CWithL2(A2C):
    """rlpyt style: override ``loss(samples)`` and return ``(loss, entropy, perplexity)``."""

    calls = 0

    def loss(self, samples):
        loss, entropy, perplexity = super().loss(samples)
        type(self).calls += 1
        l2 = sum((p**2).sum() for p in self.agent.parameters())
        return loss + 1e-4 * l2, entropy, perplexity


class PPOWithBonus(PPO):
    """rlpyt style: unpack ``super().loss(...)`` with PPO's signature."""

    calls = 0

    def loss(self, agent_inputs, action, return_, advantage, valid, old_dist_info, init_rnn_state=None):
        loss, entropy, perplexity = super().loss(
            agent_inputs, action, return_, advantage, valid, old_dist_info, init_rnn_state
        )
        type(self).calls += 1
        return loss - 0.001 * entropy, entropy, perplexity


def train(algo, SamplerCls):
    sampler = SamplerCls(
        EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=16, batch_B=4, max_decorrelation_steps=0
    )
    kwargs = dict(affinity=dict(workers_cpus=[[0], [0]], set_affinity=False)) if SamplerCls is CpuSampler else {}
    runner = MinibatchRl(algo=algo, agent=CategoricalPgAgent(), sampler=sampler, n_steps=16 * 4 * 3, seed=0, **kwargs)
    runner.train()
    return runner


@pytest.mark.parametrize("SamplerCls", SAMPLERS)
def test_an_a2c_overriding_loss_of_samples_trains(SamplerCls, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    A2CWithL2.calls = 0
    train(A2CWithL2(), SamplerCls)
    assert A2CWithL2.calls == 3


@pytest.mark.parametrize("SamplerCls", SAMPLERS)
def test_a_ppo_unpacking_super_loss_trains(SamplerCls, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    PPOWithBonus.calls = 0
    train(PPOWithBonus(epochs=2, minibatches=2), SamplerCls)
    assert PPOWithBonus.calls == 3 * 2 * 2


def test_loss_terms_unpack_as_rlpyt_and_keep_their_parts():
    loss, entropy, perplexity = terms = LossTerms(torch.tensor(1.0), torch.tensor(2.0), torch.tensor(3.0), pi_loss=4)
    assert (float(loss), float(entropy), float(perplexity)) == (1.0, 2.0, 3.0)
    assert terms.loss is loss and terms.pi_loss == 4 and terms.value_loss is None
    plain = LossTerms.of((loss, entropy, perplexity))  # a custom loss's plain tuple
    assert plain.pi_loss is None and plain.perplexity is perplexity
    with pytest.raises(AttributeError, match="no part 'pi_los'"):
        terms.pi_los  # noqa: B018


def test_opt_info_of_a_plain_tuple_loss_has_nan_for_the_parts_it_did_not_give(pg_run):
    algo = A2CWithL2()
    _agent, _sampler, samples = pg_run(algo)
    opt_info = algo.optimize_agent(0, samples)
    assert math.isfinite(opt_info.loss[0]) and math.isnan(opt_info.piLoss[0])


SamplesToBufferWithPrev = namedarraytuple("SamplesToBufferWithPrev", SamplesToBufferTl._fields + ("prev_reward",))


class DQNStoringPrevReward(DQN):
    """rlpyt style: store one more field in the replay through ``examples_to_buffer``/``samples_to_buffer``."""

    def examples_to_buffer(self, examples):
        row = super().examples_to_buffer(examples)
        return SamplesToBufferWithPrev(*row, prev_reward=examples["reward"])

    def samples_to_buffer(self, samples):
        rows = super().samples_to_buffer(samples)
        return SamplesToBufferWithPrev(*rows, prev_reward=samples.env.prev_reward)


@pytest.mark.parametrize("SamplerCls", SAMPLERS)
def test_a_dqn_overriding_examples_to_buffer_stores_an_extra_field(SamplerCls, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    algo = DQNStoringPrevReward(min_steps_learn=64, replay_size=1000, batch_size=16, eps_steps=1000)
    sampler = SamplerCls(
        EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=16, batch_B=4, max_decorrelation_steps=0
    )
    kwargs = dict(affinity=dict(workers_cpus=[[0], [0]], set_affinity=False)) if SamplerCls is CpuSampler else {}
    runner = MinibatchRl(algo=algo, agent=DqnAgent(), sampler=sampler, n_steps=16 * 4 * 3, seed=0, **kwargs)
    runner.train()
    stored = algo.replay_buffer.samples
    assert isinstance(stored, SamplesToBufferWithPrev)
    # prev_reward[t] is reward[t - 1]: CartPole pays 1 per step, so both are ones in the rows written.
    assert stored.prev_reward[1 : 3 * 16].all() and stored.reward[: 3 * 16].all()
