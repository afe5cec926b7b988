"""Who computes a collector's actions: the agent in the collector's own process, or a master that serves them.

A collector's env-step loop (:meth:`~rlrun.samplers.collectors.BaseCollector.collect_batch`) is the same
for both; an action source is the one part that differs. Per batch it names the ``[B, ...]`` arrays the
loop reads and writes (the agent inputs and the done flags), per time step it fills ``action`` for the
current observations, and it records what the agent produced into the samples' agent part where the
agent runs here:

=====================  =====================================  ==========================================
                       :class:`LocalActions` (CPU collectors)  :class:`ServedActions` (GPU collectors)
=====================  =====================================  ==========================================
the arrays             the collector's own agent inputs        the worker's rows of the shared step buffer
``act``                ``agent.step`` in this process          signal "observations ready", wait for actions
an env reset           ``agent.reset_one``                     nothing: the master reads ``done``
the samples' agent     written here (action, agent_info, ...)  written by the master
=====================  =====================================  ==========================================
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
import torch

from rlrun.agents.base import BaseAgent, SpaceTensor
from rlrun.samplers.collections import SpaceArray
from rlrun.utils.buffer import buffer_from_example, numpify_buffer, torchify_buffer
from rlrun.utils.collections import AttrDict, NamedArrayTuple

__all__ = ["ActionSource", "LocalActions", "ServedActions", "StepArrays", "ValueAgent", "value_agent"]


class StepArrays(NamedTuple):
    """The ``[B, ...]`` arrays of one env step that the loop reads and writes in place."""

    observation: SpaceArray
    action: SpaceArray
    reward: np.ndarray
    done: np.ndarray


@runtime_checkable
class ValueAgent(Protocol):
    """An agent that estimates values (the policy-gradient agents): what a batch's bootstrap value needs."""

    def value(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> torch.Tensor: ...


def value_agent(agent: BaseAgent) -> ValueAgent:
    """``agent`` as a :class:`ValueAgent`, or the error saying why it cannot give bootstrap values. Called
    once per run (the result is kept), not per batch: a runtime protocol check costs microseconds."""
    if not isinstance(agent, ValueAgent):
        raise TypeError(
            f"The algorithm asks for bootstrap values, but {type(agent).__name__} has no value(observation, "
            "prev_action, prev_reward) method. Use an agent that estimates values (a policy-gradient agent), "
            "or an algorithm with bootstrap_value=False."
        )
    return agent


class _StepSignal(Protocol):
    """``sync.obs_ready`` and ``sync.act_ready`` of a served collector (rlpyt's semaphores, rlrun's pipe signals)."""

    def release(self) -> None: ...

    def acquire(self, block: bool = True, timeout: float | None = None) -> bool: ...


class ActionSource(Protocol):
    """The part of a collector that decides who computes the actions (see the module docstring).

    Built by the collector from what it was given: ``agent`` (None where the master serves the
    actions), ``sync`` (the served collectors' step signals), ``step_buffer_np`` (their rows of the
    master's step buffer) and the number of envs."""

    def __init__(
        self, agent: BaseAgent | None, sync: AttrDict | None, step_buffer_np: NamedArrayTuple | None, n_envs: int
    ) -> None: ...

    def start(self) -> None:
        """Prepare to act for the collector's envs, once, after start-up."""

    def arrays(self, agent_inputs: NamedArrayTuple) -> StepArrays:
        """The arrays the env-step loop works on, given the collector's agent inputs."""

    def begin_batch(self, agent_inputs: NamedArrayTuple, agent_buf: NamedArrayTuple) -> StepArrays:
        """Before the first step of a batch; returns :meth:`arrays`."""

    def begin_evaluation(self, itr: int, observation_example: object, action_example: object) -> StepArrays:
        """Before an evaluation: the arrays its loop works on (shaped after the examples where this
        source owns them), with the agent in eval mode and reset where it acts here."""

    def act(self) -> NamedArrayTuple | None:
        """Fill ``action`` for the current observations; returns the agent info (or None)."""

    def reset_one(self, b: int) -> None:
        """Env ``b`` was reset: the agent's state for it starts afresh."""

    def record(self, t: int, agent_buf: NamedArrayTuple, agent_info: NamedArrayTuple | None) -> None:
        """After step ``t``: write the agent's part of the samples at ``t``."""

    def end_batch(self, agent_buf: NamedArrayTuple) -> None:
        """After the last step (the bootstrap value reads the observations after it)."""


class LocalActions:
    """The agent acts in the collector's process (serial sampler, CPU workers, async serial)."""

    # Set by begin_batch and begin_evaluation, read per step: the agent (checked to be there once per
    # batch, not per step), its inputs as torch views of the loop's arrays, and the action array.
    _acting: BaseAgent
    _inputs_pyt: tuple[SpaceTensor, SpaceTensor, torch.Tensor]
    _action: SpaceArray

    def __init__(
        self, agent: BaseAgent | None, sync: AttrDict | None, step_buffer_np: NamedArrayTuple | None, n_envs: int
    ) -> None:
        self.agent = agent
        self._done = np.zeros(n_envs, dtype=bool)
        self._value_agent: ValueAgent | None = None  # the agent, once checked to give values

    def _agent(self) -> BaseAgent:
        if self.agent is None:
            raise RuntimeError(
                "This collector runs the agent in its own process, but it was built with agent=None. Pass the "
                "sampler's agent, or use a served collector (GpuResetCollector, GpuWaitResetCollector, "
                "GpuEvalCollector) in a sampler whose master computes the actions."
            )
        return self.agent

    def start(self) -> None:
        if self.agent is not None:
            self.agent.reset()
            self.agent.sample_mode(itr=0)

    def arrays(self, agent_inputs: NamedArrayTuple) -> StepArrays:
        observation, action, reward = agent_inputs
        return StepArrays(observation, action, reward, self._done)

    def begin_batch(self, agent_inputs: NamedArrayTuple, agent_buf: NamedArrayTuple) -> StepArrays:
        arrays = self.arrays(agent_inputs)
        self._acting = self._agent()
        self._inputs_pyt = torchify_buffer(agent_inputs)  # views: the agent reads what the loop writes
        self._action = arrays.action
        agent_buf.prev_action[0] = arrays.action
        return arrays

    def begin_evaluation(self, itr: int, observation_example: object, action_example: object) -> StepArrays:
        n = len(self._done)
        observation: SpaceArray = buffer_from_example(observation_example, n)
        action: SpaceArray = buffer_from_example(action_example, n)
        reward = np.zeros(n, dtype=np.float32)
        self._acting = agent = self._agent()
        self._inputs_pyt = torchify_buffer((observation, action, reward))
        self._action = action
        # eval_mode first: a worker's agent is still in sample mode here, and a recurrent agent sets its
        # sampling state aside only on entering eval mode; reset() before that would drop it.
        agent.eval_mode(itr)
        agent.reset()
        return StepArrays(observation, action, reward, self._done)

    def act(self) -> NamedArrayTuple | None:
        action_pyt, agent_info_pyt = self._acting.step(*self._inputs_pyt)  # AgentStep or a 2-tuple
        self._action[:] = numpify_buffer(action_pyt)  # the agent inputs' torch view sees it too
        agent_info: NamedArrayTuple | None = numpify_buffer(agent_info_pyt)
        return agent_info

    def reset_one(self, b: int) -> None:
        self._agent().reset_one(idx=b)

    def record(self, t: int, agent_buf: NamedArrayTuple, agent_info: NamedArrayTuple | None) -> None:
        agent_buf.action[t] = self._action
        if agent_info:
            agent_buf.agent_info[t] = agent_info

    def end_batch(self, agent_buf: NamedArrayTuple) -> None:
        if "bootstrap_value" in agent_buf._fields:
            if self._value_agent is None:
                self._value_agent = value_agent(self._acting)
            agent_buf.bootstrap_value[0] = numpify_buffer(self._value_agent.value(*self._inputs_pyt))


class ServedActions:
    """A master computes the actions (GPU and alternating samplers): per step the worker says its
    observations are in the step buffer (``sync.obs_ready``) and waits until the actions are there
    (``sync.act_ready``); the master also writes the samples' agent part and resets the agent's state
    for envs it sees done."""

    # Set by begin_batch and begin_evaluation from sync and the step buffer, read per step.
    _obs_ready: _StepSignal
    _act_ready: _StepSignal
    _agent_info: NamedArrayTuple | None

    def __init__(
        self, agent: BaseAgent | None, sync: AttrDict | None, step_buffer_np: NamedArrayTuple | None, n_envs: int
    ) -> None:
        self.sync = sync
        self.step = step_buffer_np

    def _served(self) -> NamedArrayTuple:
        """The step buffer, with the step signals taken from ``sync``."""
        if self.step is None or self.sync is None:
            raise RuntimeError(
                "A served collector (GpuResetCollector, GpuWaitResetCollector, GpuEvalCollector) steps its envs "
                "with actions its sampler's master computes, and this one was built without the master's step "
                "buffer and signals. Use it in GpuSampler or an alternating sampler; in a SerialSampler or "
                "CpuSampler, use CpuResetCollector, CpuWaitResetCollector or CpuEvalCollector."
            )
        self._obs_ready, self._act_ready = self.sync.obs_ready, self.sync.act_ready
        self._agent_info = self.step.agent_info
        return self.step

    def start(self) -> None:
        """The agent acts in the master."""

    def arrays(self, agent_inputs: NamedArrayTuple) -> StepArrays:
        return self._step_arrays()

    def _step_arrays(self) -> StepArrays:
        step = self._served()
        return StepArrays(step.observation, step.action, step.reward, step.done)

    def begin_batch(self, agent_inputs: NamedArrayTuple, agent_buf: NamedArrayTuple) -> StepArrays:
        return self.arrays(agent_inputs)

    def begin_evaluation(self, itr: int, observation_example: object, action_example: object) -> StepArrays:
        """The master puts its agent in eval mode."""
        return self._step_arrays()

    def act(self) -> NamedArrayTuple | None:
        self._obs_ready.release()
        self._act_ready.acquire()  # the master wrote action and agent_info into the step buffer
        return self._agent_info

    def reset_one(self, b: int) -> None:
        """The master resets the agent's state for envs done in the step buffer."""

    def record(self, t: int, agent_buf: NamedArrayTuple, agent_info: NamedArrayTuple | None) -> None:
        """The master wrote the agent's part of the samples."""

    def end_batch(self, agent_buf: NamedArrayTuple) -> None:
        self._obs_ready.release()  # the observations after the last step, for the bootstrap value
