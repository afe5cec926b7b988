"""benchmarks/pg_update_speed.py runs as a real script (a round of two iterations; it measures nothing here)
and prints each library's time per iteration and the ratios run_all.py reads."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.timeout(180)
def test_pg_update_speed_times_rlrun_twice_and_sb3_for_ppo_and_a2c(tmp_path):
    pytest.importorskip("stable_baselines3", reason="the benchmark compares against Stable-Baselines3")
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "pg_update_speed.py"), "--rounds", "1", "--iterations", "2"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True, timeout=170,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    for algo in ("PPO", "A2C"):
        assert re.search(rf"^{algo} iteration", result.stdout, re.MULTILINE), result.stdout
        assert re.search(rf"{algo}: rlrun / SB3 [\d.]+ +\(with torch's default optimiser: [\d.]+\)", result.stdout)
    assert result.stdout.count("rlrun, torch's default optimiser") == 2 and result.stdout.count("SB3  ") >= 2
