"""Spawn and forkserver workers: the same samples as fork, the same failure handling, clear import errors.

Each spawned or forkserver child imports torch (1-3 s), so these tests are few.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch
from faulty_envs import FAILURE_TEXT, FaultyCartPole
from parallel_helpers import cpu_sampler, start

from rlrun.envs.gym import GymEnvWrapper
from rlrun.samplers.parallel.protocol import SamplerWorkerError
from rlrun.utils.buffer import buffer_method

pytestmark = pytest.mark.timeout(120)


def run_batches(sampler):
    """Two batches, then new weights written in place (as an optimizer does), a third batch and an evaluation."""
    agent = start(sampler, seed=4)
    batches = [buffer_method(sampler.obtain_samples(itr)[0], "clone") for itr in range(2)]
    with torch.no_grad():
        for p in agent.model.parameters():
            p.mul_(0.5)
    batches.append(buffer_method(sampler.obtain_samples(2)[0], "clone"))
    eval_returns = sorted(info.Return for info in sampler.evaluate_agent(3))
    sampler.shutdown()
    return batches, eval_returns


def new_sampler(start_method):
    return cpu_sampler(
        T=15,
        B=4,
        decorrelation=20,
        eval_n_envs=2,
        eval_max_steps=2000,
        eval_max_trajectories=4,
        start_method=start_method,
    )


@pytest.mark.parametrize("start_method", ["spawn", pytest.param("forkserver", marks=pytest.mark.integration)])
def test_workers_started_by_spawn_or_forkserver_produce_the_same_run_as_fork(start_method, leak_check):
    """Also shows the model reaches spawned workers as shared memory, not a copy: they see the new weights."""
    reference, reference_eval = run_batches(new_sampler("fork"))
    batches, eval_returns = run_batches(new_sampler(start_method))
    leak_check.assert_clean()
    for ref, got in zip(reference, batches):
        assert torch.equal(ref.env.observation, got.env.observation)
        assert torch.equal(ref.agent.action, got.agent.action)
        assert torch.equal(ref.env.reward, got.env.reward)
    assert eval_returns == reference_eval and len(eval_returns) == 4


@pytest.mark.parametrize("start_method", [pytest.param("spawn", marks=pytest.mark.integration), "forkserver"])
def test_spawn_and_forkserver_workers_report_an_env_error_within_5s(start_method, leak_check):
    env_kwargs = dict(fail_in="step", fail_seed=10 + 3)
    sampler = cpu_sampler(EnvCls=FaultyCartPole, env_kwargs=env_kwargs, T=100, start_method=start_method)
    start(sampler, seed=10)
    t0 = time.monotonic()
    with pytest.raises(SamplerWorkerError) as info:
        sampler.obtain_samples(0)
    assert time.monotonic() - t0 < 5
    assert str(info.value).startswith("Sampler worker 1 (env ranks [2, 3]) raised an error")
    assert f"{FAILURE_TEXT} at step 57" in str(info.value)
    leak_check.assert_clean()


def test_spawn_refuses_a_local_env_class_before_starting_workers(leak_check):
    class LocalCartPole(GymEnvWrapper):
        pass

    sampler = cpu_sampler(EnvCls=LocalCartPole, env_kwargs=dict(env=None), start_method="spawn")
    with pytest.raises(TypeError, match=r"EnvCls=.*LocalCartPole cannot be pickled by reference.*start_method='fork'"):
        start(sampler)


def test_spawn_refuses_an_env_class_defined_in_main_of_python_c():
    script = textwrap.dedent(
        """
        import gymnasium
        from rlrun.agents.pg.categorical import CategoricalPgAgent
        from rlrun.envs.gym import GymEnvWrapper
        from rlrun.samplers.parallel.cpu.sampler import CpuSampler

        class MainCartPole(GymEnvWrapper):
            def __init__(self):
                super().__init__(gymnasium.make("CartPole-v1"))

        sampler = CpuSampler(EnvCls=MainCartPole, env_kwargs={}, batch_T=5, batch_B=2, start_method="spawn")
        try:
            sampler.initialize(CategoricalPgAgent(), seed=0)
        except TypeError as e:
            print("REFUSED:", e)
        """
    )
    root = str(Path(__file__).parents[3])
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=100,
        env=dict(os.environ, PYTHONPATH=root),
    )
    assert "REFUSED: EnvCls=MainCartPole is defined in __main__" in result.stdout, result.stdout + result.stderr
    assert "Move it to an importable module" in result.stdout and "start_method='fork'" in result.stdout
