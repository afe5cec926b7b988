"""AsyncRl and AsyncRlEval checkpoint and resume as the synchronous runners do: killed or stopped runs continue
in their folder, each row once, up to the uninterrupted run's steps; nothing usable refuses (real processes,
CartPole, the script in async_resume_run.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlrun.utils.plotting import read_progress

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
N_STEPS = 20_000  # 625 batches of 32: long enough to be stopped in the middle on a busy machine


def start(run_parent: Path, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    return subprocess.Popen(
        [sys.executable, str(HERE / "async_resume_run.py"), str(run_parent), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def finish(process: subprocess.Popen, timeout: float = 200) -> str:
    out, _ = process.communicate(timeout=timeout)
    return out


def wait_for_checkpoints(run_dir: Path, count: int, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while len(list((run_dir / "checkpoints").glob("itr_*.json"))) < count:
        assert process.poll() is None, f"the run ended before its checkpoint {count}:\n{finish(process)[-3000:]}"
        assert time.monotonic() < deadline, "no checkpoint in time"
        time.sleep(0.05)


def steps_column(run_dir: Path) -> list[float]:
    return read_progress(str(run_dir))["Diagnostics/CumSteps"]


def check_rows_continue(run_dir: Path, n_steps: int, row_steps: int, before_rows: int) -> list[float]:
    """Every row once, in order, the last at ``n_steps``; the resumed attempt added rows after the kept ones."""
    steps = steps_column(run_dir)
    assert steps == sorted(set(steps)), steps  # no row twice, none out of order
    assert steps[-1] == n_steps
    assert all(s % row_steps == 0 for s in steps[:-1]), steps
    assert len(steps) > before_rows
    return steps


@pytest.mark.timeout(400)
@pytest.mark.parametrize("sampler", ["serial", pytest.param("cpu", marks=pytest.mark.integration)])
def test_an_async_run_killed_with_sigkill_resumes_in_its_folder_and_its_rows_continue(sampler, tmp_path):
    run_dir = tmp_path / "run_0"
    first = start(tmp_path, "--sampler", sampler, "--n-steps", str(N_STEPS))
    wait_for_checkpoints(run_dir, 2, first)
    os.killpg(first.pid, signal.SIGKILL)
    finish(first)
    assert first.returncode == -signal.SIGKILL
    rows_killed = len(steps_column(run_dir))

    out = finish(start(tmp_path, "--sampler", sampler, "--n-steps", str(N_STEPS), "--resume"))
    assert "Resumed from" in out and "an empty replay" in out, out[-3000:]
    assert "Training complete." in out, out[-3000:]
    steps = check_rows_continue(run_dir, N_STEPS, 320, rows_killed)
    assert len(steps) == N_STEPS // 320 + 1  # one row per 320 steps (the 62nd at 19,840) and the final one
    assert os.listdir(tmp_path) == ["run_0"]
    record = json.loads((run_dir / "run.json").read_text())
    assert record["runner"].endswith("AsyncRl") and record["checkpoints"] is True
    progress = read_progress(str(run_dir))
    assert progress["Diagnostics/CumUpdates"][-1] > progress["Diagnostics/CumUpdates"][rows_killed - 1]


@pytest.mark.timeout(400)
def test_ctrl_c_stops_an_async_eval_run_with_a_checkpoint_and_status_130_and_resume_finishes_it(tmp_path):
    run_dir = tmp_path / "run_0"
    first = start(tmp_path, "--eval", "--n-steps", str(N_STEPS))
    wait_for_checkpoints(run_dir, 1, first)
    os.kill(first.pid, signal.SIGINT)
    out = finish(first)
    assert first.returncode == 130, out[-3000:]
    assert "running" in out and "again with resume" in out, out[-3000:]  # the next step for a script's run
    manifests = sorted((run_dir / "checkpoints").glob("itr_*.json"))
    stopped_at = json.loads(manifests[-1].read_text())["itr"]
    rows_stopped = len(steps_column(run_dir))

    out = finish(start(tmp_path, "--eval", "--n-steps", str(N_STEPS), "--resume"))
    assert f"continuing at sampler batch {stopped_at + 1} " in out, out[-3000:]
    steps = steps_column(run_dir)
    assert steps[0] == 0 and steps.count(0) == 1  # the evaluation before training is not run again
    check_rows_continue(run_dir, N_STEPS, 320, rows_stopped)


@pytest.mark.timeout(300)
def test_resuming_a_finished_async_run_adds_no_row_and_a_fresh_folder_starts_at_zero(tmp_path):
    out = finish(start(tmp_path, "--n-steps", "960", "--resume"))  # nothing there yet: starts at iteration 0
    assert "No checkpoint in" in out and "Training complete." in out, out[-3000:]
    progress = tmp_path / "run_0" / "progress.csv"
    before = progress.read_bytes()
    assert steps_column(tmp_path / "run_0") == [320, 640, 960]

    out = finish(start(tmp_path, "--n-steps", "960", "--resume"))
    assert "continuing at sampler batch 30 of 30" in out, out[-3000:]
    assert progress.read_bytes() == before


@pytest.mark.timeout(300)
def test_an_async_resume_with_only_corrupt_checkpoints_refuses_and_keeps_progress_csv_byte_identical(tmp_path):
    finish(start(tmp_path, "--n-steps", "960"))
    run_dir = tmp_path / "run_0"
    for data in (run_dir / "checkpoints").glob("itr_*.ckpt"):
        data.write_bytes(data.read_bytes()[:100])  # truncated
    before = (run_dir / "progress.csv").read_bytes()

    resumed = start(tmp_path, "--n-steps", "960", "--resume")
    out = finish(resumed)
    assert resumed.returncode != 0
    assert "NothingToResumeError" in out and "none usable" in out, out[-3000:]
    assert (run_dir / "progress.csv").read_bytes() == before
    assert not (run_dir / "FAILED").exists()
