"""benchmarks/dqn_update_speed.py runs as a real script (one round of two gradient steps; it measures
nothing here) and prints each timing and both ratios."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.timeout(180)
def test_dqn_update_speed_times_both_rlrun_losses_and_sb3(tmp_path):
    pytest.importorskip("stable_baselines3", reason="the benchmark compares against Stable-Baselines3")
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "dqn_update_speed.py"), "--rounds", "1", "--steps", "2"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True, timeout=170,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.search(r"^DQN gradient step \(batch 64, 256-unit MLP\), 1 rounds of 2:", result.stdout, re.M)
    assert re.search(r"^  SB3 +[\d.]+ ms$", result.stdout, re.M), result.stdout
    assert re.search(r"double DQN\) / SB3: [\d.]+$", result.stdout, re.M), result.stdout
    assert re.search(r"the Zoo's loss / SB3: [\d.]+$", result.stdout, re.M), result.stdout
