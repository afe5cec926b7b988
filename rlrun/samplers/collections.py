"""The structures samplers fill and algorithms read.

``Samples(agent=AgentSamples(...), env=EnvSamples(...))`` holds one batch, every leaf shaped
``[T, B, ...]``. In the buffers samplers build, ``prev_action`` and ``prev_reward`` are views of
``action`` and ``reward`` offset by one step, so each value is written once.
"""

from __future__ import annotations

import collections

from rlrun.envs.traj_info import TrajInfo
from rlrun.utils.collections import namedarraytuple

__all__ = [
    "Samples",
    "AgentSamples",
    "AgentSamplesBsv",
    "EnvSamples",
    "BatchSpec",
    "TrajInfo",
]

Samples = namedarraytuple("Samples", ["agent", "env"])
AgentSamples = namedarraytuple("AgentSamples", ["action", "prev_action", "agent_info"])
AgentSamplesBsv = namedarraytuple("AgentSamplesBsv", ["action", "prev_action", "agent_info", "bootstrap_value"])
EnvSamples = namedarraytuple("EnvSamples", ["observation", "reward", "prev_reward", "done", "env_info"])


class BatchSpec(collections.namedtuple("BatchSpec", ["T", "B"])):
    """The shape of one sampling batch: ``T`` time steps in each of ``B`` envs."""

    __slots__ = ()

    @property
    def size(self) -> int:
        return self.T * self.B
