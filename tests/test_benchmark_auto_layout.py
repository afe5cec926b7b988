"""benchmarks/auto_layout.py runs as a real script with ``--quick`` (its numbers mean nothing here): every
layout of the grid gets a measured and a predicted figure, quiet and loaded, and the summary lines that
run_all.py reads are there."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.integration
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
    assert re.search(r"each round's fastest / best measured: \d\.\d\d$", text, re.MULTILINE)
    assert re.search(r"one round's fastest, 1 busy neighbours: least share of the best \d\.\d\d, \d+ of 1 below", text)
    # The screen auto runs first when told a run's length: its serial timing against the grid's, its estimate.
    assert re.search(r"^  the screen \(\d+\.\d\d s\): serial at [\d,]+ steps/s, \d+\.\d\dx the grid's serial$", text, re.MULTILINE)  # fmt: skip
    assert re.search(r"auto's probes took \d+\.\d\d s, estimated beforehand at \d+\.\d\d s", text)
    assert re.search(r"the screen: [\d.]+-[\d.]+ s; its estimate / the probes' time: [\d.]+-[\d.]+ \(median [\d.]+\)", text)  # fmt: skip
    assert "choice: " in out.read_text()


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_auto_layout_benchmark_no_quiet_measures_beside_the_neighbours_alone(tmp_path, run_benchmark):
    result = run_benchmark(
        "auto_layout.py", "--quick", "--only", "busy2ms", "--neighbours", "1", "--no-quiet", timeout=110
    )
    assert "== busy2ms, 1 busy neighbours" in result.stdout and "== busy2ms, quiet" not in result.stdout


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_auto_layout_benchmark_refuses_to_measure_nothing():
    script = str(ROOT / "benchmarks" / "auto_layout.py")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, script, "--no-quiet", "--no-loaded"], capture_output=True, text=True, timeout=50, env=env)  # fmt: skip
    assert result.returncode == 2 and "--no-quiet and --no-loaded leave nothing to measure" in result.stderr


def load_script():
    spec = importlib.util.spec_from_file_location("auto_layout", ROOT / "benchmarks" / "auto_layout.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["auto_layout"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(60)
def test_each_rounds_fastest_is_scored_by_its_median_against_the_best_median():
    round_pick_shares = load_script().round_pick_shares
    # "a" is best by its median (100); round 2's noise made "b" fastest there, and b's median is 80.
    timings = {"a": [100.0, 60.0, 100.0], "b": [90.0, 80.0, 70.0], "c": [10.0, 10.0, 10.0]}
    assert round_pick_shares(timings) == [1.0, 0.8, 1.0]
    # Quiet timings that agree pick the best every round.
    assert round_pick_shares({"a": [5.0, 5.1], "b": [4.0, 4.1]}) == [1.0, 1.0]
