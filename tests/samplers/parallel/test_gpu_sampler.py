"""Served sampling (GpuSampler, AlternatingSampler, NoOverlapAlternatingSampler) with the action server on the CPU.

The master acts for every env; workers only step envs. With the same seed the samples equal
SerialSampler's exactly, and every failure ends in one clear error with nothing left behind.
"""

from __future__ import annotations

import os
import signal
import time

import pytest
import torch
from faulty_envs import FAILURE_TEXT, FaultyCartPole
from parallel_helpers import CARTPOLE, workers

from rlrun.agents.base import AgentStep, RecurrentAgentMixin
from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.pg.base import AgentInfo
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.distributions.categorical import DistInfo
from rlrun.envs.gym import make
from rlrun.samplers.collectors import WaitResetCollector
from rlrun.samplers.parallel.gpu.alternating_sampler import AlternatingSampler, NoOverlapAlternatingSampler
from rlrun.samplers.parallel.gpu.collectors import GpuWaitResetCollector
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.samplers.parallel.protocol import SamplerWorkerError
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.buffer import buffer_method

pytestmark = pytest.mark.timeout(90)
SEED = 5


def alternating(n: int) -> dict:
    """An alternating affinity of ``n`` unpinned workers (two groups of n / 2)."""
    return dict(workers_cpus=[[0]] * n, set_affinity=False, alternating=True)


SERVED = [
    (GpuSampler, workers(2)),
    (GpuSampler, workers(3)),
    (AlternatingSampler, alternating(2)),
    (AlternatingSampler, alternating(4)),
    (NoOverlapAlternatingSampler, alternating(2)),
]


def run(SamplerCls, affinity=None, CollectorCls=None, eval_n_envs=4, **kwargs):
    extra = {} if CollectorCls is None else dict(CollectorCls=CollectorCls)
    sampler = SamplerCls(
        EnvCls=make,
        env_kwargs=CARTPOLE,
        batch_T=25,
        batch_B=12,
        max_decorrelation_steps=30,
        eval_n_envs=eval_n_envs,
        eval_max_steps=8000,
        eval_max_trajectories=6,
        **extra,
        **kwargs,
    )
    torch.manual_seed(0)  # the same initial weights
    agent = CategoricalPgAgent()
    sampler.initialize(agent, affinity=affinity, seed=SEED, bootstrap_value=True, traj_info_kwargs=dict(discount=0.9))
    batches, infos = [], []
    try:
        for itr in range(4):
            if itr == 2 and eval_n_envs:
                infos.append(sorted(i.DiscountedReturn for i in sampler.evaluate_agent(itr)))
            agent.sample_mode(itr)
            samples, completed = sampler.obtain_samples(itr)
            batches.append(buffer_method(samples, "clone"))
            infos.append(sorted(i.DiscountedReturn for i in completed))
    finally:
        sampler.shutdown()
    return batches, infos


def assert_same_samples(reference, batches):
    for itr, (ref, got) in enumerate(zip(reference, batches)):
        for name in ("observation", "reward", "prev_reward", "done"):
            assert torch.equal(getattr(ref.env, name), getattr(got.env, name)), (itr, name)
        assert torch.equal(ref.agent.action, got.agent.action), itr
        assert torch.equal(ref.agent.prev_action, got.agent.prev_action), itr
        torch.testing.assert_close(ref.agent.agent_info.value, got.agent.agent_info.value)
        torch.testing.assert_close(ref.agent.bootstrap_value, got.agent.bootstrap_value)


@pytest.fixture(scope="module")
def serial_reference():
    return run(SerialSampler)


@pytest.mark.parametrize("SamplerCls, affinity", SERVED, ids=lambda x: getattr(x, "__name__", None))
def test_served_samplers_reproduce_serial_samples_and_evaluation(SamplerCls, affinity, serial_reference, leak_check):
    reference, reference_infos = serial_reference
    batches, infos = run(SamplerCls, affinity)
    assert_same_samples(reference, batches)
    assert infos[:2] + infos[3:] == reference_infos[:2] + reference_infos[3:]  # training trajectories
    if 4 % len(affinity["workers_cpus"]) == 0:  # else the 4 eval envs are rounded to a multiple of the workers
        assert infos[2] == reference_infos[2]
    leak_check.assert_clean()


@pytest.mark.parametrize("SamplerCls, affinity", [(GpuSampler, workers(2)), (AlternatingSampler, alternating(2))])
def test_served_wait_reset_collector_reproduces_serial_wait_reset(SamplerCls, affinity, leak_check):
    reference, reference_infos = run(SerialSampler, CollectorCls=WaitResetCollector, eval_n_envs=0)
    batches, infos = run(SamplerCls, affinity, CollectorCls=GpuWaitResetCollector, eval_n_envs=0)
    assert_same_samples(reference, batches)
    assert infos == reference_infos
    assert any(bool(b.env.done[-1].any()) for b in batches)  # some env did wait for the batch end
    leak_check.assert_clean()


