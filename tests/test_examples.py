"""Each bundled example runs end to end for a few iterations as a real script, and so does the sampler
benchmark, with tiny settings (it measures nothing here)."""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_example(name: str, args: list[str], cwd, folder: str = "examples") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, folder, name), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def check(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"


def progress_columns(tmp_path, experiment: str) -> list[str]:
    """The column names of the one run's progress.csv that ``experiment`` wrote under ``tmp_path``."""
    (progress,) = glob.glob(str(tmp_path / "data" / experiment / "run_0" / "progress.csv"))
    with open(progress) as f:
        return f.readline().strip().split(",")


@pytest.mark.timeout(300)
def test_quick_start_writes_progress_params_and_a_learning_curve(tmp_path):
    result = run_example("quick_start.py", ["--n_steps", "2048", "--log_interval_steps", "1024"], tmp_path)
    check(result)
    (run_dir,) = glob.glob(str(tmp_path / "data" / "quick_start" / "run_0"))
    for name in ("progress.csv", "params.json", "debug.log", "learning_curve.png", "params.pkl"):
        assert os.path.getsize(os.path.join(run_dir, name)) > 0, name
    assert "Final evaluation return" in result.stdout
    # Short and readable in a log file: three short tables (before training and 2 rows), no nan, no bar.
    assert "nan" not in result.stdout and "\r" not in result.stdout + result.stderr
    assert len(result.stdout.splitlines()) < 60, result.stdout


@pytest.mark.timeout(300)
@pytest.mark.integration
def test_example_1_dqn_atari_runs_with_evaluation(tmp_path):
    result = run_example(
        "example_1.py", ["--game", "pong", "--n_steps", "1200", "--log_interval_steps", "600"], tmp_path
    )
    check(result)
    assert {"GameScoreAverage", "Diagnostics/CumSteps"} <= set(progress_columns(tmp_path, "example_1"))


@pytest.mark.timeout(300)
@pytest.mark.integration
def test_example_2_sac_runs_rlpyts_hopper_v3_as_v5_and_learns_and_evaluates(tmp_path):
    pytest.importorskip("mujoco", reason="example_2 needs MuJoCo (pip install rlrun[mujoco])")
    args = ["--n_steps", "300", "--min_steps_learn", "100", "--log_interval_steps", "150"]
    result = run_example("example_2.py", [*args, "--eval_max_trajectories", "10"], tmp_path)
    check(result)
    assert "Hopper-v3 runs as Hopper-v5" in result.stderr, result.stderr[-3000:]
    columns = progress_columns(tmp_path, "example_2")
    assert {"ReturnAverage", "q1LossAverage", "alphaAverage", "Diagnostics/CumSteps"} <= set(columns)
    (progress,) = glob.glob(str(tmp_path / "data" / "example_2" / "run_0" / "progress.csv"))
    with open(progress) as f:
        rows = [dict(zip(columns, line.strip().split(","))) for line in f.readlines()[1:]]
    assert float(rows[-1]["Diagnostics/CumSteps"]) == 300 and float(rows[-1]["Diagnostics/CumUpdates"]) > 0


@pytest.mark.timeout(300)
@pytest.mark.integration
def test_example_3_a2c_atari_serial_runs(tmp_path):
    result = run_example("example_3.py", ["--n_steps", "320", "--log_interval_steps", "160"], tmp_path)
    check(result)
    assert glob.glob(str(tmp_path / "data" / "example_3" / "run_0" / "progress.csv"))


@pytest.mark.timeout(300)
@pytest.mark.integration
def test_custom_env_tutorial_learns_its_corridor_on_spawned_workers(tmp_path):
    """The tutorial's claim: the optimal return 0.94, every evaluation episode at the goal, by 10k steps."""
    result = run_example("custom_env.py", ["--n_steps", "10000", "--log_interval_steps", "5000"], tmp_path)
    check(result)
    assert "Final evaluation: return 0.94, reached the goal in 100% of episodes" in result.stdout, result.stdout[-3000:]
    assert {"ReachedGoalAverage", "FurthestCellAverage"} <= set(progress_columns(tmp_path, "custom_env"))


# The scripts that train with a runner that checkpoints: all but example_6/6a, whose launcher resumes instead.
RESUMABLE = [
    "atari_dqn_async_serial.py",
    "atari_dqn_async_cpu.py",
    "atari_dqn_async_gpu.py",
    "quick_start.py",
    "example_1.py",
    "example_2.py",
    "example_3.py",
    "example_4.py",
    "example_5.py",
    "example_7.py",
    "cartpole_cpu_sampler.py",
    "custom_env.py",
    "sync_rl_nccl.py",
]


@pytest.mark.timeout(60)
@pytest.mark.integration
@pytest.mark.parametrize("name", RESUMABLE)
def test_every_checkpointing_example_takes_resume(name, tmp_path):
    result = run_example(name, ["--help"], tmp_path)
    check(result)
    assert "--resume" in result.stdout, result.stdout


@pytest.mark.timeout(300)
@pytest.mark.integration
def test_an_example_run_again_with_resume_continues_its_finished_run_without_new_rows(tmp_path):
    args = ["--n_steps", "512", "--log_interval_steps", "256", "--n_workers", "2"]
    check(run_example("cartpole_cpu_sampler.py", args, tmp_path))
    run_dir = tmp_path / "data" / "cartpole_cpu_sampler" / "run_0"
    first = (run_dir / "progress.csv").read_text()
    assert len(first.splitlines()) == 4  # the header, the evaluation before training and one per 256 steps
    assert list((run_dir / "checkpoints").glob("itr_*.ckpt"))

    result = run_example("cartpole_cpu_sampler.py", [*args, "--resume"], tmp_path)
    check(result)
    assert "Resumed from" in result.stdout and "512 steps done" in result.stdout, result.stdout[-3000:]
    assert "Final evaluation return" in result.stdout
    assert os.listdir(run_dir.parent) == ["run_0"]  # the same folder, not run_0-2
    assert (run_dir / "progress.csv").read_text() == first  # the finished run logged no more rows


@pytest.mark.timeout(180)
@pytest.mark.integration
def test_sampler_speed_benchmark_prints_rates_ceilings_and_ratios_and_check_fails_on_misses(tmp_path):
    tiny = ["--seconds", "0.3", "--repeats", "1", "--warmup", "0.1", "--decorrelation-steps", "0"]
    tiny += ["--batch-B", "4", "--batch-T", "2", "--only", "serial,cpu,cpu_pinned,gpu,alternating,gym_async"]
    result = run_example("sampler_speed.py", [*tiny, "--check"], tmp_path, folder="benchmarks")
    out = result.stdout
    labels = ("rlrun SerialSampler", "rlrun CpuSampler ", "workers pinned", "rlrun GpuSampler", "rlrun Alternating")
    for label in (*labels, "Gymnasium AsyncVectorEnv"):
        assert re.search(rf"{label}.*\d", out), f"no rate for {label!r}:\n{out}\n{result.stderr[-2000:]}"
    assert re.search(r"ceiling \(2 cores\)\s+[\d,]+", out), out
    assert re.search(r"env-only ceiling \(2 cores\)\s+[\d,]+", out), out
    ratios = ("CpuSampler / ceiling", "CpuSampler / SerialSampler", "CpuSampler / split-batch ceiling")
    ratios += ("AlternatingSampler / CpuSampler", "GpuSampler / CpuSampler", "AlternatingSampler / env-only ceiling")
    for ratio in ratios:
        assert re.search(rf"{re.escape(ratio)}\s+\d+\.\d\d", out), f"no value for {ratio!r}:\n{out}"
    # SubprocVecEnv was not run, so its ratio is missing and --check must fail.
    assert "CpuSampler / SubprocVecEnv (faster method)    n/a" in out
    assert result.returncode == 1 and "FAIL: missed" in out


@pytest.mark.integration
def test_sampler_speed_benchmark_rejects_an_unknown_method(tmp_path):
    result = run_example("sampler_speed.py", ["--only", "serial,threads"], tmp_path, folder="benchmarks")
    assert result.returncode == 2
    assert "unknown --only method(s) ['threads']" in result.stderr


@pytest.mark.integration
def test_sampler_round_trip_benchmark_times_every_worker_and_the_master(tmp_path):
    args = ["--batch-B", "4", "--batch-T", "2", "--batches", "8", "--skip", "2"]
    result = run_example("sampler_round_trip.py", args, tmp_path, folder="benchmarks")
    check(result)
    out = result.stdout
    assert re.search(r"period between rounds\s+\d+\.\d\d ms\s+\([\d,]+ steps/s\)", out), out
    for rank in (0, 1):
        assert re.search(rf"worker {rank}: wakes\s+\d+ us after the open, works\s+\d+\.\d\d ms", out), out
    assert re.search(r"master wakes\s+\d+ us after the last arrival", out), out


@pytest.mark.integration
def test_served_step_profile_splits_a_master_step_into_its_phases(tmp_path):
    args = ["--batch-B", "4", "--batch-T", "2", "--batches", "5"]
    result = run_example("served_step_profile.py", args, tmp_path, folder="benchmarks")
    check(result)
    out = result.stdout
    total = float(re.search(r"per master step (\d+\.\d+) ms", out).group(1))
    phases = [
        float(re.search(rf"{name}\s+(-?\d+\.\d+) ms", out).group(1)) for name in ("wait obs", "agent", "send", "rest")
    ]
    assert all(ms >= 0 for ms in phases[:3]), out
    assert sum(phases) == pytest.approx(total, abs=0.01), out  # the phases and the rest make up the step


@pytest.mark.timeout(600)
@pytest.mark.integration
def test_example_6_resume_relaunches_each_run_of_its_grid_into_its_own_folder(tmp_path):
    pytest.importorskip("ale_py", reason="example_6 trains on Atari (pip install rlrun[atari])")
    args = ["--n_steps", "400", "--log_interval_steps", "200", "--runs_per_setting", "1"]
    args += ["--max_decorrelation_steps", "0"]
    check(run_example("example_6.py", args, tmp_path))
    runs = sorted(glob.glob(str(tmp_path / "data" / "local" / "*" / "*" / "example_6" / "*" / "*" / "run_*")))
    assert len(runs) == 4  # 2 settings x 2 games, one run each
    before = {p: open(os.path.join(p, "progress.csv")).read() for p in runs}

    result = run_example("example_6.py", [*args, "--resume"], tmp_path)
    check(result)
    assert result.stdout.count("Resumed from") == 4, result.stdout[-3000:]
    after = sorted(glob.glob(str(tmp_path / "data" / "local" / "*" / "*" / "example_6" / "*" / "*" / "run_*")))
    assert after == runs  # the same launch folder and run folders, no run_0-2
    assert {p: open(os.path.join(p, "progress.csv")).read() for p in after} == before  # finished: no new rows
