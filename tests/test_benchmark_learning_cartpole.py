"""benchmarks/learning_cartpole.py runs as a real script (a few hundred steps of the DQN family; it
measures nothing here) and prints a row per run and the summary."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "learning_cartpole.py")


@pytest.mark.timeout(120)
def test_learning_cartpole_prints_a_row_per_run_and_skips_what_sb3_lacks(tmp_path):
    result = subprocess.run(
        [sys.executable, SCRIPT, "--algos", "dqn_pri", "catdqn", "--libs", "rlrun", "sb3", "--seeds", "0",
         "--n_steps", "1500", "--eval_every", "750"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True, timeout=110,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line.split() for line in result.stdout.splitlines()]
    assert ["dqn_pri", "rlrun", "0"] == rows[1][:3] and ["catdqn", "rlrun", "0"] == rows[3][:3], result.stdout
    assert "Stable-Baselines3 has no dqn_pri" in result.stdout and "final>=475 in" in result.stdout


@pytest.mark.timeout(120)
def test_set_reaches_rlruns_config_and_is_printed(tmp_path):
    def run(*assignments):
        args = [sys.executable, SCRIPT, "--algos", "dqn", "--libs", "rlrun", "--seeds", "0", "--n_steps", "600",
                "--eval_every", "300"]  # fmt: skip
        for text in assignments:
            args += ["--set", text]
        env = dict(os.environ, PYTHONPATH=ROOT)
        return subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=110)

    result = run("algo.replay_ratio=4", "sampler.batch_B=2")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "changed by --set: {'algo': {'replay_ratio': 4}, 'sampler': {'batch_B': 2}}" in result.stdout
    # A keyword the algorithm lacks fails in its constructor: the setting got there.
    result = run("algo.not_a_keyword=1")
    assert result.returncode != 0 and "not_a_keyword" in result.stderr, result.stderr[-3000:]
    result = run("runner.n_steps=5")
    assert result.returncode != 0 and "write sampler.KEY=VALUE" in result.stderr, result.stderr[-3000:]
