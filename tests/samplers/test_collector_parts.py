"""What a collector's parts need, said where it is missing: a collector in the wrong kind of sampler, a
buffer pair given to a single-buffer collector, an agent without values asked for bootstrap values; and
how a trajectory's end is read from ``env_info``. Real CartPole envs and agents, real processes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.gym import make
from rlrun.samplers.action_sources import value_agent
from rlrun.samplers.buffer import build_samples_buffer
from rlrun.samplers.collections import BatchSpec
from rlrun.samplers.collectors import ResetCollector, trajectory_done
from rlrun.samplers.parallel.cpu.collectors import CpuResetCollector
from rlrun.samplers.parallel.gpu.collectors import GpuResetCollector
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.samplers.parallel.protocol import SamplerWorkerError
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.collections import namedtuple

pytestmark = pytest.mark.timeout(120)
CARTPOLE = dict(id="CartPole-v1")


def test_a_served_collector_in_a_serial_sampler_names_the_collectors_to_use():
    sampler = SerialSampler(
        EnvCls=make,
        env_kwargs=CARTPOLE,
        batch_T=4,
        batch_B=2,
        CollectorCls=GpuResetCollector,
        max_decorrelation_steps=0,
    )
    sampler.initialize(CategoricalPgAgent(), seed=1)
    try:
        with pytest.raises(RuntimeError, match="built without the master's step buffer.*use CpuResetCollector"):
            sampler.obtain_samples(0)
    finally:
        sampler.shutdown()


def test_a_local_collector_in_a_served_sampler_names_the_served_collectors():
    sampler = GpuSampler(
        EnvCls=make,
        env_kwargs=CARTPOLE,
        batch_T=4,
        batch_B=2,
        CollectorCls=CpuResetCollector,
        max_decorrelation_steps=0,
        start_method="fork",
    )
    torch.manual_seed(1)
    sampler.initialize(CategoricalPgAgent(), affinity=dict(workers_cpus=[[0]], set_affinity=False), seed=1)
    try:
        with pytest.raises(SamplerWorkerError, match="built with agent=None") as info:
            sampler.obtain_samples(0)
        assert "GpuResetCollector" in str(info.value)
    finally:
        sampler.shutdown()


def test_a_single_buffer_collector_refuses_a_double_buffer():
    env = make(**CARTPOLE)
    agent = CategoricalPgAgent()
    agent.initialize(env.spaces)
    _, first, _ = build_samples_buffer(agent, env, BatchSpec(4, 1), agent_shared=False, env_shared=False)
    _, second, _ = build_samples_buffer(agent, env, BatchSpec(4, 1), agent_shared=False, env_shared=False)
    with pytest.raises(TypeError, match="double buffer, for the Db collectors"):
        ResetCollector(rank=0, envs=[env], samples_np=(first, second), batch_T=4, agent=agent)
    collector = ResetCollector(rank=0, envs=[env], samples_np=first, batch_T=4, agent=agent)
    assert collector.samples_np is first
    env.close()


def test_bootstrap_values_need_an_agent_with_a_value_method():
    env = make(**CARTPOLE)
    pg_agent, dqn_agent = CategoricalPgAgent(), DqnAgent()
    pg_agent.initialize(env.spaces)
    dqn_agent.initialize(env.spaces)
    env.close()
    assert value_agent(pg_agent) is pg_agent
    with pytest.raises(TypeError, match="DqnAgent has no value"):
        value_agent(dqn_agent)


def test_a_trajectory_ends_at_env_info_traj_done_where_the_env_reports_it():
    AtariLike = namedtuple("AtariLike", ["game_score", "traj_done"])
    Plain = namedtuple("Plain", ["timeout"])
    lost_life = AtariLike(0, np.bool_(False))  # done (a life lost), the game goes on
    assert not trajectory_done(lost_life, True)
    assert trajectory_done(AtariLike(0, True), True)
    assert trajectory_done(Plain(False), True) and not trajectory_done(Plain(False), False)
    assert trajectory_done(None, True)
