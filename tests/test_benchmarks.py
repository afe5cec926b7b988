"""The sampler benchmark runs end to end as a real script, with tiny settings (it measures nothing here)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_benchmark(name: str, args: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", name), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
    )


@pytest.mark.timeout(180)
def test_sampler_speed_prints_rates_ceilings_and_ratios_and_check_fails_on_missed_targets():
    tiny = ["--seconds", "0.3", "--repeats", "1", "--warmup", "0.1", "--decorrelation-steps", "0"]
    tiny += ["--batch-B", "4", "--batch-T", "2", "--only", "serial,cpu,cpu_pinned,gym_async"]
    result = run_benchmark("sampler_speed.py", [*tiny, "--check"])
    out = result.stdout
    for label in ("rlrun SerialSampler", "rlrun CpuSampler ", "workers pinned", "Gymnasium AsyncVectorEnv"):
        assert re.search(rf"{label}.*\d", out), f"no rate for {label!r}:\n{out}\n{result.stderr[-2000:]}"
    assert re.search(r"ceiling \(2 cores\)\s+[\d,]+", out), out
    for ratio in ("CpuSampler / ceiling", "CpuSampler / SerialSampler", "CpuSampler / split-batch ceiling"):
        assert re.search(rf"{re.escape(ratio)}\s+\d+\.\d\d", out), f"no value for {ratio!r}:\n{out}"
    # SubprocVecEnv was not run, so its ratio is missing and --check must fail.
    assert "CpuSampler / SubprocVecEnv (faster method)    n/a" in out
    assert result.returncode == 1 and "FAIL: missed" in out


def test_sampler_speed_rejects_an_unknown_method():
    result = run_benchmark("sampler_speed.py", ["--only", "serial,threads"])
    assert result.returncode == 2
    assert "unknown --only method(s) ['threads']" in result.stderr
