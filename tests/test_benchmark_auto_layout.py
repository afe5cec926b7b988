"""benchmarks/auto_layout.py runs as a real script with ``--quick`` (its numbers mean nothing here): every
layout of the grid gets a measured and a predicted figure, quiet and loaded, and the summary lines that
run_all.py reads are there."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "auto_layout.py")
ENV = dict(os.environ, PYTHONPATH=ROOT)


@pytest.mark.timeout(180)
def test_auto_layout_benchmark_quick_reports_every_layout_and_auto_share_quiet_and_loaded(tmp_path):
    out = tmp_path / "auto_layout.txt"
    result = subprocess.run(
        [sys.executable, SCRIPT, "--quick", "--only", "busy2ms", "--neighbours", "1", "--out", str(out)],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    text = result.stdout
    for machine in ("quiet", "1 busy neighbours"):
        assert f"== busy2ms, {machine}" in text
    row = r" +[\d,]+ +[\d,]+ +\d+\.\d\d +\d+%$"  # measured, predicted, pred/meas, the rounds' spread
    assert re.search(r"^\*? +serial" + row, text, re.MULTILINE), text
    assert re.search(r"^\*? +cpu, 2 workers" + row, text, re.MULTILINE) or os.cpu_count() == 1
    assert re.search(r"rounds spread, 1 busy neighbours: median \d+%, largest \d+%", text)
    assert re.search(r"auto's least share of the best: \d\.\d\d", text)
    assert re.search(r"largest prediction error: \d+%", text)
    assert "choice: " in out.read_text()
