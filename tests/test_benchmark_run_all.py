"""benchmarks/run_all.py: headline parsing, and a quick run of one step that writes the report and its plot."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "run_all.py")


def _run_all_module():
    spec = importlib.util.spec_from_file_location("run_all", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_all"] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


def test_headlines_take_the_last_match_and_compare_with_their_target_in_the_right_direction():
    run_all = _run_all_module()
    higher = run_all.Headline("x", r"ratio ([\d.]+)", 0.85)
    lower = run_all.Headline("y", r"cost ([\d.,]+)%", 3.0, higher_is_better=False)
    assert higher.find("ratio 0.5\nratio 0.9") == 0.9 and higher.met(0.9) is True and higher.met(0.8) is False
    assert lower.find("cost 1,234.5%") == 1234.5 and lower.met(2.0) is True and lower.met(4.0) is False
    assert higher.find("ratio n/a") is None and higher.met(None) is None


def test_every_step_names_an_existing_script():
    run_all = _run_all_module()
    for step in run_all.STEPS:
        assert os.path.exists(os.path.join(ROOT, step.args[0])), step.name


def test_report_gives_each_step_and_the_suites_total_time(tmp_path):
    run_all = _run_all_module()
    step = run_all.Step("demo", ("benchmarks/demo.py",), (), (run_all.Headline("demo ratio", r"ratio ([\d.]+)", 0.85),))
    outcomes = [
        run_all.Outcome(step, "python benchmarks/demo.py", 0, 60.0, seconds, "ratio 0.9", 0.1, 0.2, [0.9])
        for seconds in (600.0, 395.4)
    ]
    report = tmp_path / "report.md"
    run_all.write_report(outcomes, {"date": "d", "host": "h"}, report, quick=False)
    text = report.read_text()
    assert "The 2 steps took 16 min 35 s in all." in text
    assert "| demo | demo ratio | 0.9 | >= 0.85 | yes |" in text and "ok in 395 s" in text


@pytest.mark.timeout(200)
@pytest.mark.integration
def test_quick_run_of_one_step_writes_the_report_with_headlines_facts_and_plot(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    result = subprocess.run(
        [sys.executable, SCRIPT, "--quick", "--only", "framework_overhead", "--out-dir", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=190,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    reports = list(tmp_path.glob("*-quick.md"))
    assert len(reports) == 1, list(tmp_path.iterdir())
    text = reports[0].read_text()
    assert "| cores | " in text and "| torch | " in text and "load average" in text
    assert "SerialSampler / bare loop" in text and "rlrun / bare:" in text
    assert list(tmp_path.glob("*-quick-ratios.png")), "the plot of the headline ratios is missing"
    assert (
        "unknown step"
        in subprocess.run(
            [sys.executable, SCRIPT, "--only", "nonsense"], env=env, capture_output=True, text=True, timeout=60
        ).stderr
    )
