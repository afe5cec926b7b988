"""benchmarks/framework_overhead.py runs as a script and prints both rates and their ratio."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "framework_overhead.py")


@pytest.mark.timeout(120)
def test_framework_overhead_prints_rlrun_and_bare_rates_and_their_ratio(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    result = subprocess.run(
        [sys.executable, SCRIPT, "--repeats", "1", "--seconds", "0.2", "--batch-T", "4", "--profile"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert result.returncode == 0, result.stderr
    rates = dict(re.findall(r"^\s+(rlrun|bare)\s+([\d,]+) steps/s", result.stdout, re.MULTILINE))
    assert set(rates) == {"rlrun", "bare"} and all(int(v.replace(",", "")) > 0 for v in rates.values()), result.stdout
    assert re.search(r"rlrun / bare: \d+\.\d\d", result.stdout)
    assert "collect_batch" in result.stdout  # the profile names the sampler's loop
    calls = re.search(r"Python calls per time step of the batch \(cProfile\): rlrun (\d+), bare (\d+)", result.stdout)
    assert calls and int(calls[1]) > int(calls[2]) > 0, result.stdout
