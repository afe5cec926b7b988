"""benchmarks/active_units.py: a run's network rebuilt from its params.json and checkpoint, and a network whose
first layer is dead read as dead, on real Pong frames."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch

pytest.importorskip("ale_py", reason="needs ale-py for Pong frames")
ROOT = Path(__file__).resolve().parent.parent


def load_script():
    spec = importlib.util.spec_from_file_location("active_units", ROOT / "benchmarks" / "active_units.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(60)
def test_a_dead_first_layer_reads_zero_and_a_fresh_network_reads_alive(tmp_path, capsys):
    units = load_script()
    x = units.observations("pong", 20)
    from rlrun.models.pg.atari_ff_model import AtariFfModel

    torch.manual_seed(0)
    model = AtariFfModel(tuple(x.shape[1:]), 6, orthogonal_init=True)
    alive, _, v_std = units.activity(model, x)
    assert all(share > 0.3 for share in alive.values()) and v_std > 0

    with torch.no_grad():
        model.conv.conv.conv[0].bias.fill_(-1e3)  # every unit of the first layer below zero on every frame
    run = tmp_path / "run_0"
    (run / "checkpoints").mkdir(parents=True)
    (run / "params.json").write_text(json.dumps({"env": {"game": "pong"}, "model": {"orthogonal_init": True}}))
    torch.save({"agent": model.state_dict()}, run / "checkpoints" / "itr_000000009.ckpt")
    assert units.main([str(run / "checkpoints" / "itr_000000009.ckpt"), "--frames", "20"]) == 0
    out = capsys.readouterr().out
    assert "conv.conv.conv.1 0.00" in out and "std over observations: pi 0, v 0" in out
