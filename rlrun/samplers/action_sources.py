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

from typing import Any, NamedTuple, Protocol

import numpy as np

from rlrun.utils.buffer import buffer_from_example, numpify_buffer, torchify_buffer

__all__ = ["ActionSource", "LocalActions", "ServedActions", "StepArrays"]


class StepArrays(NamedTuple):
    """The ``[B, ...]`` arrays of one env step that the loop reads and writes in place."""

    observation: Any
    action: Any
    reward: np.ndarray
    done: np.ndarray


class ActionSource(Protocol):
    """The part of a collector that decides who computes the actions (see the module docstring).

    Built by the collector from what it was given: ``agent``, ``sync``, ``step_buffer_np`` and the
    number of envs."""

    def __init__(self, agent: Any, sync: Any, step_buffer_np: Any, n_envs: int) -> None: ...

    def start(self) -> None:
        """Prepare to act for the collector's envs, once, after start-up."""

    def arrays(self, agent_inputs: Any) -> StepArrays:
        """The arrays the env-step loop works on, given the collector's agent inputs."""

    def begin_batch(self, agent_inputs: Any, agent_buf: Any) -> StepArrays:
        """Before the first step of a batch; returns :meth:`arrays`."""

    def begin_evaluation(self, itr: int, observation_example: Any, action_example: Any) -> StepArrays:
        """Before an evaluation: the arrays its loop works on (shaped after the examples where this
        source owns them), with the agent in eval mode and reset where it acts here."""

    def act(self) -> Any:
        """Fill ``action`` for the current observations; returns the agent info (or None)."""

    def reset_one(self, b: int) -> None:
        """Env ``b`` was reset: the agent's state for it starts afresh."""

    def record(self, t: int, agent_buf: Any, agent_info: Any) -> None:
        """After step ``t``: write the agent's part of the samples at ``t``."""

    def end_batch(self, agent_buf: Any) -> None:
        """After the last step (the bootstrap value reads the observations after it)."""


class LocalActions:
    """The agent acts in the collector's process (serial sampler, CPU workers, async serial)."""

    def __init__(self, agent: Any, sync: Any, step_buffer_np: Any, n_envs: int) -> None:
        self.agent = agent
        self._done = np.zeros(n_envs, dtype=bool)
        self._inputs_pyt: Any = None
        self._action: Any = None

    def start(self) -> None:
        if self.agent is not None:
            self.agent.reset()
            self.agent.sample_mode(itr=0)

    def arrays(self, agent_inputs: Any) -> StepArrays:
        observation, action, reward = agent_inputs
        return StepArrays(observation, action, reward, self._done)

    def begin_batch(self, agent_inputs: Any, agent_buf: Any) -> StepArrays:
        arrays = self.arrays(agent_inputs)
        self._inputs_pyt = torchify_buffer(agent_inputs)  # views: the agent reads what the loop writes
        self._action = arrays.action
        agent_buf.prev_action[0] = arrays.action
        return arrays

    def begin_evaluation(self, itr: int, observation_example: Any, action_example: Any) -> StepArrays:
        n = len(self._done)
        observation = buffer_from_example(observation_example, n)
        action = buffer_from_example(action_example, n)
        reward = np.zeros(n, dtype=np.float32)
        self._inputs_pyt = torchify_buffer((observation, action, reward))
        self._action = action
        # eval_mode first: a worker's agent is still in sample mode here, and a recurrent agent sets its
        # sampling state aside only on entering eval mode; reset() before that would drop it.
        self.agent.eval_mode(itr)
        self.agent.reset()
        return StepArrays(observation, action, reward, self._done)

    def act(self) -> Any:
        action_pyt, agent_info_pyt = self.agent.step(*self._inputs_pyt)  # AgentStep or a 2-tuple
        self._action[:] = numpify_buffer(action_pyt)  # the agent inputs' torch view sees it too
        return numpify_buffer(agent_info_pyt)

    def reset_one(self, b: int) -> None:
        self.agent.reset_one(idx=b)

    def record(self, t: int, agent_buf: Any, agent_info: Any) -> None:
        agent_buf.action[t] = self._action
        if agent_info:
            agent_buf.agent_info[t] = agent_info

    def end_batch(self, agent_buf: Any) -> None:
        if "bootstrap_value" in agent_buf._fields:
            agent_buf.bootstrap_value[0] = numpify_buffer(self.agent.value(*self._inputs_pyt))


class ServedActions:
    """A master computes the actions (GPU and alternating samplers): per step the worker says its
    observations are in the step buffer (``sync.obs_ready``) and waits until the actions are there
    (``sync.act_ready``); the master also writes the samples' agent part and resets the agent's state
    for envs it sees done."""

    def __init__(self, agent: Any, sync: Any, step_buffer_np: Any, n_envs: int) -> None:
        self.sync = sync
        self.step = step_buffer_np

    def start(self) -> None:
        """The agent acts in the master."""

    def arrays(self, agent_inputs: Any) -> StepArrays:
        step = self.step
        return StepArrays(step.observation, step.action, step.reward, step.done)

    def begin_batch(self, agent_inputs: Any, agent_buf: Any) -> StepArrays:
        return self.arrays(agent_inputs)

    def begin_evaluation(self, itr: int, observation_example: Any, action_example: Any) -> StepArrays:
        """The master puts its agent in eval mode."""
        return self.arrays(None)

    def act(self) -> Any:
        self.sync.obs_ready.release()
        self.sync.act_ready.acquire()  # the master wrote action and agent_info into the step buffer
        return self.step.agent_info

    def reset_one(self, b: int) -> None:
        """The master resets the agent's state for envs done in the step buffer."""

    def record(self, t: int, agent_buf: Any, agent_info: Any) -> None:
        """The master wrote the agent's part of the samples."""

    def end_batch(self, agent_buf: Any) -> None:
        self.sync.obs_ready.release()  # the observations after the last step, for the bootstrap value