def test_gpu_sampler_under_spawn_matches_fork(serial_reference, leak_check):
    batches, _ = run(GpuSampler, workers(2), start_method="spawn")
    assert_same_samples(serial_reference[0], batches)
    leak_check.assert_clean()


def faulty_served(SamplerCls, fail_in, **kwargs):
    """Env rank 3 fails; with B=4 over 2 workers it is worker 1's second env."""
    env_kwargs = dict(fail_in=fail_in, fail_seed=SEED + 3, fail_step=20, fail_worker=1)
    return SamplerCls(
        EnvCls=FaultyCartPole, env_kwargs=env_kwargs, batch_T=40, batch_B=4, max_decorrelation_steps=0, **kwargs
    )


@pytest.mark.parametrize("SamplerCls, affinity", [(GpuSampler, workers(2)), (AlternatingSampler, alternating(2))])
@pytest.mark.parametrize("fail_in", ["step", "kill"])
def test_a_failing_or_killed_served_worker_is_one_error_within_5s(SamplerCls, affinity, fail_in, leak_check):
    sampler = faulty_served(SamplerCls, fail_in)
    sampler.initialize(CategoricalPgAgent(), affinity=affinity, seed=SEED)
    t0 = time.monotonic()
    with pytest.raises(SamplerWorkerError) as info:
        sampler.obtain_samples(0)
    assert time.monotonic() - t0 < 5
    message = str(info.value)
    assert message.startswith("Sampler worker 1 (env ranks [2, 3])")
    if fail_in == "step":
        assert f"{FAILURE_TEXT} at step 20" in message and "collect_batch" in message
    else:
        assert "signal SIGKILL" in message
    leak_check.assert_clean()


@pytest.mark.integration
def test_a_stuck_served_worker_is_reported_with_its_stack(leak_check):
    sampler = faulty_served(GpuSampler, "hang", worker_timeout=2.0)
    sampler.initialize(CategoricalPgAgent(), affinity=workers(2), seed=SEED)
    with pytest.raises(SamplerWorkerError, match="did not finish a batch at itr 0 within worker_timeout=2 s") as info:
        sampler.obtain_samples(0)
    assert "in hang_forever" in str(info.value)
    leak_check.assert_clean()


def test_a_stopped_served_worker_is_reported_within_5s(leak_check):
    sampler = GpuSampler(EnvCls=make, env_kwargs=CARTPOLE, batch_T=10, batch_B=4, max_decorrelation_steps=0)
    sampler.initialize(CategoricalPgAgent(), affinity=workers(2), seed=SEED)
    sampler.obtain_samples(0)
    os.kill(sampler.workers[0].pid, signal.SIGSTOP)
    t0 = time.monotonic()
    with pytest.raises(SamplerWorkerError, match=r"^Sampler worker 0 \(env ranks \[0, 1\]\) is stopped"):
        sampler.obtain_samples(1)
    assert time.monotonic() - t0 < 5
    leak_check.assert_clean()


class ExplodingAgent(CategoricalPgAgent):
    """Raises in the master's forward pass at its 5th sampling step, as a bug in a model would."""

    n_steps = 0

    def step(self, *args, **kwargs):
        if self._mode == "sample":
            self.n_steps += 1
            if self.n_steps == 5:
                raise ValueError("the model blew up")
        return super().step(*args, **kwargs)


def test_an_error_in_the_master_while_serving_stops_every_worker(leak_check):
    sampler = GpuSampler(EnvCls=make, env_kwargs=CARTPOLE, batch_T=10, batch_B=4, max_decorrelation_steps=0)
    sampler.initialize(ExplodingAgent(), affinity=workers(2), seed=SEED)
    with pytest.raises(ValueError, match="the model blew up"):
        sampler.obtain_samples(0)
    assert sampler.workers == []
    leak_check.assert_clean()


def test_an_env_failing_in_served_evaluation_names_the_eval_envs(leak_check):
    # B=4 and 4 eval envs over 2 workers: eval env ranks 4-7, worker 1 holds 6 and 7.
    env_kwargs = dict(fail_in="step", fail_seed=SEED + 7, fail_step=5)
    sampler = GpuSampler(
        EnvCls=FaultyCartPole, env_kwargs=env_kwargs, batch_T=10, batch_B=4, eval_n_envs=4, eval_max_steps=4000
    )
    sampler.initialize(CategoricalPgAgent(), affinity=workers(2), seed=SEED)
    sampler.obtain_samples(0)
    with pytest.raises(SamplerWorkerError) as info:
        sampler.evaluate_agent(1)
    assert str(info.value).startswith(
        "Sampler worker 1 (env ranks [2, 3], eval env ranks [6, 7]) raised an error during eval"
    )
    leak_check.assert_clean()


