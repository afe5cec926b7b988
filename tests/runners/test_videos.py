"""Videos while training: every ``video_every`` log rows one evaluation episode is recorded into the run
folder, the agent's sampling state is left as it was, and a tracker (W&B, offline) gets each file."""

from __future__ import annotations

import os

import imageio.v2 as imageio
import pytest
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.runners.videos import gif_durations
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context

pytest.importorskip("imageio_ffmpeg")
pytest.importorskip("pygame")
pytestmark = pytest.mark.timeout(120)


class RecordingTracker:
    def __init__(self) -> None:
        self.videos: list[tuple[str, int]] = []

    def log_row(self, row, step) -> None:
        pass

    def log_video(self, path, step, key="video") -> None:
        self.videos.append((path, step))

    def close(self) -> None:
        pass


def _runner(**kwargs) -> MinibatchRl:
    sampler = SerialSampler(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=8, batch_B=2)
    return MinibatchRl(
        algo=A2C(), agent=CategoricalPgAgent(), sampler=sampler, n_steps=96, log_interval_steps=16, seed=0, **kwargs
    )


def test_every_second_log_row_records_an_episode_into_the_run_folder(tmp_path):
    tracker = RecordingTracker()
    with logger_context(str(tmp_path), 0, "videos", override_prefix=True) as run_dir:
        logger.set_console_output(False)
        logger.add_tracker(tracker)
        _runner(video_every=2, video_max_steps=30).train()
    videos = sorted(os.listdir(os.path.join(run_dir, "videos")))
    assert videos == ["itr_1.mp4", "itr_3.mp4", "itr_5.mp4"]  # a row per iteration of 16 steps: rows 2, 4, 6
    reader = imageio.get_reader(os.path.join(run_dir, "videos", "itr_3.mp4"))
    assert 2 <= reader.count_frames() <= 31 + 1  # at most 30 steps, a frame per step and per reset
    reader.close()
    assert [step for _, step in tracker.videos] == [1, 3, 5]


def test_a_video_leaves_the_samples_as_a_run_without_videos_gives_them(tmp_path):
    """The episode runs on an env of its own with the sampling state kept aside: training is unchanged."""
    params = []
    for video_every in (None, 1):
        torch.manual_seed(0)
        with logger_context(str(tmp_path / str(video_every)), 0, "same", override_prefix=True):
            logger.set_console_output(False)
            runner = _runner(video_every=video_every, video_max_steps=5)
            runner.train()
        params.append(torch.cat([p.detach().flatten() for p in runner.agent.parameters()]))
    assert torch.equal(params[0], params[1])


def test_video_every_must_be_a_positive_number_of_log_rows():
    with pytest.raises(ValueError, match="video_every is a number of log rows"):
        _runner(video_every=0)


def _gif_durations(gif: bytes) -> list[int]:
    """Each GIF frame's display time in milliseconds."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(gif)) as animation:
        durations = []
        for index in range(animation.n_frames):
            animation.seek(index)
            durations.append(int(animation.info["duration"]))
    return durations


def test_gif_frames_keep_the_videos_length_in_hundredths_of_a_second():
    assert gif_durations(7, 30.0) == [30.0, 40.0, 30.0, 30.0, 40.0, 30.0, 30.0]  # 230 ms for 233 ms of video
    assert sum(gif_durations(300, 30.0)) == 10_000.0  # 30 ms a frame would have played it in 9 s
    assert gif_durations(3, 50.0) == [20.0, 20.0, 20.0]
    assert gif_durations(4, 200.0) == [10.0] * 4  # a GIF shows no frame for less than 10 ms


def test_with_tensorboard_on_each_video_is_also_an_animated_image_in_the_event_file(tmp_path):
    pytest.importorskip("tensorboard")
    import glob

    import imageio.v3 as iio
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with logger_context(str(tmp_path), 0, "videos", override_prefix=True, use_summary_writer=True) as run_dir:
        logger.set_console_output(False)
        _runner(video_every=2, video_max_steps=30).train()
    (events,) = glob.glob(os.path.join(run_dir, "**", "events.out.tfevents.*"), recursive=True)
    accumulator = EventAccumulator(events, size_guidance={"images": 0})
    accumulator.Reload()
    images = accumulator.Images("video")
    assert [image.step for image in images] == [1, 3, 5]
    for image in images:
        gif = iio.imread(image.encoded_image_string, index=None, extension=".gif")
        mp4 = iio.imread(os.path.join(run_dir, "videos", f"itr_{image.step}.mp4"))
        # Pillow's GIF writer folds a frame identical to the one before into it and adds up their durations
        # (a video that stands still for a step): the GIF lasts as long as the video, in up to as many frames.
        durations = _gif_durations(image.encoded_image_string)
        fps = iio.immeta(os.path.join(run_dir, "videos", f"itr_{image.step}.mp4"))["fps"]
        assert len(durations) == len(gif) <= len(mp4)
        assert abs(sum(durations) - 1000 * len(mp4) / fps) <= 10
        assert gif.shape[1:] == mp4.shape[1:] and (image.width, image.height) == (mp4.shape[2], mp4.shape[1])
    assert "Diagnostics/CumSteps" in accumulator.Tags()["scalars"]  # beside the scalars, as before
