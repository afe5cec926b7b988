"""benchmarks/learning_pendulum.py runs as a real script (a few hundred steps; it measures nothing here)
and prints a row per run, the summary and the rlrun / SB3 ratio."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "learning_pendulum.py")


@pytest.mark.timeout(180)
def test_learning_pendulum_prints_a_row_per_run_and_the_summary(tmp_path):
    pytest.importorskip("stable_baselines3", reason="the benchmark compares against Stable-Baselines3")
    result = subprocess.run(
        [sys.executable, SCRIPT, "--algos", "sac", "td3", "--libs", "rlrun", "sb3", "--seeds", "0",
         "--n_steps", "200", "--eval_every", "200"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True, timeout=170,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line.split() for line in result.stdout.splitlines()]
    assert [row[:3] for row in rows[1:5]] == [["sac", "rlrun", "0"], ["sac", "sb3", "0"], ["td3", "rlrun", "0"], ["td3", "sb3", "0"]], result.stdout  # fmt: skip
    assert all(row[3] == "-200" for row in rows[1:5]), result.stdout
    assert "summary (medians over seeds" in result.stdout and "reached -200 in" in result.stdout


@pytest.mark.timeout(180)
def test_qpg_update_speed_prints_both_libraries_and_their_ratio(tmp_path):
    pytest.importorskip("stable_baselines3", reason="the benchmark compares against Stable-Baselines3")
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "qpg_update_speed.py"), "--hidden", "32", "--rounds", "1", "--steps", "3"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True, timeout=170,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "32-unit networks" in result.stdout and "rlrun / SB3" in result.stdout, result.stdout
