"""One writer per run folder: a resume of a folder whose run still goes on is refused, naming the run's
process; the lock goes with its process however it ends, and its forked workers do not keep it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context
from rlrun.utils.logging.run_lock import LOCK_FILE, RunFolderBusyError

pytestmark = pytest.mark.timeout(90)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A run that logs into <log_dir>/run_0 and stays there; with "fork", it first forks a child that outlives it.
HOLDER = textwrap.dedent(
    """
    import multiprocessing as mp, sys, time
    from rlrun.utils.logging.context import logger_context

    def linger():
        time.sleep(120)

    if __name__ == "__main__":
        log_dir, fork = sys.argv[1], sys.argv[2] == "fork"
        with logger_context(log_dir, 0, "holder", override_prefix=True, resume=True):
            if fork:
                child = mp.get_context("fork").Process(target=linger, daemon=False)
                child.start()
                print("child", child.pid, flush=True)
            print("ready", flush=True)
            time.sleep(120)
    """
)


def start_holder(tmp_path, fork: bool) -> tuple[subprocess.Popen[str], int | None]:
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "logs"), "fork" if fork else "no"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    child = None
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("child"):
            child = int(line.split()[1])
        if line.strip() == "ready":
            return proc, child
    raise AssertionError(f"the holder exited with {proc.wait()} before it held the folder")


def resume_once(log_dir) -> str:
    with logger_context(str(log_dir), 0, "second", override_prefix=True, resume=True) as run_dir:
        logger.record_tabular("x", 1)
        logger.dump_tabular()
    return run_dir


def test_a_resume_while_the_run_goes_on_is_refused_with_its_pid_and_goes_ahead_once_it_is_killed(tmp_path):
    holder, _ = start_holder(tmp_path, fork=False)
    try:
        started = time.monotonic()
        with pytest.raises(RunFolderBusyError, match=rf"run_0 is in use: pid {holder.pid} on .*holder\.py") as info:
            resume_once(tmp_path / "logs")
        assert time.monotonic() - started < 10
        assert "another log_dir or run_ID" in str(info.value)
        assert not (tmp_path / "logs" / "run_0" / "progress.csv").read_text().strip()  # nothing written by the second
    finally:
        holder.kill()
        holder.wait()
    # SIGKILL gave the holder no chance to clean up: its lock file stays, and the lock went with it.
    assert (tmp_path / "logs" / "run_0" / LOCK_FILE).exists()
    run_dir = resume_once(tmp_path / "logs")
    assert (tmp_path / "logs" / "run_0" / "progress.csv").read_text().splitlines() == ["x", "1"]
    assert open(os.path.join(run_dir, LOCK_FILE)).read().startswith(f"pid {os.getpid()} ")


def test_a_forked_worker_that_outlives_its_killed_master_does_not_keep_the_folder(tmp_path):
    holder, child = start_holder(tmp_path, fork=True)
    assert child is not None
    try:
        holder.kill()
        holder.wait()
        assert psutil.pid_exists(child)
        resume_once(tmp_path / "logs")  # would raise RunFolderBusyError if the child held the lock
    finally:
        holder.kill()
        if psutil.pid_exists(child):
            os.kill(child, signal.SIGKILL)


def test_the_lock_is_released_when_the_context_ends_also_by_an_error(tmp_path):
    with pytest.raises(RuntimeError), logger_context(str(tmp_path), 0, "a", override_prefix=True, resume=True):
        logger.record_tabular("x", 1)
        logger.dump_tabular()
        raise RuntimeError("the run failed")
    resume_once(tmp_path)  # the same process takes it again at once
    run_dir = resume_once(tmp_path)
    assert open(os.path.join(run_dir, "progress.csv")).read().splitlines() == ["x", "1", "1", "1"]
