"""With the same seed and batch_B, CpuSampler's samples equal SerialSampler's, whatever the worker count.

Env seeds, decorrelation and (through ``agent.seed_env_streams``) action sampling follow env ranks,
not processes.
"""

from __future__ import annotations

import pytest
import torch
from parallel_helpers import CARTPOLE, workers

from rlrun.agents.base import BaseAgent
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.gym import make
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.buffer import buffer_method

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.xfail(
        not hasattr(BaseAgent, "seed_env_streams"),
        reason="needs BaseAgent.seed_env_streams (per-env action streams keyed by seed and env rank)",
        strict=True,
    ),
]
SEED = 5


def run(SamplerCls, affinity=None, eval_n_envs=2):
    sampler = SamplerCls(
        EnvCls=make,
        env_kwargs=CARTPOLE,
        batch_T=25,
        batch_B=6,
        max_decorrelation_steps=30,
        eval_n_envs=eval_n_envs,
        eval_max_steps=6000,
        eval_max_trajectories=5,
    )
    torch.manual_seed(0)  # the same initial weights
    agent = CategoricalPgAgent()
    sampler.initialize(agent, affinity=affinity, seed=SEED, traj_info_kwargs=dict(discount=0.9))
    batches, infos = [], []
    for itr in range(4):
        if itr == 2:
            infos.append(sampler.evaluate_agent(itr))
        agent.sample_mode(itr)  # what the runner does before each batch
        samples, completed = sampler.obtain_samples(itr)
        batches.append(buffer_method(samples, "clone"))
        infos.append(completed)
    sampler.shutdown()
    return batches, infos


def test_cpu_sampler_reproduces_serial_samples_for_1_2_3_and_4_workers():
    reference, reference_infos = run(SerialSampler)
    for n_workers in (1, 2, 3, 4):  # 3 and 4 split the 6 envs unevenly
        batches, infos = run(CpuSampler, affinity=workers(n_workers))  # 2 eval envs, rounded up per worker
        for itr, (ref, got) in enumerate(zip(reference, batches)):
            where = f"{n_workers} workers, batch {itr}"
            assert torch.equal(ref.env.observation, got.env.observation), where
            assert torch.equal(ref.agent.action, got.agent.action), where
            assert torch.equal(ref.env.reward, got.env.reward), where
            assert torch.equal(ref.env.done, got.env.done), where
            torch.testing.assert_close(ref.agent.agent_info.value, got.agent.agent_info.value)
        # Trajectory statistics agree too (their order follows workers, so compare them sorted).
        for ref, got in zip(reference_infos[:2] + reference_infos[3:], infos[:2] + infos[3:]):
            assert sorted(i.DiscountedReturn for i in ref) == sorted(i.DiscountedReturn for i in got)


def test_evaluation_matches_serial_when_eval_envs_divide_over_workers():
    _, reference_infos = run(SerialSampler, eval_n_envs=4)
    _, infos = run(CpuSampler, affinity=workers(2), eval_n_envs=4)
    assert len(infos[2]) == 5
    assert sorted(i.Return for i in reference_infos[2]) == sorted(i.Return for i in infos[2])
