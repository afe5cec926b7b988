"""Real training processes stopped by signals: SIGKILL at a random moment, then resume; SIGINT and
SIGTERM in serial and CpuSampler runs (checkpoint written, workers gone, exit status)."""

from __future__ import annotations

import csv
import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from checkpoint_runs import build_runner  # noqa: E402

from rlrun.utils.logging import logger  # noqa: E402
from rlrun.utils.logging.context import logger_context  # noqa: E402

SCRIPT = Path(__file__).parent / "checkpoint_runs.py"
TIME_COLUMNS = ("CumTime (s)", "StepsPerSecond", "UpdatesPerSecond")


def start(
    run_parent: Path, algo: str = "dqn", n_steps: int = 640, sampler: str = "serial", delay: float = 0.0, resume=False
):
    args = [sys.executable, str(SCRIPT), algo, str(run_parent), "--n-steps", str(n_steps), "--sampler", sampler]
    args += ["--delay", str(delay)] + (["--resume"] if resume else [])
    stderr = open(run_parent.parent / f"stderr-{run_parent.name}-{time.monotonic_ns()}.txt", "w")
    # Its own session: the signal goes to the whole process group, as a terminal's Ctrl-C does.
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=stderr, start_new_session=True, text=True)


def wait_for_line(proc: subprocess.Popen, line: str, timeout: float = 40) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            got = proc.stdout.readline()
            if got.strip() == line:
                return
            if not got:
                break  # the process ended
    proc.kill()
    raise AssertionError(f"the training process did not print {line!r} within {timeout} s (exit {proc.poll()})")


def finish(proc: subprocess.Popen, timeout: float = 40) -> int:
    try:
        proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return proc.returncode


def rows(run_parent: Path) -> list[dict[str, str]]:
    with open(run_parent / "run_0" / "progress.csv", newline="") as f:
        return list(csv.DictReader(f))


def without_time(table):
    return [{k: v for k, v in row.items() if not k.endswith(TIME_COLUMNS)} for row in table]


def uninterrupted_rows(run_parent: Path) -> list[dict[str, str]]:
    """The same run as the script's, in this process and without interruption."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        runner = build_runner("dqn", n_steps=640)
        with logger_context(str(run_parent), 0, "ckpt", override_prefix=True):
            logger.set_console_output(False)
            runner.train()
    finally:
        torch.set_num_threads(threads)
    return rows(run_parent)


def checkpoint_itrs(run_parent: Path) -> list[int]:
    return sorted(int(p.stem[4:]) for p in (run_parent / "run_0" / "checkpoints").glob("itr_*.json"))


@pytest.mark.timeout(90)
@pytest.mark.integration
def test_a_run_killed_with_sigkill_at_a_random_moment_resumes_to_the_uninterrupted_result(tmp_path):
    seed = random.randrange(10**6)
    rng = random.Random(seed)
    kill_after, pause = rng.randrange(1, 15), rng.uniform(0, 0.05)
    cut = start(tmp_path / "cut", delay=0.02)
    wait_for_line(cut, f"ITR {kill_after}")
    time.sleep(pause)  # anywhere in the next iteration, its checkpoint write included
    os.killpg(cut.pid, signal.SIGKILL)
    assert finish(cut) == -signal.SIGKILL
    resumed = start(tmp_path / "cut", resume=True)
    assert finish(resumed) == 0, f"kill after ITR {kill_after} + {pause:.3f} s (seed {seed})"
    table = rows(tmp_path / "cut")
    assert [int(r["Diagnostics/Iteration"]) for r in table] == list(range(20)), f"seed {seed}"
    assert int(table[-1]["Diagnostics/CumSteps"]) == 640
    assert without_time(table) == without_time(uninterrupted_rows(tmp_path / "full")), f"seed {seed}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "signum, status", [(signal.SIGINT, 130), pytest.param(signal.SIGTERM, 143, marks=pytest.mark.integration)]
)
def test_a_signal_in_a_serial_run_finishes_the_iteration_writes_a_checkpoint_and_sets_the_exit_status(
    tmp_path, signum, status
):
    proc = start(tmp_path / "run", delay=0.3)
    wait_for_line(proc, "ITR 2")
    os.killpg(proc.pid, signum)
    assert finish(proc) == status
    last = checkpoint_itrs(tmp_path / "run")[-1]
    assert last in (2, 3)
    assert len(rows(tmp_path / "run")) == last + 1
    log = (tmp_path / "run" / "run_0" / "debug.log").read_text()
    assert f"Training interrupted by {signal.Signals(signum).name} after iteration {last}" in log
    # Resuming after a stop is tested above (SIGKILL) and in test_interrupt.py.


def shared_memory_files() -> set[str]:
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


@pytest.mark.timeout(90)
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_to_a_cpu_sampler_runs_group_stops_the_workers_and_leaves_no_shared_memory(
    tmp_path, signum, status
):
    """To the whole process group, as a terminal's Ctrl-C, ``timeout``, Slurm and systemd send them: the
    workers leave the decision to the master, which checkpoints, stops them and exits 128 + signum."""
    shm_before = shared_memory_files()
    proc = start(tmp_path / "run", algo="a2c", sampler="cpu", n_steps=3200, delay=0.3)
    wait_for_line(proc, "ITR 1")
    workers = psutil.Process(proc.pid).children(recursive=True)
    assert len(workers) >= 2
    os.killpg(proc.pid, signum)
    assert finish(proc) == status
    gone, alive = psutil.wait_procs(workers, timeout=5)
    assert not alive, f"workers left running: {alive}"
    assert shared_memory_files() <= shm_before
    last = checkpoint_itrs(tmp_path / "run")[-1]
    assert last >= 1 and len(rows(tmp_path / "run")) == last + 1
    log = (tmp_path / "run" / "run_0" / "debug.log").read_text()
    assert f"Training interrupted by {signal.Signals(signum).name}" in log and "sampler is shut down" in log
