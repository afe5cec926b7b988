"""SerialEvalCollector takes rlpyt's positional order and is the serial samplers' default."""

from __future__ import annotations

import pytest

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.gym import make
from rlrun.samplers.async_.serial_sampler import AsyncSerialSampler
from rlrun.samplers.collections import TrajInfo
from rlrun.samplers.serial.collectors import SerialEvalCollector
from rlrun.samplers.serial.sampler import SerialSampler

pytestmark = pytest.mark.timeout(60)


def test_rlpyt_positional_order_runs_an_evaluation_on_cartpole():
    envs = [make("CartPole-v1") for _ in range(2)]
    agent = CategoricalPgAgent()
    agent.initialize(envs[0].spaces)
    # rlpyt: SerialEvalCollector(envs, agent, TrajInfoCls, max_T, max_trajectories=None)
    collector = SerialEvalCollector(envs, agent, TrajInfo, 600, 3)
    assert collector.agent is agent and collector.max_T == 600 and collector.max_trajectories == 3
    assert collector.rank == 0 and collector.traj_infos_queue is None
    traj_infos = collector.collect_evaluation(itr=0)
    assert 1 <= len(traj_infos) <= 3 and all(t.Length > 0 for t in traj_infos)
    for env in envs:
        env.close()


def test_serial_samplers_default_to_it():
    assert SerialSampler(make, dict(id="CartPole-v1"), batch_T=2, batch_B=1).eval_CollectorCls is SerialEvalCollector
    assert (
        AsyncSerialSampler(make, dict(id="CartPole-v1"), batch_T=2, batch_B=1).eval_CollectorCls is SerialEvalCollector
    )


def test_a_serial_sampler_evaluates_through_it():
    sampler = SerialSampler(
        make, dict(id="CartPole-v1"), batch_T=4, batch_B=1, eval_n_envs=1, eval_max_steps=400, eval_max_trajectories=1
    )
    try:
        sampler.initialize(CategoricalPgAgent(), seed=0)
        assert type(sampler.eval_collector) is SerialEvalCollector
        traj_infos = sampler.evaluate_agent(0)
    finally:
        sampler.shutdown()
    assert len(traj_infos) == 1 and traj_infos[0].Length > 0
