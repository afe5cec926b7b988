"""Learning test: recurrent PPO solves CartPole-v1 observing positions only (no velocities).

Without velocities the task needs memory: a feedforward agent stays near a return of 45, a random
policy near 22. "Solved" is a greedy evaluation over 10 whole episodes averaging at least 475,
evaluating every 5k steps. Settings in masked_cartpole.py. The five-seed run (seeds 0-4, one to three
minutes each) is marked slow and stops each seed at its first solved evaluation: ``python -m pytest -m slow -s
tests/algos/pg/test_recurrent_ppo_learning.py``. A short run of one seed, checked against a lower bar,
is in the learning set.
"""

from __future__ import annotations

import pytest
from masked_cartpole import build_runner, evaluation_curve, steps_to_solve

from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.serial.sampler import SerialSampler

SOLVED_RETURN = 475.0
EVAL_EVERY = 5000
BUDGET = 150_000
# The short run: 50k steps. A feedforward agent's best over 50k steps was 52 (seeds 0 and 1), a random
# policy's is about 22.
FAST_STEPS, FAST_RETURN = 50_000, 100.0
SAMPLERS = {
    "serial": (SerialSampler, dict(master_torch_threads=1)),
    "cpu": (CpuSampler, dict(master_torch_threads=1, workers_cpus=[[0]] * 2, set_affinity=False)),
}


def run_curve(seed: int, n_steps: int, tmp_path, sampler: str = "serial") -> list[tuple[float, float]]:
    """``(cumulative env steps, evaluation return)`` every EVAL_EVERY steps of one training run."""
    SamplerCls, affinity = SAMPLERS[sampler]
    runner = build_runner(seed, n_steps, EVAL_EVERY, SamplerCls=SamplerCls, affinity=affinity)
    return evaluation_curve(runner, seed, str(tmp_path), "recurrent_ppo_masked_cartpole")


@pytest.mark.learning
@pytest.mark.timeout(300)  # 30-90 s on the shared 2-core machine: a good agent's evaluations run 5,000 steps
def test_recurrent_ppo_learns_masked_cartpole_far_beyond_random_and_memoryless_seed_0(tmp_path):
    curve = run_curve(0, FAST_STEPS, tmp_path)
    print(f"seed 0: evaluation returns {[(int(s), round(r)) for s, r in curve]}")
    assert max(r for _s, r in curve) >= FAST_RETURN, f"evaluation returns: {curve}"


@pytest.mark.slow
@pytest.mark.timeout(1800)  # stops at the first solved evaluation; a loaded machine is far slower
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_recurrent_ppo_solves_masked_cartpole_within_its_budget(seed, tmp_path):
    """Issue 34's target: every one of seeds 0-4 solves within BUDGET (measured on 2026-12-05 at 105,984,
    46,080, 46,080, 50,688 and 73,728 steps, about 60-160 s each on the shared 2-core machine;
    benchmarks/results/2026-12-05-2cpu-vm-recurrent-ppo-5-seeds.md)."""
    runner = build_runner(seed, BUDGET, EVAL_EVERY, affinity=SAMPLERS["serial"][1])
    solved, curve = steps_to_solve(runner, seed, str(tmp_path), "recurrent_ppo_masked_cartpole", SOLVED_RETURN)
    print(f"seed {seed}: solved at {solved} steps; evaluation returns {[(int(s), round(r)) for s, r in curve]}")
    assert solved is not None, f"seed {seed} did not solve within {BUDGET} steps; evaluation returns: {curve}"
