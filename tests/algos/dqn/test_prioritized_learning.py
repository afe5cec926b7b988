"""Learning: DQN with prioritized replay solves CartPole-v1 in no more steps than uniform DQN.

Both use rlrun.experiments.configs.cartpole's DQN settings (the second with ``prioritized_replay=True``)
and the learning tests' definition of solved: an evaluation over 10 whole episodes averaging at least
475, evaluating every 5k steps, within the 50k-step budget. A run stops at its first solved
evaluation. The comparison is of the median steps over seeds 0, 1 and 2 (six runs, several minutes:
``python -m pytest -m slow tests/algos/dqn/test_prioritized_learning.py``).
"""

from __future__ import annotations

import statistics

import pytest
import torch

from rlrun.experiments.configs.cartpole import CONFIGS, SOLVED_RETURN, build_runner
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context

EVAL_EVERY = 5000
SEEDS = (0, 1, 2)


class SolvedError(Exception):
    """Raised at the first solved evaluation, with the sampled steps, to end the run there."""


def steps_to_solve(prioritized: bool, seed: int, tmp_path) -> int | None:
    """Sampled steps at the first evaluation averaging ``SOLVED_RETURN``, or None within the budget."""
    torch.set_num_threads(1)
    runner = build_runner(
        "dqn", seed=seed, log_interval_steps=EVAL_EVERY, overrides=dict(algo=dict(prioritized_replay=prioritized))
    )
    evaluate = runner.evaluate_agent

    def evaluate_and_stop_when_solved(itr):
        traj_infos, eval_time = evaluate(itr)
        returns = [info["Return"] for info in traj_infos]
        if itr > 0 and returns and sum(returns) / len(returns) >= SOLVED_RETURN:
            raise SolvedError((itr + 1) * runner.itr_batch_size)
        return traj_infos, eval_time

    runner.evaluate_agent = evaluate_and_stop_when_solved
    try:
        with (
            logger.quiet_console(),
            logger_context(str(tmp_path), seed, f"dqn_pri{int(prioritized)}", {}, override_prefix=True),
        ):
            runner.train()
    except SolvedError as solved:
        return solved.args[0]
    return None


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_prioritized_dqn_solves_cartpole_in_no_more_steps_than_uniform(tmp_path):
    budget = CONFIGS["dqn"]["n_steps"]
    steps = {
        name: [steps_to_solve(prioritized, seed, tmp_path / f"{name}{seed}") for seed in SEEDS]
        for name, prioritized in (("uniform", False), ("prioritized", True))
    }
    # Unsolved counts as past the budget.
    median = {name: statistics.median(budget + 1 if s is None else s for s in runs) for name, runs in steps.items()}
    print(f"steps to solve per seed {SEEDS}: {steps}; medians {median}")
    assert median["prioritized"] <= budget, steps
    assert median["prioritized"] <= median["uniform"], steps
