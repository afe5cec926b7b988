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
    assert "holds no agent.pt" in err and "resume" not in err


def test_play_records_a_video_headless_with_one_frame_per_step(tmp_path, capsys):
    import imageio.v2 as imageio

    assert main([*TRAIN, "--log-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    video = tmp_path / "play.mp4"
    assert main(["play", str(tmp_path / "run_0"), "--episodes", "2", "--max-steps", "20", "--video", str(video)]) == 0
    out = capsys.readouterr().out
    reader = imageio.get_reader(str(video))
    frames = reader.count_frames()
    reader.close()
    # 2 episodes of at most 20 steps: a frame per step, plus one per reset (the first, each episode's
    # end, and the reset after the last episode that play makes)
    assert 3 <= frames <= 2 * 20 + 3
    assert f"video: {video} ({frames} frames at 50 fps)" in out


def test_render_without_pygame_says_which_extra_in_one_line(tmp_path, capsys, monkeypatch):
    import gymnasium

    assert main([*TRAIN, "--log-dir", str(tmp_path)]) == 0
    capsys.readouterr()

    def no_pygame(self, *args, **kwargs):
        raise gymnasium.error.DependencyNotInstalled(
            'pygame is not installed, run `pip install "gymnasium[classic-control]"`'
        )

    monkeypatch.setattr(gymnasium.envs.classic_control.cartpole.CartPoleEnv, "render", no_pygame)
    assert main(["play", str(tmp_path / "run_0"), "--render"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "pygame" in err and "pip install 'rlrun[video]'" in err


def test_play_of_a_scripts_run_rebuilds_its_recorded_agent_and_env_and_records_a_video(tmp_path, capsys):
    """Any run folder can be played: a script's run keeps run.json (the env) and agent.pt (the agent object)."""
    import imageio.v2 as imageio

    from rlrun.experiments.configs.cartpole import build_runner
    from rlrun.utils.logging import logger
    from rlrun.utils.logging.context import logger_context

    runner = build_runner("a2c", seed=0, n_steps=256, log_interval_steps=128, eval_episodes=2)
    with logger_context(str(tmp_path), 0, "script", override_prefix=True, snapshot_mode="last") as run_dir:
        logger.set_console_output(False)
        runner.train()
    capsys.readouterr()
    video = tmp_path / "play.mp4"
    assert main(["play", run_dir, "--episodes", "1", "--max-steps", "25", "--video", str(video)]) == 0
    out = capsys.readouterr().out
    assert "rlrun play: A2C on CartPole-v1 (a script's run), snapshot of iteration" in out
    reader = imageio.get_reader(str(video))
    assert 2 <= reader.count_frames() <= 27
    reader.close()
