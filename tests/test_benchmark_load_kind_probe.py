"""benchmarks/load_kind_probe.py runs as a real script (short probes; its numbers mean nothing here): a
row of readings for each env and kind of load."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.integration


@pytest.mark.timeout(120)
def test_load_kind_probe_gives_a_reading_per_env_and_kind_of_load(tmp_path, run_benchmark):
    out = tmp_path / "load_kind.txt"
    run_benchmark("load_kind_probe.py", "--repeats", "1", "--seconds", "0.05", "--out", str(out), timeout=110)
    text = out.read_text()
    rows = re.findall(r"^(\S+) +(\d) busy loops in (this session|sessions of their own) +\d+\.\d\d\*?$", text, re.M)
    assert len(rows) == 8 and {r[0] for r in rows} == {"cartpole", "busy0.5ms"}, text
