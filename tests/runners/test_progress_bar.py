"""The training progress bar: on in a terminal (a real pseudo-terminal), off in a pipe, forced either way."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlrun.utils.logging.progress import ENV_VAR, ProgressBar, active_bar, console_print, progress_bar_wanted

REPO = Path(__file__).resolve().parents[2]

# A short A2C run on CartPole: random-ish episodes end within the first iterations, so the bar has a
# return to show. Arguments: the runner's progress_bar keyword (None, True or False).
CHILD = """
import sys
import torch
torch.set_num_threads(1)  # the test machine is shared: no thread contention
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.serial.sampler import SerialSampler

setting = {"None": None, "True": True, "False": False}[sys.argv[1]]
sampler = SerialSampler(make, dict(id="CartPole-v1"), batch_T=16, batch_B=4)
runner = MinibatchRl(algo=A2C(), agent=CategoricalPgAgent(), sampler=sampler, n_steps=640,
                     log_interval_steps=320, seed=0, progress_bar=setting)
runner.train()
print("CHILD DONE", flush=True)
"""

# The bar as tqdm draws it: "train:  50%|█████     | 320/640 [00:01<00:01, 483 steps/s, return 21.5]".
BAR = re.compile(r"train: +\d+%\|")


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env.update(extra or {})
    return env


def _run_in_pipes(setting: str, extra_env: dict[str, str] | None = None) -> tuple[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, setting],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(extra_env),
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "CHILD DONE" in done.stdout
    return done.stdout, done.stderr


def _run_in_pty(setting: str, extra_env: dict[str, str] | None = None, timeout: float = 120.0) -> str:
    """Run the child with stdout and stderr on a pseudo-terminal; return everything it wrote there."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, setting],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=_env({"COLUMNS": "120", **(extra_env or {})}),
        cwd=REPO,
        close_fds=True,
    )
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        else:
            pytest.fail(f"the child did not finish within {timeout} s")
        assert proc.wait(timeout=10) == 0, b"".join(chunks).decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        os.close(master)
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.integration
def test_progress_bar_is_off_when_output_goes_to_pipes():
    stdout, stderr = _run_in_pipes("None")
    assert not BAR.search(stdout) and not BAR.search(stderr)
    assert "\r" not in stdout + stderr  # no carriage returns in a log file


def test_progress_bar_on_a_terminal_shows_steps_speed_and_return():
    out = _run_in_pty("None")
    assert "CHILD DONE" in out
    assert BAR.search(out)
    assert "640/640" in out  # env steps done of the run's total, at the end
    assert re.search(r"steps/s, return [\d.]+\]", out)  # the speed, then the latest average return
    assert "<00:00" in out  # the time left, at the end
    # The log lines are printed above the bar, whole.
    assert "Training complete." in out


@pytest.mark.integration
def test_progress_bar_forced_on_by_env_var_in_pipes():
    _, stderr = _run_in_pipes("None", {ENV_VAR: "1"})
    assert BAR.search(stderr)


@pytest.mark.integration
def test_progress_bar_forced_off_by_keyword_on_a_terminal():
    out = _run_in_pty("False")
    assert "CHILD DONE" in out and not BAR.search(out)


def test_progress_bar_wanted_reads_keyword_then_env_var(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "0")
    assert progress_bar_wanted(True) is True
    assert progress_bar_wanted(None) is False
    monkeypatch.setenv(ENV_VAR, "on")
    assert progress_bar_wanted(None) is True
    assert progress_bar_wanted(False) is False
    monkeypatch.setenv(ENV_VAR, "maybe")
    with pytest.raises(ValueError, match="RLRUN_PROGRESS='maybe'.*1.*0"):
        progress_bar_wanted(None)
    monkeypatch.delenv(ENV_VAR)
    assert progress_bar_wanted(None) is False  # pytest captures stdout: not a terminal


def test_console_lines_go_above_an_open_bar(capsys):
    import io

    bar_file = io.StringIO()
    with ProgressBar(100, file=bar_file) as bar:
        assert active_bar() is bar
        bar.update(40, 12.5)
        console_print("a message")
    assert active_bar() is None
    assert "a message" in capsys.readouterr().out
    assert "40.0/100" in bar_file.getvalue() and "return 12.5" in bar_file.getvalue()
