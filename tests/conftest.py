"""Shared fixtures: real CartPole batches from the serial sampler for algorithm tests.

Tests run with one torch thread, and so do the processes they start (``OMP_NUM_THREADS``, which
spawned workers and subprocesses inherit): the tests' models are tiny, and an intra-op thread that
spins while sampler workers or the other tests want the core slows a 2-core machine several times
over. Tests about thread settings set their own.
"""

import os

import pytest
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.gym import make
from rlrun.samplers.serial.sampler import SerialSampler

os.environ.setdefault("OMP_NUM_THREADS", "1")
torch.set_num_threads(1)

LONG_SETS = ("slow", "learning")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test belongs to one set: a case marked ``slow`` or ``learning`` (say one parameter of an
    ``integration`` test) leaves the integration set, so ``pytest -m integration`` runs no long case.

    Runs before pytest's ``-m`` selection. Only the item's own marks (its function's and its
    parameter's) are dropped; modules with long cases mark their functions, not the module.
    """
    for item in items:
        if any(item.get_closest_marker(name) for name in LONG_SETS):
            item.own_markers[:] = [mark for mark in item.own_markers if mark.name != "integration"]


@pytest.fixture
def pg_run():
    """``pg_run(algo, T, B, n_itr, seed, env_kwargs)`` -> ``(agent, sampler, samples)``: an initialized algo and one batch."""
    samplers = []

    def run(algo, T=16, B=4, n_itr=10, seed=0, env_kwargs=None):
        torch.manual_seed(seed)
        env_kwargs = dict(id="CartPole-v1") if env_kwargs is None else env_kwargs
        sampler = SerialSampler(make, env_kwargs, batch_T=T, batch_B=B, max_decorrelation_steps=0)
        samplers.append(sampler)
        agent = CategoricalPgAgent()
        examples = sampler.initialize(
            agent, seed=seed, bootstrap_value=algo.bootstrap_value, traj_info_kwargs=dict(discount=algo.discount)
        )
        algo.initialize(agent, n_itr, sampler.batch_spec, sampler.mid_batch_reset, examples)
        agent.sample_mode(0)
        samples, _ = sampler.obtain_samples(0)
        agent.train_mode(0)
        return agent, sampler, samples

    yield run
    for sampler in samplers:
        sampler.shutdown()
