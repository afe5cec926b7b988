"""Each bundled example runs end to end for a few iterations as a real script."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_example(name: str, args: list[str], cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", name), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def check(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"


@pytest.mark.timeout(300)
def test_quick_start_writes_progress_params_and_a_learning_curve(tmp_path):
    result = run_example("quick_start.py", ["--n_steps", "2048", "--log_interval_steps", "1024"], tmp_path)
    check(result)
    (run_dir,) = glob.glob(str(tmp_path / "data" / "local" / "*" / "quick_start" / "run_0"))
    for name in ("progress.csv", "params.json", "debug.log", "learning_curve.png", "params.pkl"):
        assert os.path.getsize(os.path.join(run_dir, name)) > 0, name
    assert "Final evaluation return" in result.stdout


@pytest.mark.timeout(300)
def test_example_1_dqn_atari_runs_with_evaluation(tmp_path):
    result = run_example(
        "example_1.py", ["--game", "pong", "--n_steps", "1200", "--log_interval_steps", "600"], tmp_path
    )
    check(result)
    (progress,) = glob.glob(str(tmp_path / "data" / "local" / "*" / "example_1" / "run_0" / "progress.csv"))
    with open(progress) as f:
        header = f.readline()
    assert "GameScoreAverage" in header and "CumSteps" in header


@pytest.mark.timeout(300)
def test_example_3_a2c_atari_serial_runs(tmp_path):
    result = run_example("example_3.py", ["--n_steps", "320", "--log_interval_steps", "160"], tmp_path)
    check(result)
    assert glob.glob(str(tmp_path / "data" / "local" / "*" / "example_3" / "run_0" / "progress.csv"))
