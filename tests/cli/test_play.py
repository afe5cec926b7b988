"""``rlrun play RUN_DIR``: the agent of a ``rlrun train`` run, rebuilt from its params.json and snapshot, plays."""

from __future__ import annotations

import os
import re

from rlrun.cli import main

TRAIN = ["train", "--algo", "a2c", "--env", "CartPole-v1", "--n-envs", "2", "--batch-T", "8", "--steps", "64",
         "--log-interval", "32", "--eval-envs", "0", "--seed", "0", "--checkpoint-every", "0"]  # fmt: skip


def test_play_loads_the_trained_agent_and_prints_each_episodes_return(tmp_path, capsys):
    assert main([*TRAIN, "--log-dir", str(tmp_path)]) == 0
    run_dir = str(tmp_path / "run_0")
    assert os.path.isfile(os.path.join(run_dir, "params.pkl"))  # rlrun train keeps the last snapshot
    capsys.readouterr()
    assert main(["play", run_dir, "--episodes", "3"]) == 0
    out = capsys.readouterr().out
    assert "rlrun play: a2c on CartPole-v1, snapshot of iteration 3 (64 training steps)" in out
    returns = [float(r) for r in re.findall(r"^episode \d: return (\S+)$", out, re.M)]
    assert len(returns) == 3 and all(r >= 1 for r in returns)
    assert f"average return over 3 episodes: {sum(returns) / 3:g}" in out


def test_play_stops_episodes_at_max_steps(tmp_path, capsys):
    assert main([*TRAIN, "--log-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["play", str(tmp_path / "run_0"), "--episodes", "2", "--max-steps", "3"]) == 0
    assert "average return over 2 episodes: 3" in capsys.readouterr().out


def test_play_of_a_folder_not_made_by_rlrun_train_exits_2_naming_the_recipe(tmp_path, capsys):
    (tmp_path / "params.json").write_text('{"name": "script"}')
    assert main(["play", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "started by a script" in err and "docs/checkpoints.md" in err
