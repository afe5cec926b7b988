"""Loading a run's snapshot and playing its agent: the recipe in docs/checkpoints.md, run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.runners.play import play_episodes
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging.context import logger_context
from rlrun.utils.logging.snapshot import load_snapshot, snapshot_path

DOC = Path(__file__).resolve().parents[2] / "docs" / "checkpoints.md"


def _recipe() -> str:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"<!-- run by tests/runners/test_play.py -->\n```python\n(.*?)```", text, re.S)
    assert match, "the recipe's code block is gone from docs/checkpoints.md"
    return match.group(1)


def _train(tmp_path, snapshot_mode: str) -> str:
    sampler = SerialSampler(make, dict(id="CartPole-v1"), batch_T=8, batch_B=2)
    runner = MinibatchRl(
        algo=A2C(), agent=CategoricalPgAgent(), sampler=sampler, n_steps=64, log_interval_steps=32, seed=0
    )
    with logger_context(str(tmp_path), 0, "a2c", snapshot_mode=snapshot_mode, override_prefix=True) as run_dir:
        runner.train()
    return run_dir


def test_docs_recipe_loads_the_snapshot_and_plays_five_episodes(tmp_path, capsys):
    run_dir = _train(tmp_path, "last")
    capsys.readouterr()
    namespace = {"run_dir": run_dir}
    exec(compile(_recipe(), str(DOC), "exec"), namespace)
    returns = namespace["returns"]
    assert len(returns) == 5 and all(r >= 1 for r in returns)  # CartPole pays 1 a step
    assert "5 episodes after 64 training steps" in capsys.readouterr().out
    # The weights are the trained ones, not a fresh agent's.
    trained = namespace["agent"].state_dict()
    snapshot = torch.load(Path(run_dir) / "params.pkl", weights_only=True)
    for key, value in snapshot["agent_state_dict"].items():
        assert torch.equal(trained[key], value)


def test_snapshot_path_takes_the_newest_numbered_snapshot_and_names_the_fix_without_one(tmp_path):
    run_dir = _train(tmp_path / "all", "all")
    assert snapshot_path(run_dir).name == "itr_3.pkl"  # of itr_1 and itr_3 (4 iterations, a row every 2)
    assert load_snapshot(Path(run_dir) / "itr_1.pkl")["itr"] == 1
    with pytest.raises(FileNotFoundError, match="snapshot_mode='none'.*snapshot_mode='last'"):
        snapshot_path(_train(tmp_path / "none", "none"))


def test_play_episodes_stops_long_episodes_at_max_steps():
    env = make(id="CartPole-v1")
    agent = CategoricalPgAgent()
    agent.initialize(env.spaces)
    assert play_episodes(agent, env, n_episodes=3, max_steps=2) == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError, match="n_episodes"):
        play_episodes(agent, env, n_episodes=0)
