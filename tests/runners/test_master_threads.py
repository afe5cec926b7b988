"""The training process's torch threads beside a parallel sampler's workers (MinibatchRlBase.startup)."""

import os

import pytest
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.runners.master_affinity import fit_master_threads_to_workers
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.serial.sampler import SerialSampler

USABLE = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


@pytest.fixture
def two_threads():
    """Torch at 2 threads (torch's default on a 2-core machine), put back afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


class ThreadsSeen(A2C):
    """A2C that notes the torch threads it trains with."""

    def __init__(self):
        super().__init__()
        self.threads: list[int] = []

    def optimize_agent(self, itr, samples=None, sampler_itr=None):
        self.threads.append(torch.get_num_threads())
        return super().optimize_agent(itr, samples, sampler_itr)


class SerialWithWorkers(SerialSampler):
    """A serial sampler that reports ``n_worker`` workers, as a parallel sampler does once started."""

    def __init__(self, *args, n_worker, **kwargs):
        super().__init__(*args, **kwargs)
        self.n_worker = n_worker


def train(sampler, affinity=None):
    algo = ThreadsSeen()
    runner = MinibatchRl(algo=algo, agent=CategoricalPgAgent(), sampler=sampler, n_steps=40, seed=0, affinity=affinity)
    runner.train()
    return algo.threads


def cartpole(SamplerCls=SerialSampler, **kwargs):
    return SamplerCls(make, dict(id="CartPole-v1"), batch_T=5, batch_B=2, max_decorrelation_steps=0, **kwargs)


@pytest.mark.timeout(60)
def test_workers_that_fill_the_cpus_leave_the_master_one_torch_thread_restored_after_training(two_threads):
    threads = train(cartpole(SerialWithWorkers, n_worker=USABLE))
    assert threads and set(threads) == {1}
    assert torch.get_num_threads() == 2


@pytest.mark.timeout(60)
def test_cpu_sampler_with_affinity_none_trains_with_the_threads_its_workers_leave(two_threads):
    sampler = cartpole(CpuSampler, start_method="fork")
    threads = train(sampler)  # affinity=None: one worker per usable CPU, up to batch_B=2 of them
    assert set(threads) == {max(1, min(2, USABLE - min(USABLE, 2)))}
    assert torch.get_num_threads() == 2


@pytest.mark.timeout(60)
def test_a_named_master_torch_threads_wins_over_the_workers_default(two_threads):
    threads = train(cartpole(SerialWithWorkers, n_worker=USABLE), affinity=dict(master_torch_threads=2))
    assert set(threads) == {2}


@pytest.mark.timeout(60)
def test_a_serial_run_keeps_torchs_thread_count(two_threads):
    assert set(train(cartpole())) == {2}


@pytest.mark.timeout(10)
def test_fitting_never_raises_torchs_thread_count_and_ignores_runs_without_workers(two_threads):
    torch.set_num_threads(1)
    fit_master_threads_to_workers(None, n_worker=1)  # on a big machine the rule would allow more than 1
    assert torch.get_num_threads() == 1
    torch.set_num_threads(2)
    fit_master_threads_to_workers(None, n_worker=0)
    assert torch.get_num_threads() == 2
    fit_master_threads_to_workers(None, n_worker=USABLE)
    assert torch.get_num_threads() == 1
