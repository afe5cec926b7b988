"""The flaky-env runs of benchmarks/worker_restarts.py: 50k steps on a CartPole that faults now and then
finish under each parallel sampler with ``worker_restarts=20``, and progress.csv and debug.log show the
restarts (minutes each: the integration set)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "worker_restarts.py")
ENV = dict(os.environ, PYTHONPATH=ROOT)
ROW = re.compile(r"^(\w+) +(none|raise|exit) +(\d+) +(\d*) +(\d+) +(\d+) +([\d.]+) +(\S+) *(.*)$", re.M)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("sampler", ["cpu", "gpu", "alternating", "async_cpu"])
def test_a_50k_step_run_on_a_flaky_env_finishes_with_worker_restarts_and_logs_them(sampler, tmp_path):
    result = subprocess.run(
        [sys.executable, SCRIPT, "--samplers", sampler, "--faults", "none,raise,exit", "--log-dir", str(tmp_path)],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=880,
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    rows = {m[1]: m for m in ROW.findall(result.stdout)}
    assert set(rows) == {"none", "raise", "exit"}, result.stdout
    for fault, (kind, _, steps, restarts, logged, left, _wall, _ratio, error) in rows.items():
        assert kind == sampler and error == "" and left == "0", result.stdout
        assert int(steps) >= 50_000, result.stdout
        if fault == "none":
            assert restarts == "0" and logged == "0", result.stdout
        else:  # about 10 faults expected (1 in 5,000 steps); each restart is a column count and a log line
            assert 1 <= int(restarts) <= 20 and int(logged) == int(restarts), result.stdout
