"""benchmarks/load_kind_probe.py runs as a real script (short probes; its numbers mean nothing here): a
row of readings for each env and kind of load."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "load_kind_probe.py")


@pytest.mark.timeout(120)
def test_load_kind_probe_gives_a_reading_per_env_and_kind_of_load(tmp_path):
    out = tmp_path / "load_kind.txt"
    result = subprocess.run(
        [sys.executable, SCRIPT, "--repeats", "1", "--seconds", "0.05", "--out", str(out)],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=ROOT),
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    rows = re.findall(
        r"^(\S+) +(\d) busy loops in (this session|sessions of their own) +\d+\.\d\d\*?$", out.read_text(), re.M
    )
    assert len(rows) == 8 and {r[0] for r in rows} == {"cartpole", "busy0.5ms"}, out.read_text()
