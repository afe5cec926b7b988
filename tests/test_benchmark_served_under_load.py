"""benchmarks/served_under_load.py runs as a real script with ``--quick`` (its numbers mean nothing here): a
row per load with the pair's measured speed and both predictions."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "served_under_load.py")


@pytest.mark.timeout(180)
def test_served_under_load_quick_gives_a_row_per_load_with_both_predictions(tmp_path):
    out = tmp_path / "served.txt"
    result = subprocess.run(
        [sys.executable, SCRIPT, "--quick", "--only", "busy2ms", "--neighbours", "0,1", "--out", str(out)],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=ROOT),
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    rows = re.findall(
        r"^busy2ms +(\d) busy .* gpu, 1 worker +[\d,]+ +as one busy +[\d,]+ \(\d+\.\d\d\) +auto +[\d,]+ \(\d+\.\d\d\)",
        out.read_text(),
        re.MULTILINE,
    )
    assert rows == ["0", "1"], out.read_text()
