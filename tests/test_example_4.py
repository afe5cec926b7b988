"""examples/example_4.py (A2C with an LSTM agent on Atari) runs as a real script for a few iterations,
with each sampler, and with mid-batch resets (its LSTM agent records episode starts, which the replay
restarts the state at)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = ["--game", "pong", "--n_parallel", "2", "--n_steps", "640", "--log_interval_steps", "320"]


def run_example_4(args: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", "example_4.py"), *args],
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=150,
    )


# Each sampler with a recurrent agent is tested in this process (tests/algos/pg/test_recurrent.py);
# here the script's wiring is, with one parallel sampler by default and the others in the slow set.
@pytest.mark.integration
@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    "sample_mode",
    [pytest.param(mode, marks=pytest.mark.slow) for mode in ("serial", "gpu", "alternating")] + ["cpu"],
)
def test_example_4_trains_an_lstm_agent_with_each_sampler(sample_mode, tmp_path):
    result = run_example_4([*SMOKE, "--sample_mode", sample_mode], tmp_path)
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    assert "WaitResetCollector" in result.stdout  # the default: envs wait for the batch end to reset
    (progress,) = glob.glob(str(tmp_path / "data" / "example_4" / "run_0" / "progress.csv"))
    with open(progress) as f:
        header = f.readline().strip().split(",")
        rows = f.read().strip().splitlines()
    assert {"Diagnostics/CumSteps", "lossAverage", "entropyAverage"} <= set(header)
    assert len(rows) == 2  # 640 steps of 320 per iteration, logged every iteration


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_example_4_with_mid_batch_reset_trains_with_the_reset_collector(tmp_path):
    result = run_example_4([*SMOKE, "--sample_mode", "serial", "--mid_batch_reset", "True"], tmp_path)
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    assert "using ResetCollector" in result.stdout
    (progress,) = glob.glob(str(tmp_path / "data" / "example_4" / "run_0" / "progress.csv"))
    with open(progress) as f:
        assert len(f.read().strip().splitlines()) == 3  # the header and two iterations
