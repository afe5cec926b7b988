"""benchmarks/contention.py runs as a real script with ``--quick`` (it measures nothing here), and never
leaves its busy neighbours behind."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import psutil
import pytest

pytestmark = pytest.mark.integration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "contention.py")
ENV = dict(os.environ, PYTHONPATH=ROOT)


@pytest.mark.timeout(120)
def test_contention_benchmark_quick_prints_every_configuration_and_both_ratios_and_writes_the_report(
    tmp_path, run_benchmark
):
    out = tmp_path / "contention.txt"
    result = run_benchmark("contention.py", "--quick", "--neighbours", "1", "--out", str(out), timeout=110)
    text = result.stdout
    for sampler in ("SerialSampler", "CpuSampler"):
        for machine in ("quiet", "1 busy neighbours"):
            assert re.search(rf"{sampler}\s+{machine}\s+\d+\.\d\d", text), f"no row for {sampler} {machine}:\n{text}"
    for ratio in ("CpuSampler loaded / Serial loaded", "CpuSampler loaded / CpuSampler quiet"):
        assert re.search(rf"{re.escape(ratio)}\s+\d+\.\d\d\s+target <= ", text), f"no value for {ratio!r}:\n{text}"
    report = out.read_text()
    assert "CpuSampler loaded / Serial loaded" in report and report.count('"seconds"') == 4


@pytest.mark.timeout(150)
def test_contention_benchmark_with_auto_times_its_choice_with_the_probes_counted(tmp_path, run_benchmark):
    out = tmp_path / "contention.txt"
    result = run_benchmark("contention.py", "--quick", "--auto", "--neighbours", "1", "--out", str(out), timeout=140)
    text = result.stdout
    for machine in ("quiet", "1 busy neighbours"):
        assert re.search(rf'sampler="auto"\s+{machine}\s+\d+\.\d\d', text), text
        assert re.search(rf"auto, {machine}: chose \S.*; its probes took \d+\.\d\d s", text), text
    assert re.search(r"auto loaded / Serial loaded\s+\d+\.\d\d\s+target <= 1", text), text
    lines = out.read_text().splitlines()
    runs = [json.loads(line.split(": ", 1)[1]) for line in lines if line.startswith("round ") and "auto" in line]
    assert len(runs) == 2
    for run in runs:  # the probes ran in the training process and count in its wall time
        assert run["probe_seconds"] > 0.0 and run["seconds"] > run["probe_seconds"] and run["layout"]


def neighbours_of(process: psutil.Process) -> list[psutil.Process]:
    """The busy-loop children of ``process`` (a child that has just ended is skipped)."""
    found = []
    for child in process.children():
        try:
            if "getppid" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            pass
    return found


@pytest.mark.timeout(90)
def test_contention_benchmark_stopped_by_sigterm_kills_its_neighbours_and_its_training(tmp_path):
    bench = subprocess.Popen(
        [sys.executable, SCRIPT, "--quick", "--neighbours", "2"],
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        process = psutil.Process(bench.pid)
        deadline = time.monotonic() + 75
        while len(neighbours := neighbours_of(process)) < 2:  # the loaded runs come after the quiet ones
            assert bench.poll() is None and time.monotonic() < deadline, "the loaded runs never started"
            time.sleep(0.05)
        everyone = process.children(recursive=True)  # the neighbours, the training and its workers
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(timeout=10) == 128 + signal.SIGTERM
        _gone, alive = psutil.wait_procs(everyone, timeout=5)
        assert not alive, f"left running: {[p.cmdline() for p in alive]}"
        assert len(neighbours) == 2
    finally:
        if bench.poll() is None:
            bench.kill()
