"""benchmarks/a2c_floor.py runs as a real script (one round of two iterations; it measures nothing here) and
prints each method's time per step, the bare loop's parts and the three ratios; the bare loop is a working A2C."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.timeout(180)
def test_a2c_floor_times_sb3_rlrun_and_the_bare_loop(tmp_path):
    pytest.importorskip("stable_baselines3", reason="the benchmark compares against Stable-Baselines3")
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "a2c_floor.py"), "--rounds", "1", "--iterations", "2"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True, timeout=170,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("sb3", "rlrun", "bare"):
        assert re.search(rf"^  {name} +[\d.]+ us per env step$", result.stdout, re.M), result.stdout
    assert re.search(r"env steps [\d.]+ us, update [\d.]+ us, policy and loop -?[\d.]+ us", result.stdout), (
        result.stdout
    )
    for pair in ("rlrun / sb3", "bare / sb3", "rlrun / bare"):
        assert re.search(rf"^  {pair}: [\d.]+ ", result.stdout, re.M), result.stdout


@pytest.mark.timeout(120)
def test_the_bare_loop_learns_cartpole():
    """The floor is a real A2C: 500 of its iterations (20,000 steps) lift CartPole's episode return from
    about 20 (a random policy) to well above 100 (239 on seed 0, 207 and 180 on seeds 1 and 2)."""
    import torch

    spec = importlib.util.spec_from_file_location("a2c_floor", os.path.join(ROOT, "benchmarks", "a2c_floor.py"))
    a2c_floor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(a2c_floor)
    torch.set_num_threads(1)
    bare = a2c_floor.BareA2C(seed=0)
    bare.advance(20)
    first = sum(bare.finished) / len(bare.finished)
    bare.advance(480)
    last = bare.finished[-10:]
    assert first < 40, first
    assert sum(last) / len(last) > 100, (first, last)
