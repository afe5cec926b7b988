"""benchmarks/served_under_load.py runs as a real script with ``--quick`` (its numbers mean nothing here): a
row per load with the pair's measured speed and both predictions."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.integration


@pytest.mark.timeout(180)
def test_served_under_load_quick_gives_a_row_per_load_with_both_predictions(tmp_path, run_benchmark):
    out = tmp_path / "served.txt"
    run_benchmark(
        "served_under_load.py", "--quick", "--only", "busy2ms", "--neighbours", "0,1", "--out", str(out), timeout=170
    )
    rows = re.findall(
        r"^busy2ms +(\d) busy .* gpu, 1 worker +[\d,]+ +as one busy +[\d,]+ \(\d+\.\d\d\) +auto +[\d,]+ \(\d+\.\d\d\)",
        out.read_text(),
        re.MULTILINE,
    )
    assert rows == ["0", "1"], out.read_text()
