"""RecordVideo writes one frame per reset and per step, headless, for Gymnasium and Atari envs; the file
holds exactly those frames, read back with imageio."""

from __future__ import annotations

import imageio.v2 as imageio
import numpy as np
import pytest

from rlrun.envs.atari.atari_env import AtariEnv
from rlrun.envs.gym import make
from rlrun.envs.video import RecordVideo

pytest.importorskip("imageio_ffmpeg")
pytest.importorskip("pygame")

pytestmark = pytest.mark.timeout(60)


def frames_in(path) -> tuple[int, float, tuple[int, ...]]:
    reader = imageio.get_reader(str(path))
    try:
        return reader.count_frames(), reader.get_meta_data()["fps"], reader.get_data(0).shape
    finally:
        reader.close()


def play_randomly(env: RecordVideo, steps: int) -> int:
    """Steps with random actions, resetting at each episode's end; returns the resets made."""
    env.reset()
    resets = 1
    for _ in range(steps):
        if env.step(env.action_space.sample()).done:
            env.reset()
            resets += 1
    return resets


def test_cartpole_video_has_one_frame_per_reset_and_step_at_the_envs_frame_rate(tmp_path):
    env = RecordVideo(make("CartPole-v1", render_mode="rgb_array"), tmp_path / "cartpole.mp4")
    resets = play_randomly(env, 60)
    env.close()
    count, fps, shape = frames_in(tmp_path / "cartpole.mp4")
    assert count == env.frames == 60 + resets
    assert fps == 50 and shape == (400, 600, 3)


def test_pong_video_shows_the_colour_screen_at_60_hz_over_the_frame_skip(tmp_path):
    game = AtariEnv(game="pong")
    env = RecordVideo(game, tmp_path / "pong.mp4")
    play_randomly(env, 40)
    last = game.rgb_frame()
    env.close()
    count, fps, shape = frames_in(tmp_path / "pong.mp4")
    assert count == 41 and fps == 15 and shape == (210, 160, 3)
    assert last.dtype == np.uint8 and last.std() > 0  # a real screen, not a blank


def test_an_env_without_rgb_frames_is_refused_naming_the_render_mode(tmp_path):
    with pytest.raises(ValueError, match="render_mode='rgb_array'"):
        RecordVideo(make("CartPole-v1"), tmp_path / "x.mp4").reset()
    with pytest.raises(TypeError, match="rgb_frame"):
        RecordVideo(object(), tmp_path / "y.mp4")
