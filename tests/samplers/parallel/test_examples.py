"""The parallel-sampler examples run end to end as real scripts (a few iterations each)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]


def run_example(name: str, args: list[str], cwd) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=150,
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    return result


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_cartpole_cpu_sampler_example_trains_and_evaluates(tmp_path):
    result = run_example("cartpole_cpu_sampler.py", ["--n_steps", "1024", "--log_interval_steps", "512"], tmp_path)
    assert "Final evaluation return" in result.stdout
    assert glob.glob(str(tmp_path / "data" / "cartpole_cpu_sampler" / "run_0" / "progress.csv"))


# The samplers themselves are tested in this process (tests/algos/pg/test_recurrent.py runs each);
# here the script's wiring is, with one of them by default and the others in the slow set.
@pytest.mark.integration
@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    "sample_mode",
    [pytest.param("cpu", marks=pytest.mark.slow), "gpu", pytest.param("alternating", marks=pytest.mark.slow)],
)
def test_example_3_runs_with_each_parallel_sampler(sample_mode, tmp_path):
    args = ["--sample_mode", sample_mode, "--n_parallel", "2", "--n_steps", "320", "--log_interval_steps", "160"]
    run_example("example_3.py", args, tmp_path)
    (progress,) = glob.glob(str(tmp_path / "data" / "example_3" / "run_0" / "progress.csv"))
    with open(progress) as f:
        assert "Diagnostics/CumSteps" in f.readline()


@pytest.mark.integration
@pytest.mark.timeout(240)
def test_example_5_dqn_runs_with_the_gpu_sampler(tmp_path):
    args = [
        "--n_parallel",
        "2",
        "--n_steps",
        "1200",
        "--log_interval_steps",
        "600",
        "--replay_size",
        "2000",
        "--eval_max_steps",
        "1000",
    ]
    run_example("example_5.py", args, tmp_path)
    (progress,) = glob.glob(str(tmp_path / "data" / "example_5" / "run_0" / "progress.csv"))
    with open(progress) as f:
        assert "Diagnostics/CumSteps" in f.readline()


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_example_6_launches_its_grid_of_example_6a_runs_over_the_cores(tmp_path):
    args = [
        "--runs_per_setting",
        "1",
        "--n_steps",
        "160",
        "--log_interval_steps",
        "160",
        "--max_decorrelation_steps",
        "0",
    ]
    run_example("example_6.py", args, tmp_path)
    runs = glob.glob(str(tmp_path / "data" / "local" / "*" / "*" / "example_6" / "*" / "*" / "run_0" / "progress.csv"))
    settings = {tuple(Path(p).parts[-4:-2]) for p in runs}
    assert settings == {
        (setting, game)
        for setting in ("example6_0.0007lr_16B", "example6_0.001lr_32B")
        for game in ("pong", "seaquest")
    }
    for progress in runs:
        with open(progress) as f:
            assert "Diagnostics/CumSteps" in f.readline()
