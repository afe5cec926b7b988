"""AsyncRl records evaluation videos every ``video_every`` log rows, as the synchronous runners do, with the
optimiser's model, into the run folder (real sampler and copier processes, CartPole)."""

from __future__ import annotations

import os

import imageio.v2 as imageio
import pytest

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.algos.dqn.dqn import DQN
from rlrun.envs.gym import make
from rlrun.runners.async_rl import AsyncRl
from rlrun.samplers.async_.serial_sampler import AsyncSerialSampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context

pytest.importorskip("imageio_ffmpeg")
pytest.importorskip("pygame")


@pytest.mark.timeout(180)
def test_an_async_run_records_a_video_every_second_log_row_into_its_run_folder(tmp_path):
    sampler = AsyncSerialSampler(
        EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=4, batch_B=8, max_decorrelation_steps=0
    )
    runner = AsyncRl(
        algo=DQN(min_steps_learn=320, replay_size=2000, batch_size=32, replay_ratio=1),
        agent=DqnAgent(model_kwargs=dict(hidden_sizes=[16])),
        sampler=sampler,
        n_steps=1280,
        seed=0,
        log_interval_steps=320,
        video_every=2,
        video_max_steps=40,
    )
    with logger_context(str(tmp_path), 0, "async_videos", override_prefix=True) as run_dir:
        logger.set_console_output(False)
        row = runner.train()
    assert row["Diagnostics/CumSteps"] == 1280
    videos = sorted(os.listdir(os.path.join(run_dir, "videos")))
    assert videos == ["itr_19.mp4", "itr_39.mp4"]  # rows after batches 9, 19, 29 and 39 (the last): 2nd and 4th
    for name in videos:
        reader = imageio.get_reader(os.path.join(run_dir, "videos", name))
        assert 2 <= reader.count_frames() <= 41  # at most 40 steps: a frame per step and one at the reset
        reader.close()
