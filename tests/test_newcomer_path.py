"""A newcomer's path, with the commands written as the README writes them: the quick start, Ctrl-C,
the resume it advises, ``rlrun info``, ``rlrun play --video`` and ``rlrun plot``; each step's exit status
and output checked."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICK_START = os.path.join(ROOT, "examples", "quick_start.py")


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=ROOT, PYTHONUNBUFFERED="1", RLRUN_PROGRESS="0", OMP_NUM_THREADS="1")


def _rlrun(cwd, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rlrun", *argv], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=120
    )


def _rows(run_dir: str) -> list[dict[str, str]]:
    with open(os.path.join(run_dir, "progress.csv"), newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.integration
@pytest.mark.timeout(400)
def test_quick_start_ctrl_c_resume_info_play_video_and_plot(tmp_path):
    steps = ["--n_steps", "6144", "--log_interval_steps", "1024"]
    proc = subprocess.Popen(
        [sys.executable, QUICK_START, *steps], cwd=tmp_path, env=_env(), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    seen, deadline = [], time.monotonic() + 240
    while time.monotonic() < deadline:  # until the second log row: a checkpoint is on disk
        line = proc.stdout.readline()
        seen.append(line)
        if sum("CumSteps" in s for s in seen) >= 3:  # the evaluation before training, then two rows
            break
    proc.send_signal(signal.SIGINT)
    out = "".join(seen) + proc.stdout.read()
    assert proc.wait(timeout=60) == 130, out[-3000:]  # interrupted, not failed
    run_dir = str(tmp_path / "data" / "quick_start" / "run_0")
    assert "Continue it by running `python " in out and "quick_start.py" in out and "--resume" in out
    rows_before = len(_rows(run_dir))
    assert 2 <= rows_before < 7 and not os.path.exists(os.path.join(run_dir, "FAILED"))

    info = _rlrun(tmp_path, "info", run_dir)
    assert info.returncode == 0, info.stderr
    assert "what: PPO with CategoricalPgAgent on CartPole-v1" in info.stdout
    assert "state: stopped before its end" in info.stdout and "resume: cd " in info.stdout

    resumed = subprocess.run(
        [sys.executable, QUICK_START, *steps, "--resume"], cwd=tmp_path, env=_env(), capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert (
        "Resumed from" in resumed.stdout + resumed.stderr
        or "Resumed from" in open(os.path.join(run_dir, "debug.log")).read()
    )
    rows = _rows(run_dir)
    steps_logged = [int(r["Diagnostics/CumSteps"]) for r in rows]
    assert steps_logged == sorted(steps_logged) and steps_logged[-1] >= 6144 and len(rows) == 7

    info = _rlrun(tmp_path, "info", run_dir)
    assert info.returncode == 0 and "state: finished" in info.stdout and "latest return:" in info.stdout

    video = tmp_path / "play.mp4"
    play = _rlrun(tmp_path, "play", run_dir, "--episodes", "1", "--max-steps", "50", "--video", str(video))
    assert play.returncode == 0, play.stderr
    assert "PPO on CartPole-v1 (a script's run)" in play.stdout and "video: " in play.stdout
    assert video.stat().st_size > 1000

    png = tmp_path / "curve.png"
    plot = _rlrun(tmp_path, "plot", run_dir, "-o", str(png))
    assert plot.returncode == 0, plot.stderr
    assert png.stat().st_size > 1000
