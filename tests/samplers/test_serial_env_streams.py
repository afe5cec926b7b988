"""Serial determinism: samples follow env ranks, so envs split over samplers give the same columns.

Two ``SerialSampler``s with ``batch_B=2`` at ranks 0 and 1 (``world_size=2``) own env ranks 0, 1 and
2, 3; together they must reproduce one ``batch_B=4`` sampler exactly. That is the serial form of the
property the CPU-parallel sampler keeps for any number of workers.
"""

from __future__ import annotations

import pytest
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.gym import make
from rlrun.samplers.collectors import ResetCollector, WaitResetCollector
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.buffer import buffer_method

SEED, T, N_ITR = 23, 25, 3


def start(B: int, rank: int, world_size: int, eval_n_envs: int, CollectorCls: type) -> SerialSampler:
    sampler = SerialSampler(
        EnvCls=make,
        env_kwargs=dict(id="CartPole-v1"),
        batch_T=T,
        batch_B=B,
        CollectorCls=CollectorCls,
        max_decorrelation_steps=30,
        eval_n_envs=eval_n_envs,
        eval_max_steps=600 * eval_n_envs,
    )
    torch.manual_seed(0)  # the same initial weights in every sampler's agent
    sampler.initialize(CategoricalPgAgent(), seed=SEED, rank=rank, world_size=world_size)
    return sampler


def collect(sampler: SerialSampler):
    """Copies of every batch, the completed episodes, and two evaluations' episodes."""
    batches, completed = [], []
    for itr in range(N_ITR):
        samples, infos = sampler.obtain_samples(itr)
        batches.append(buffer_method(samples, "clone"))
        completed += infos
    evaluations = [sampler.evaluate_agent(itr) for itr in (0, N_ITR)]
    sampler.shutdown()
    return batches, completed, evaluations


def episodes(infos) -> list[tuple[int, float]]:
    return sorted((info.Length, info.Return) for info in infos)


@pytest.mark.parametrize("CollectorCls", [ResetCollector, WaitResetCollector])
def test_two_half_samplers_reproduce_the_columns_of_one_full_sampler(CollectorCls):
    full = collect(start(B=4, rank=0, world_size=1, eval_n_envs=2, CollectorCls=CollectorCls))
    halves = [collect(start(B=2, rank=r, world_size=2, eval_n_envs=1, CollectorCls=CollectorCls)) for r in (0, 1)]

    for itr in range(N_ITR):
        whole = full[0][itr]
        for r, half in enumerate(halves):
            part, cols = half[0][itr], slice(2 * r, 2 * r + 2)
            for field in ("observation", "reward", "done", "prev_reward"):
                assert torch.equal(getattr(whole.env, field)[:, cols], getattr(part.env, field)), (itr, r, field)
            assert torch.equal(whole.agent.action[:, cols], part.agent.action), (itr, r)
            assert torch.equal(whole.agent.prev_action[:, cols], part.agent.prev_action), (itr, r)
            torch.testing.assert_close(whole.agent.agent_info.value[:, cols], part.agent.agent_info.value)
            torch.testing.assert_close(
                whole.agent.agent_info.dist_info.prob[:, cols], part.agent.agent_info.dist_info.prob
            )
    assert full[0][-1].env.done.any()  # episodes ended inside the compared batches
    assert episodes(full[1]) == episodes(halves[0][1] + halves[1][1])
    for i in range(2):  # each evaluation: the same episodes, with eval envs split 2 against 1 + 1
        assert episodes(full[2][i]) == episodes(halves[0][2][i] + halves[1][2][i])
    assert episodes(full[2][0]) != episodes(full[2][1])  # eval streams restart per itr, not repeat
