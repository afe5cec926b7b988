"""rlpyt's asynchronous Atari DQN examples run end to end as scripts for a few iterations (tiny settings: a
few dozen gradient steps of the Atari model on the CPU; AsyncGpuSampler's CPU path, no CUDA here).

Marked slow: on the busy 2-core machine they were written on they took 457 s, 208 s and 55 s."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest

pytest.importorskip("ale_py", reason="the Atari examples need ale-py (pip install rlrun[atari])")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMOKE = ["--n_steps", "480", "--min_steps_learn", "320", "--replay_size", "2000", "--log_interval_steps", "240"]
SMOKE += ["--eval_max_steps", "400"]


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    "script, extra",
    [("atari_dqn_async_serial.py", []), ("atari_dqn_async_cpu.py", []), ("atari_dqn_async_gpu.py", ["--batch_B", "4"])],
)
def test_async_atari_example_runs(script, extra, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "examples") + os.pathsep + ROOT, OMP_NUM_THREADS="1")
    command = [sys.executable, os.path.join(ROOT, "examples", script), "--game", "pong", "--run_ID", "0", *SMOKE]
    command += extra
    result = subprocess.run(
        command,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=880,
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    run_dir = tmp_path / "data" / script.removesuffix(".py") / "run_0"
    with open(run_dir / "progress.csv") as f:
        text = f.read()
    header, *rows = text.strip().split("\n")
    columns = header.split(",")
    assert "GameScoreAverage" in columns and len(rows) >= 2
    last = dict(zip(columns, rows[-1].split(",")))
    assert float(last["Diagnostics/CumSteps"]) >= 480 and float(last["Diagnostics/CumUpdates"]) > 0
    assert glob.glob(str(run_dir / "checkpoints" / "itr_*.ckpt"))  # checkpoints by default
    if script != "atari_dqn_async_serial.py":
        return
    # --resume after the run finished: it continues run_0 from its last checkpoint and logs no more rows.
    result = subprocess.run([*command, "--resume"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=880)
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    assert "Resumed from" in result.stdout, result.stdout[-3000:]
    assert (run_dir / "progress.csv").read_text() == text
    assert os.listdir(run_dir.parent) == ["run_0"]
