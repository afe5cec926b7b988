"""``rlrun train --resume RUN_DIR``: a run killed with SIGKILL continues from its checkpoint to the same end."""

from __future__ import annotations

import csv
import glob
import os
import signal
import subprocess
import sys
import time

import pytest

from rlrun.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPS = 3200
COMMAND = ["train", "--algo", "a2c", "--env", "CartPole-v1", "--sampler", "serial", "--n-envs", "2", "--batch-T", "8",
           "--steps", str(STEPS), "--log-interval", "160", "--eval-envs", "0", "--seed", "0"]  # fmt: skip


def _rows(run_dir: str) -> list[dict[str, str]]:
    with open(os.path.join(run_dir, "progress.csv"), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _rlrun(*argv: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    return subprocess.Popen(
        [sys.executable, "-m", "rlrun", *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.mark.timeout(300)
@pytest.mark.integration
def test_run_killed_with_sigkill_resumes_to_the_steps_and_rows_of_an_uninterrupted_run(tmp_path, capsys):
    run_dir = str(tmp_path / "killed" / "run_0")
    proc = _rlrun(*COMMAND, "--log-dir", str(tmp_path / "killed"))
    try:
        deadline = time.monotonic() + 120
        # A checkpoint counts once its manifest (written after the data) exists: kill only after that.
        while not glob.glob(os.path.join(run_dir, "checkpoints", "*.json")):
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "no checkpoint within 120 s"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()  # type: ignore[union-attr]
    assert proc.returncode == -signal.SIGKILL
    killed_rows = _rows(run_dir)
    assert 0 < int(killed_rows[-1]["Diagnostics/CumSteps"]) < STEPS  # stopped part-way

    resumed = _rlrun("train", "--resume", run_dir)
    out, _ = resumed.communicate(timeout=150)
    assert resumed.returncode == 0, out
    assert f"resuming {run_dir}: a2c on CartPole-v1" in out
    assert "Resumed from" in out and out.strip().endswith(f"run folder: {run_dir}")

    # The same command, never interrupted (in this process).
    assert main([*COMMAND, "--log-dir", str(tmp_path / "whole")]) == 0
    capsys.readouterr()
    whole, rows = _rows(str(tmp_path / "whole" / "run_0")), _rows(run_dir)
    assert int(rows[-1]["Diagnostics/CumSteps"]) == int(whole[-1]["Diagnostics/CumSteps"]) == STEPS
    # Each iteration's row once, in order, as in the uninterrupted run; a serial run resumes exactly.
    for key in ("Diagnostics/Iteration", "Diagnostics/CumSteps", "ReturnAverage", "lossAverage"):
        assert [r[key] for r in rows] == [r[key] for r in whole], key


def test_resume_of_a_folder_without_an_rlrun_train_command_exits_2(tmp_path, capsys):
    assert main(["train", "--resume", str(tmp_path)]) == 2
    assert "a run folder is named run_<run-id>" in capsys.readouterr().err
    run_dir = tmp_path / "run_0"
    run_dir.mkdir()
    assert main(["train", "--resume", str(run_dir)]) == 2
    assert "no params.json there" in capsys.readouterr().err
    (run_dir / "params.json").write_text('{"name": "script"}')
    assert main(["train", "--resume", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert "started by a script" in err and "the bundled examples take --resume" in err and "rlrun info" in err


def test_train_without_algo_or_env_exits_2_naming_resume(capsys):
    assert main(["train", "--env", "CartPole-v1"]) == 2
    assert "--algo and --env are required (or --resume RUN_DIR" in capsys.readouterr().err


def test_resume_with_every_checkpoint_corrupt_exits_2_and_leaves_progress_csv_alone(tmp_path, capsys):
    at = COMMAND.index("--steps") + 1
    short = [*COMMAND[:at], "320", *COMMAND[at + 1 :]]  # 20 iterations, a checkpoint after each log row
    assert main([*short, "--log-dir", str(tmp_path)]) == 0
    run_dir = tmp_path / "run_0"
    for manifest in (run_dir / "checkpoints").glob("*.json"):
        manifest.write_text("{not json")
    before = (run_dir / "progress.csv").read_bytes()
    capsys.readouterr()
    assert main(["train", "--resume", str(run_dir), "--steps", "640"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlrun train --resume: Nothing to resume from") and "none usable" in err
    assert "rlrun train without --resume" in err
    assert (run_dir / "progress.csv").read_bytes() == before
    assert not (run_dir / "FAILED").exists()


def test_resume_of_a_run_that_still_goes_on_exits_2_naming_its_process_and_changes_nothing(tmp_path, capsys):
    at = COMMAND.index("--steps") + 1
    short = [*COMMAND[:at], "320", *COMMAND[at + 1 :]]
    assert main([*short, "--log-dir", str(tmp_path)]) == 0
    run_dir = tmp_path / "run_0"
    before = {name: (run_dir / name).read_bytes() for name in ("progress.csv", "params.json")}
    checkpoints = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    # Another process logging the run now: it holds the folder's lock.
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from rlrun.utils.logging.run_lock import RunLock; "
         "RunLock(sys.argv[1]); print('ready', flush=True); time.sleep(60)", str(run_dir)],
        env=dict(os.environ, PYTHONPATH=ROOT), stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        capsys.readouterr()
        assert main(["train", "--resume", str(run_dir), "--steps", "640"]) == 2
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err
    assert err.startswith(f"rlrun train --resume: The run folder {run_dir} is in use: pid {holder.pid} ")
    assert {name: (run_dir / name).read_bytes() for name in before} == before
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == checkpoints
    assert not (run_dir / "FAILED").exists()
