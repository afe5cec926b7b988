"""Shared fixtures: real CartPole batches from the serial sampler for algorithm tests, and a benchmark
script run as a user runs it.

Tests run with one torch thread, and so do the processes they start (``OMP_NUM_THREADS``, which
spawned workers and subprocesses inherit): the tests' models are tiny, and an intra-op thread that
spins while sampler workers or the other tests want the core slows a 2-core machine several times
over. Tests about thread settings set their own.
"""

import os
import subprocess
import sys
from collections.abc import Callable

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


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def run_benchmark(tmp_path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run_benchmark(script, *args, timeout=s)``: ``python benchmarks/<script> args`` in a process of its
    own, in ``tmp_path``, with the checkout on ``PYTHONPATH``; fails the test, with the output's tails,
    unless it exits 0, and returns the completed process."""

    def run(script: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, os.path.join(ROOT, "benchmarks", script), *args],
            cwd=tmp_path,
            env=dict(os.environ, PYTHONPATH=ROOT),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
        return result

    return run
