"""The ``[T, B]`` data model as types: what samplers fill, agents take and return, and replays draw.

The structures themselves are namedarraytuples (``Samples``, ``AgentInputs``, ``SamplesFromReplay``,
...), made at run time, so a type checker cannot see their fields. These Protocols name the fields
the library reads, so that a signature such as ``optimize_agent(itr, samples: SamplesBatch)`` says
what flows between packages and mypy checks every access. Any namedarraytuple with those fields
matches; nothing needs to subclass them. Every leaf is a ``torch.Tensor`` or ``np.ndarray`` with
leading dims ``[T, B]`` (``[B]`` for one step). ``agent_info`` and ``env_info`` are namedarraytuples;
an observation or action is an array, or a namedarraytuple of them for a dict or tuple space
(:data:`ArrayTree`; :data:`SpaceValue` for one env's value, before it is batched).

Fields that only some batches carry (``bootstrap_value``, ``env_info.timeout``,
``agent_info.prev_rnn_state``) are read with :func:`rlrun.utils.collections.optional_field`.
"""

from __future__ import annotations

from typing import Protocol, TypeAlias

import numpy as np
import torch

from rlrun.utils.collections import NamedArrayTuple

__all__ = [
    "Array",
    "ArrayTree",
    "SpaceValue",
    "AgentInputsBatch",
    "AgentStepBatch",
    "AgentSamplesBatch",
    "EnvSamplesBatch",
    "SamplesBatch",
    "EnvStepResult",
    "ReplayBatch",
]

Array: TypeAlias = "torch.Tensor | np.ndarray"
# An observation or action in a batch: an array, or a namedarraytuple of arrays for a dict or tuple space.
ArrayTree: TypeAlias = "torch.Tensor | np.ndarray | NamedArrayTuple"
# A value of a space, as an env returns or takes it: an array (a numpy scalar for a 0-d box), or a
# namedarraytuple of them for a dict or tuple space.
SpaceValue: TypeAlias = "np.ndarray | NamedArrayTuple"


class AgentInputsBatch(Protocol):
    """What an agent's ``step`` and ``__call__`` take: ``AgentInputs(observation, prev_action, prev_reward)``."""

    @property
    def observation(self) -> ArrayTree: ...

    @property
    def prev_action(self) -> ArrayTree: ...

    @property
    def prev_reward(self) -> torch.Tensor: ...


class AgentStepBatch(Protocol):
    """What an agent's ``step`` returns: ``AgentStep(action, agent_info)`` (a plain 2-tuple also unpacks)."""

    @property
    def action(self) -> ArrayTree: ...

    @property
    def agent_info(self) -> NamedArrayTuple: ...


class AgentSamplesBatch(Protocol):
    """``samples.agent``: the agent's side of a batch (``bootstrap_value`` too when the algorithm asks)."""

    @property
    def action(self) -> ArrayTree: ...

    @property
    def prev_action(self) -> ArrayTree: ...

    @property
    def agent_info(self) -> NamedArrayTuple: ...


class EnvSamplesBatch(Protocol):
    """``samples.env``: the env's side of a batch."""

    @property
    def observation(self) -> ArrayTree: ...

    @property
    def reward(self) -> Array: ...

    @property
    def prev_reward(self) -> Array: ...

    @property
    def done(self) -> Array: ...

    @property
    def env_info(self) -> NamedArrayTuple: ...


class SamplesBatch(Protocol):
    """One sampled batch, ``Samples(agent, env)``, every leaf ``[T, B, ...]``: what samplers return and
    algorithms' ``optimize_agent`` takes."""

    @property
    def agent(self) -> AgentSamplesBatch: ...

    @property
    def env(self) -> EnvSamplesBatch: ...


class EnvStepResult(Protocol):
    """What an env's ``step`` returns: ``EnvStep(observation, reward, done, env_info)``."""

    @property
    def observation(self) -> ArrayTree: ...

    @property
    def reward(self) -> float | np.number | np.ndarray: ...

    @property
    def done(self) -> bool | np.bool_ | np.ndarray: ...

    @property
    def env_info(self) -> NamedArrayTuple: ...


class ReplayBatch(Protocol):
    """What a transition replay's ``sample_batch`` returns (``SamplesFromReplay``): the inputs at the drawn
    steps, the action taken, the n-step return and whether an episode ended within it, and the inputs
    ``n_step_return`` steps later for the target. Prioritized replays add ``is_weights``; time-limit
    replays ``timeout`` and ``timeout_n`` (read them with ``optional_field``)."""

    @property
    def agent_inputs(self) -> AgentInputsBatch: ...

    @property
    def action(self) -> ArrayTree: ...

    @property
    def return_(self) -> torch.Tensor: ...

    @property
    def done(self) -> torch.Tensor: ...

    @property
    def done_n(self) -> torch.Tensor: ...

    @property
    def target_inputs(self) -> AgentInputsBatch: ...
