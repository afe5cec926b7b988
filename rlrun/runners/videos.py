"""Videos of the agent while it trains: every few log rows, one episode of an evaluation env, played
by the agent in eval mode and recorded to ``<run folder>/videos/itr_<itr>.mp4`` (the ``video`` extra).

The runner's ``video_every`` (``rlrun train --video-every N``) asks for them; trackers such as W&B get
each file too. The episode runs in the training process on an env of its own, so the sampler's envs
and the agent's sampling state (kept aside and put back) are untouched.
"""

from __future__ import annotations

import os
from pathlib import Path

from rlrun.envs.base import Env
from rlrun.envs.video import RecordVideo
from rlrun.runners.contracts import AgentContract, SamplerContract
from rlrun.runners.play import play_episodes

__all__ = ["record_eval_video", "make_frame_env"]


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
