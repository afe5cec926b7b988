"""benchmarks/auto_layout.py runs as a real script with ``--quick`` (its numbers mean nothing here): every
layout of the grid gets a measured and a predicted figure, quiet and loaded, and the summary lines that
run_all.py reads are there."""

from __future__ import annotations

import os
import re

import pytest

pytestmark = pytest.mark.integration


@pytest.mark.timeout(180)
def test_auto_layout_benchmark_quick_reports_every_layout_and_auto_share_quiet_and_loaded(tmp_path, run_benchmark):
    out = tmp_path / "auto_layout.txt"
    result = run_benchmark(
        "auto_layout.py", "--quick", "--only", "busy2ms", "--neighbours", "1", "--out", str(out), timeout=170
    )
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
