"""rlrun's own class hierarchies stay at most 4 deep (issue 31: composition where variation is).

Depth is measured as ``.ci/core_metrics.py`` measures it: a class counts itself plus its deepest chain
of rlrun bases; torch, ABC, Protocol and other outside bases do not count.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys
from types import ModuleType

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
MAX_DEPTH = 4

pytestmark = pytest.mark.timeout(120)


def _core_metrics() -> ModuleType:
    spec = importlib.util.spec_from_file_location("core_metrics", ROOT / ".ci" / "core_metrics.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_rlrun_class_chain_is_at_most_4_deep():
    # In a child process: the measure imports every rlrun module and silences warnings process-wide.
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import core_metrics; "
        "print(json.dumps(core_metrics.deepest_class_chains(limit=10**6)))"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(
        [sys.executable, "-c", script, str(ROOT / ".ci")],
        capture_output=True,
        text=True,
        timeout=100,
        cwd=ROOT,
        env=env,
        check=True,
    ).stdout
    chains = json.loads(out.strip().splitlines()[-1])
    assert len(chains) > 100, "the measure found too few rlrun classes to be trusted"
    too_deep = [f"{name} (depth {depth})" for depth, name in chains if depth > MAX_DEPTH]
    assert too_deep == [], (
        f"rlrun class chains deeper than {MAX_DEPTH}: {too_deep}. Compose a part the class holds (see "
        "rlrun/agents/recurrent_state.py) instead of adding a class level."
    )


def test_the_measure_counts_rlrun_bases_and_not_outside_ones():
    metrics = _core_metrics()

    def rlrun_class(name: str, *bases: type) -> type:
        return type(name, bases, {"__module__": "rlrun.example"})

    level = rlrun_class("Level1")
    for i in range(2, 6):
        level = rlrun_class(f"Level{i}", level)
    assert metrics._own_depth(level, {}) == 5

    import torch

    outside = type("Outside", (torch.nn.Module,), {"__module__": "somewhere_else"})
    assert metrics._own_depth(rlrun_class("OnTorch", outside, torch.nn.Module), {}) == 1
