"""benchmarks/gpu_device_hygiene.py, the GPU smoke run of the replay-based and policy-gradient algorithms, runs
its checks on the CPU here with tiny settings (the same code paths, the gradient clip's GPU path included), and its checks
can fail: an agent that copies its Q-values back to the host is caught."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_device_hygiene.py"


def load_script(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_device_hygiene", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(90)
def test_every_algorithm_trains_with_at_most_one_host_read_per_step_and_none_by_the_agent(capsys, monkeypatch):
    script = load_script(monkeypatch)
    assert script.main(["--device", "cpu", "--tiny", "--iterations", "2", "--updates", "2"]) == 0
    out = capsys.readouterr().out
    for name in script.ALGOS:
        line = re.search(rf"^{re.escape(name)} +cpu +[\d.]+ updates/s +4 steps +host reads/step ([\d.]+) \(agent 0\) +ok$", out, re.M)  # fmt: skip
        assert line, out
        # Prioritized DQN and R2D1: each step's priorities (with its figures); A2C: one step per optimize_agent;
        # the others: opt_info, once per iteration of 2 steps.
        assert float(line.group(1)) == (1.0 if name in ("DQN-prioritized", "R2D1") or name.startswith("A2C") else 0.5)
    assert out.rstrip().endswith("RESULT: every check held")


@pytest.mark.timeout(60)
def test_an_agent_that_copies_its_outputs_to_the_host_fails_the_check(monkeypatch):
    script = load_script(monkeypatch)
    call = DqnAgent.__call__

    def to_host(self: DqnAgent, *inputs: torch.Tensor) -> torch.Tensor:
        return call(self, *inputs).cpu()  # rlpyt's habit

    monkeypatch.setattr(DqnAgent, "__call__", to_host)
    (result,) = script.run(device="cpu", tiny=True, iterations=1, updates=2, algos=("DQN",))
    # The loss's online forward, once per step, on top of the iteration's one read of opt_info.
    assert result.steps == 2 and result.host_reads == 3
    assert result.problems == ["3 host reads in 2 steps ({'other': 3})"]
