"""A run whose stdout and stderr are closed under it (``| tee`` killed by Ctrl-C, ``| head``, a dropped ssh
session) goes on: a signal still stops it as an interruption, not a failure, and debug.log records it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = """
import sys
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging.context import logger_context

sampler = SerialSampler(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=5, batch_B=2, max_decorrelation_steps=0)
runner = MinibatchRl(algo=A2C(), agent=CategoricalPgAgent(), sampler=sampler, n_steps=10**8, log_interval_steps=100)
with logger_context(sys.argv[1], 0, "closed_console", dict(), override_prefix=True, snapshot_mode="last"):
    runner.train()
"""


@pytest.mark.timeout(120)
def test_sigint_after_the_console_pipe_closed_is_an_interruption_recorded_in_debug_log(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONUNBUFFERED="1", RLRUN_PROGRESS="0")
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "runs")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # as with `2>&1 | tee`: both streams end in the closed pipe
        env=env,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 90
    seen = b""
    while b"Iteration" not in seen and time.monotonic() < deadline:  # the first log row is out
        seen += proc.stdout.read1(4096)
    assert b"Iteration" in seen, seen.decode(errors="replace")[-2000:]
    proc.stdout.close()  # the reader (tee) is gone; the run's next write meets a broken pipe
    time.sleep(1.0)  # a few more log rows are written into the closed pipe
    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=60)
    run_dir = tmp_path / "runs" / "run_0"
    debug_log = (run_dir / "debug.log").read_text()
    assert code == 130, debug_log[-3000:]  # rlrun's exit status for SIGINT: interrupted, not crashed
    assert not (run_dir / "FAILED").exists()
    assert "console (stdout) was closed" in debug_log
    assert "Training interrupted by SIGINT" in debug_log
    assert Path(run_dir / "progress.csv").read_text().count("\n") >= 2