def test_alternating_needs_even_envs_and_an_alternating_affinity():
    with pytest.raises(ValueError, match="batch_B must be even"):
        AlternatingSampler(EnvCls=make, env_kwargs=CARTPOLE, batch_T=5, batch_B=5)
    sampler = AlternatingSampler(EnvCls=make, env_kwargs=CARTPOLE, batch_T=5, batch_B=4)
    with pytest.raises(ValueError, match=r"alternating affinity: make_affinity\(\.\.\., alternating=True\)"):
        sampler.initialize(CategoricalPgAgent(), affinity=workers(2), seed=0)


class TinyRnnModel(torch.nn.Module):
    """A GRU cell over the observation, then policy and value heads."""

    def __init__(self, observation_shape, action_size: int) -> None:
        super().__init__()
        self.cell = torch.nn.GRUCell(int(observation_shape[0]), 8)
        self.pi = torch.nn.Linear(8, action_size)
        self.v = torch.nn.Linear(8, 1)

    def forward(self, observation, rnn_state):
        h = self.cell(observation.float(), rnn_state)
        return torch.softmax(self.pi(h), dim=-1), self.v(h).squeeze(-1), h


class TinyRnnAgent(RecurrentAgentMixin, CategoricalPgAgent):
    """A recurrent policy: its actions depend on every observation since the env's last reset."""

    default_model_cls = TinyRnnModel

    def _run(self, observation, advance: bool):
        prev = self.prev_rnn_state
        h = prev[0] if prev is not None else torch.zeros(observation.shape[0], 8)
        pi, value, h = self.model(observation, h)
        if advance:
            self.advance_rnn_state(h.unsqueeze(0))
        return pi, value

    @torch.no_grad()
    def step(self, observation, prev_action, prev_reward):
        pi, value = self._run(observation, advance=True)
        action = self.distribution.sample(DistInfo(prob=pi), uniform=self.env_stream_uniform(pi.shape[:-1]))
        return AgentStep(action=action, agent_info=AgentInfo(dist_info=DistInfo(prob=pi), value=value))

    @torch.no_grad()
    def value(self, observation, prev_action, prev_reward):
        return self._run(observation, advance=False)[1]


@pytest.mark.parametrize("SamplerCls, affinity", [(GpuSampler, workers(2)), (AlternatingSampler, alternating(2))])
def test_recurrent_agents_keep_their_state_per_env_and_reproduce_serial(SamplerCls, affinity, leak_check):
    def batches(Sampler, affinity=None):
        sampler = Sampler(EnvCls=make, env_kwargs=CARTPOLE, batch_T=30, batch_B=6, max_decorrelation_steps=0)
        torch.manual_seed(0)
        agent = TinyRnnAgent()
        sampler.initialize(agent, affinity=affinity, seed=SEED)
        out = []
        for itr in range(4):
            agent.sample_mode(itr)
            out.append(buffer_method(sampler.obtain_samples(itr)[0], "clone"))
            agent.train_mode(itr)  # as the runner does between batches: the sampling state is set aside
        sampler.shutdown()
        return out

    reference = batches(SerialSampler)
    got = batches(SamplerCls, affinity)
    assert any(bool(b.env.done.any()) for b in reference)  # resets happened, so reset_one mattered
    for ref, new in zip(reference, got):
        assert torch.equal(ref.agent.action, new.agent.action)
        torch.testing.assert_close(ref.agent.agent_info.value, new.agent.agent_info.value)
    leak_check.assert_clean()


@pytest.mark.parametrize("SamplerCls, affinity", [(GpuSampler, workers(2)), (AlternatingSampler, alternating(2))])
def test_dqn_agents_per_env_epsilons_follow_their_envs_in_served_samplers(SamplerCls, affinity, leak_check):
    def batches(Sampler, affinity=None):
        sampler = Sampler(EnvCls=make, env_kwargs=CARTPOLE, batch_T=20, batch_B=8, max_decorrelation_steps=0)
        torch.manual_seed(0)
        agent = DqnAgent(eps_final=0.5, eps_final_min=0.01)  # log-spaced final epsilons, one per env
        sampler.initialize(agent, affinity=affinity, seed=SEED)
        agent.set_epsilon_itr_min_max(0, 2)
        out = []
        for itr in range(3):
            agent.sample_mode(itr)
            out.append(buffer_method(sampler.obtain_samples(itr)[0], "clone"))
        sampler.shutdown()
        return out

    for ref, new in zip(batches(SerialSampler), batches(SamplerCls, affinity)):
        assert torch.equal(ref.agent.action, new.agent.action)
        assert torch.equal(ref.env.observation, new.env.observation)
    leak_check.assert_clean()
