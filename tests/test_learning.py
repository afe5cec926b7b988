"""Learning tests: PPO, A2C and DQN solve CartPole-v1 with fixed seeds.

"Solved" means an evaluation over 10 whole episodes averaging at least 475, reached within the
step budget (100k env steps for PPO and A2C, 50k for DQN), evaluating every 5k steps. The settings
are rlrun.experiments.configs.cartpole's. The full set (3 algorithms x 3 seeds, a few minutes) is
marked slow: ``python -m pytest -m slow tests/test_learning.py``. One PPO seed runs by default.
"""

from __future__ import annotations

import pytest
import torch

from rlrun.experiments.configs.cartpole import CONFIGS, SOLVED_RETURN, build_runner
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context
from rlrun.utils.plotting import read_progress

EVAL_EVERY = 5000


def steps_to_solve(algo: str, seed: int, tmp_path, n_steps: int | None = None) -> tuple[float | None, list[float]]:
    torch.set_num_threads(1)
    runner = build_runner(
        algo, seed=seed, n_steps=n_steps, log_interval_steps=EVAL_EVERY, affinity=dict(master_torch_threads=1)
    )
    logger.set_console_output(False)
    try:
        with logger_context(str(tmp_path), seed, f"{algo}_cartpole", {}, override_prefix=True) as run_dir:
            runner.train()
    finally:
        logger.set_console_output(True)
    progress = read_progress(run_dir)
    returns = progress["ReturnAverage"]
    solved = next((s for s, r in zip(progress["CumSteps"], returns) if r >= SOLVED_RETURN), None)
    return solved, returns


@pytest.mark.timeout(300)
def test_ppo_solves_cartpole_within_40k_steps_seed_0(tmp_path):
    solved, returns = steps_to_solve("ppo", 0, tmp_path, n_steps=40_000)
    assert solved is not None, f"evaluation returns every {EVAL_EVERY} steps: {returns}"


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("algo", ["ppo", "a2c", "dqn"])
def test_algorithm_solves_cartpole_within_its_step_budget(algo, seed, tmp_path):
    solved, returns = steps_to_solve(algo, seed, tmp_path)
    budget = CONFIGS[algo]["n_steps"]
    assert solved is not None and solved <= budget, f"evaluation returns every {EVAL_EVERY} steps: {returns}"
