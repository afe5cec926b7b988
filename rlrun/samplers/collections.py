"""The structures samplers fill and algorithms read.

``Samples(agent=AgentSamples(...), env=EnvSamples(...))`` holds one batch, every leaf shaped
``[T, B, ...]``. In the buffers samplers build, ``prev_action`` and ``prev_reward`` are views of
``action`` and ``reward`` offset by one step, so each value is written once.
"""

from __future__ import annotations

from typing import NamedTuple, TypeAlias

import numpy as np

from rlrun.envs.traj_info import TrajInfo
from rlrun.utils.collections import NamedArrayTuple, namedarraytuple

__all__ = [
    "Samples",
    "AgentSamples",
    "AgentSamplesBsv",
    "EnvSamples",
    "BatchSpec",
    "TrajInfo",
]

# Values of a space as numpy arrays with leading dims (``[B, ...]`` or ``[T, B, ...]``): one array, or a
# namedarraytuple of them for a Composite space. The numpy twin of ``rlrun.agents.base.SpaceTensor``.
SpaceArray: TypeAlias = "np.ndarray | NamedArrayTuple"

Samples = namedarraytuple("Samples", ["agent", "env"])
AgentSamples = namedarraytuple("AgentSamples", ["action", "prev_action", "agent_info"])
AgentSamplesBsv = namedarraytuple("AgentSamplesBsv", ["action", "prev_action", "agent_info", "bootstrap_value"])
EnvSamples = namedarraytuple("EnvSamples", ["observation", "reward", "prev_reward", "done", "env_info"])


class BatchSpec(NamedTuple):
    """The shape of one sampling batch: ``T`` time steps in each of ``B`` envs."""

    T: int
    B: int

    @property
    def size(self) -> int:
        return self.T * self.B
