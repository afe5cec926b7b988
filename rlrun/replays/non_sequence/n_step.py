"""Replays of single transitions with n-step returns, built from a storage and a sampling rule."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlrun.agents.base import AgentInputs
from rlrun.replays.base import StorageReplayBuffer
from rlrun.replays.n_step import NStepReturnStorage
from rlrun.replays.sampling import SamplingRule, UniformSampling
from rlrun.utils.buffer import torchify_buffer
from rlrun.utils.collections import namedarraytuple

__all__ = ["SamplesFromReplay", "SamplesFromReplayTl", "NStepReturnBuffer"]

SamplesFromReplay = namedarraytuple(
    "SamplesFromReplay", ["agent_inputs", "action", "return_", "done", "done_n", "target_inputs"]
)
SamplesFromReplayTl = namedarraytuple(
    "SamplesFromReplayTl", SamplesFromReplay._fields + ("timeout", "timeout_n", "steps_n")
)


class NStepReturnBuffer(StorageReplayBuffer):
    """Draws transitions ``(s_t, a_t, n-step return, s_{t+n})`` from an :class:`NStepReturnStorage` (or a
    subclass such as :class:`~rlrun.replays.frame.NStepFrameStorage`) with a sampling rule
    (:mod:`rlrun.replays.sampling`).

    ``sample_batch(batch_B)`` returns :data:`SamplesFromReplay` of torch tensors with leading dim
    ``[batch_B]``: ``agent_inputs`` at ``t``, ``action`` at ``t``, ``return_`` and ``done_n`` of the
    window starting at ``t``, ``done`` at ``t`` and ``target_inputs`` for the bootstrap state
    ``t + n``. ``prev_action`` and ``prev_reward`` are zero where ``t`` starts an episode.

    With ``timeout`` stored it returns :data:`SamplesFromReplayTl`, adding ``timeout`` (at ``t``),
    ``timeout_n`` (the window was cut by a time limit) and ``steps_n`` (rewards in the window). A
    window cut by a time limit at step ``t + k``, ``k >= 1``, stops before the cut step: ``k``
    rewards, then ``discount ** k`` times the value of ``s_{t+k}`` (``target_inputs``), an exact
    target. A window cut at ``t`` itself keeps ``t``'s reward and bootstraps with ``discount`` from
    ``s_{t+1}``, which the storage does not hold (the env was reset): ``target_inputs`` then hold
    ``s_t`` as its estimate.
    """

    def __init__(self, storage: NStepReturnStorage, sampling: SamplingRule | None = None) -> None:
        self.storage = storage
        self.sampling: SamplingRule = UniformSampling() if sampling is None else sampling

    def append_samples(self, samples: Any) -> tuple[int, slice | np.ndarray]:
        """Store a ``[T, B]`` batch (a ``SamplesToBuffer``). Returns ``(T, idxs)``, the rows written."""
        t = self.storage.t
        T, idxs = self.storage.append(samples)
        self.sampling.appended(self.storage, t, T)
        return T, idxs

    def sample_batch(self, batch_B: int) -> Any:
        """``batch_B`` transitions drawn by the sampling rule."""
        T_idxs, B_idxs = self.sampling.sample_idxs(self.storage, batch_B)
        return self.extract_batch(T_idxs, B_idxs)

    def extract_batch(self, T_idxs: np.ndarray, B_idxs: np.ndarray) -> Any:
        """The training batch at storage locations ``[T_idxs, B_idxs]``, as torch tensors."""
        st = self.storage
        s = st.samples
        n = st.n_step_return
        if st.has_timeout:
            timeout_n = st.samples_timeout_n[T_idxs, B_idxs]
            steps_n = st.samples_steps_n[T_idxs, B_idxs]
            cut_here = s.timeout[T_idxs, B_idxs].astype(np.int64)  # a cut at the step itself: its own observation
            target_T_idxs = (T_idxs + np.where(timeout_n, steps_n - cut_here, n)) % st.T
        else:
            target_T_idxs = (T_idxs + n) % st.T
        batch = SamplesFromReplay(
            agent_inputs=self._agent_inputs(T_idxs, B_idxs),
            action=s.action[T_idxs, B_idxs],
            return_=st.samples_return_[T_idxs, B_idxs],
            done=s.done[T_idxs, B_idxs],
            done_n=st.samples_done_n[T_idxs, B_idxs],
            target_inputs=self._agent_inputs(target_T_idxs, B_idxs),
        )
        if st.has_timeout:
            batch = SamplesFromReplayTl(*batch, timeout=s.timeout[T_idxs, B_idxs], timeout_n=timeout_n, steps_n=steps_n)
        return torchify_buffer(batch)

    def _agent_inputs(self, T_idxs: np.ndarray, B_idxs: np.ndarray) -> AgentInputs:
        s = self.storage.samples
        prev = T_idxs - 1  # -1 wraps to the last row, which is the previous step once full.
        prev_action = s.action[prev, B_idxs]
        prev_reward = s.reward[prev, B_idxs]
        new_episode = s.done[prev, B_idxs]
        prev_action[new_episode] = 0
        prev_reward[new_episode] = 0
        return AgentInputs(self.storage.extract_observation(T_idxs, B_idxs), prev_action, prev_reward)
