"""Learning tests: PPO, A2C and DQN solve CartPole-v1 with fixed seeds.

"Solved" means an evaluation over 10 whole episodes averaging at least 475, reached within the
step budget (100k env steps for PPO and A2C, 50k for DQN), evaluating every 5k steps. The settings
are rlrun.experiments.configs.cartpole's. The full set (3 algorithms x 3 seeds with SerialSampler, PPO
and A2C x 3 seeds with CpuSampler; several minutes) is marked slow:
``python -m pytest -m slow tests/test_learning.py``. One PPO seed (100k steps, about 25 s idle) runs with
each sampler in the learning set: ``python -m pytest -m learning tests/test_learning.py``, beside one A2C
seed (1) run to 150k steps that must stay solved (its last evaluations average 450 or more; about 30 s idle).
"""

from __future__ import annotations

import pytest
import torch

from rlrun.experiments.configs.cartpole import CONFIGS, SOLVED_RETURN, build_runner
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context
from rlrun.utils.plotting import read_progress

EVAL_EVERY = 5000
SAMPLERS = {"serial": SerialSampler, "cpu": CpuSampler}
# CpuSampler runs use 2 unpinned workers whatever the machine, and 10 evaluation envs (a multiple of 2:
# the configs' default of 5 would round down to 4 per the rlpyt sizing rule). Such a run repeats the
# SerialSampler run with eval_n_envs=10 exactly, evaluation included.
AFFINITY = {
    "serial": dict(master_torch_threads=1),
    "cpu": dict(master_torch_threads=1, workers_cpus=[[0]] * 2, set_affinity=False),
}


def steps_to_solve(
    algo: str, seed: int, tmp_path, n_steps: int | None = None, sampler: str = "serial", eval_every: int = EVAL_EVERY
) -> tuple[float | None, list[float]]:
    torch.set_num_threads(1)
    runner = build_runner(
        algo,
        seed=seed,
        n_steps=n_steps,
        log_interval_steps=eval_every,
        affinity=AFFINITY[sampler],
        SamplerCls=SAMPLERS[sampler],
        eval_n_envs=10 if sampler == "cpu" else None,
    )
    with logger.quiet_console():
        with logger_context(str(tmp_path), seed, f"{algo}_cartpole", {}, override_prefix=True) as run_dir:
            runner.train()
    progress = read_progress(run_dir)
    returns = progress["ReturnAverage"]
    solved = next((s for s, r in zip(progress["Diagnostics/CumSteps"], returns) if r >= SOLVED_RETURN), None)
    return solved, returns


@pytest.mark.learning
@pytest.mark.timeout(300)
@pytest.mark.parametrize("sampler", ["serial", "cpu"])
def test_ppo_solves_cartpole_within_its_budget_seed_0(sampler, tmp_path):
    solved, returns = steps_to_solve("ppo", 0, tmp_path, sampler=sampler)
    assert solved is not None, f"evaluation returns every {EVAL_EVERY} steps: {returns}"


@pytest.mark.learning
@pytest.mark.timeout(600)  # about 30 s on an idle 2-core machine; 4 min beside five busy sessions
def test_a2c_stays_solved_after_solving_seed_1(tmp_path):
    # A2C's evaluations wavered for tens of thousands of steps after first reaching 475, while its critic
    # caught up with the returns (issue 34; benchmarks/results/2026-12-04-2cpu-vm-cartpole-a2c-after-solving.md).
    # With the config's faster critic, seed 1 holds 500 from 50k steps: the evaluations in the last 20% of a
    # 150k-step run (130k-150k) must average 450 or more. With the critic at the policy's rate
    # (--set algo.value_learning_rate=None) the same seed wavered until 80k steps.
    solved, returns = steps_to_solve("a2c", 1, tmp_path, n_steps=150_000, eval_every=10_000)
    last = returns[-3:]  # evaluations at 130k, 140k and 150k steps (the first row is at step 0)
    assert solved is not None and sum(last) / len(last) >= 450, f"evaluation returns every 10k steps: {returns}"


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("algo", ["ppo", "a2c", "dqn"])
def test_algorithm_solves_cartpole_within_its_step_budget(algo, seed, tmp_path):
    solved, returns = steps_to_solve(algo, seed, tmp_path)
    budget = CONFIGS[algo]["n_steps"]
    assert solved is not None and solved <= budget, f"evaluation returns every {EVAL_EVERY} steps: {returns}"


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("algo", ["ppo", "a2c"])
def test_algorithm_solves_cartpole_with_cpu_sampler(algo, seed, tmp_path):
    solved, returns = steps_to_solve(algo, seed, tmp_path, sampler="cpu")
    budget = CONFIGS[algo]["n_steps"]
    assert solved is not None and solved <= budget, f"evaluation returns every {EVAL_EVERY} steps: {returns}"
