"""Videos of the agent while it trains: every few log rows, one episode of an evaluation env, played
by the agent in eval mode and recorded to ``<run folder>/videos/itr_<itr>.mp4`` (the ``video`` extra).

The runner's ``video_every`` (``rlrun train --video-every N``) asks for them; trackers such as W&B get
each file too, and so does TensorBoard when the run writes event files (``use_summary_writer=True``,
``rlrun train --tensorboard``): :func:`add_video_to_tensorboard`. The episode runs in the training
process on an env of its own, so the sampler's envs and the agent's sampling state (kept aside and put
back) are untouched.
"""

from __future__ import annotations

import os
from pathlib import Path

from rlrun.envs.base import Env
from rlrun.envs.video import RecordVideo
from rlrun.runners.contracts import AgentContract, SamplerContract
from rlrun.runners.play import play_episodes

__all__ = ["record_eval_video", "make_frame_env", "add_video_to_tensorboard"]


def make_frame_env(sampler: SamplerContract) -> Env:
    """One evaluation env of ``sampler`` that can show its frames: Gymnasium envs are made with
    ``render_mode="rgb_array"``, envs without that keyword (Atari) as they are."""
    env_kwargs = dict(sampler.eval_env_kwargs or sampler.env_kwargs)
    try:
        return sampler.EnvCls(**env_kwargs, render_mode="rgb_array")
    except TypeError:  # an env class without render_mode: AtariEnv shows the emulator's screen anyway
        return sampler.EnvCls(**env_kwargs)


def record_eval_video(
    agent: AgentContract, sampler: SamplerContract, itr: int, folder: str | os.PathLike[str], max_steps: int = 1000
) -> tuple[Path, int, float]:
    """Play one episode (at most ``max_steps`` steps) with ``agent`` in eval mode at ``itr`` and record it
    into ``folder/itr_<itr>.mp4``; return the file, its frames and the episode's return."""
    path = Path(folder) / f"itr_{itr}.mp4"
    state = agent.get_step_state()  # the sampling state, put back after the episode
    env = RecordVideo(make_frame_env(sampler), path)
    try:
        (episode_return,) = play_episodes(agent, env, 1, itr=itr, max_steps=max_steps)
        frames = env.frames
    finally:
        env.close()
        agent.set_step_state(state)
    return path, frames, episode_return


def gif_durations(n_frames: int, fps: float) -> list[float]:
    """Each frame's display time in milliseconds for a GIF of ``n_frames`` at ``fps``. A GIF keeps them in
    hundredths of a second, where 30 fps would round to 30 ms a frame and play 11% fast: each frame here
    ends at its own time rounded to 10 ms (30, 40, 30, 30, 40, ... at 30 fps), so the animation lasts as
    long as the video. Past 100 fps every frame gets the shortest time a GIF has, 10 ms."""
    ends = [round((i + 1) * 1000.0 / fps, -1) for i in range(n_frames)]
    return [max(10.0, end - start) for start, end in zip([0.0, *ends[:-1]], ends)]


def add_video_to_tensorboard(writer: object, path: str | os.PathLike[str], step: int, tag: str = "video") -> bool:
    """Show the video file ``path`` in TensorBoard at ``step``: an animated GIF in an image summary, which
    is what ``SummaryWriter.add_video`` writes (TensorBoard's Images tab plays it). Returns False, writing
    nothing, for a writer that is not torch's ``SummaryWriter``.

    The GIF is encoded here with imageio (the ``video`` extra) because ``add_video`` encodes through
    ``moviepy.editor``, which moviepy 2 removed (``add_video`` then logs an empty image), and moviepy 1's
    ``moviepy.editor`` starts pygame's display and audio when imported.
    """
    import imageio.v3 as iio
    from tensorboard.compat.proto.summary_pb2 import Summary
    from torch.utils.tensorboard import SummaryWriter

    if not isinstance(writer, SummaryWriter):
        return False
    frames = iio.imread(Path(path))  # [T, H, W, 3] uint8, through imageio-ffmpeg
    fps = float(iio.immeta(Path(path)).get("fps", 30.0))
    gif = iio.imwrite("<bytes>", frames, extension=".gif", duration=gif_durations(len(frames), fps), loop=0)
    _, height, width, channels = frames.shape
    image = Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=gif)
    # add_video's own path into the event file (SummaryWriter has no public call for an encoded image).
    writer._get_file_writer().add_summary(  # type: ignore[no-untyped-call]  # torch leaves it unannotated
        Summary(value=[Summary.Value(tag=tag, image=image)]), step
    )
    writer.flush()
    return True
