"""The master's part of served sampling: one batched forward pass per step for the workers' envs.

Workers write their envs' observations into a shared step buffer and wait; the :class:`ActionServing`
runs the agent on them (on the agent's device: a GPU where there is one, or the CPU), writes the
actions back and lets the workers step. After the last step it computes the bootstrap value from the
final observations. Per time step::

    workers: observations -> step buffer, "observations ready #n"   (one signal per worker)
    master:  agent.step(the group's envs) -> step buffer and samples, "actions ready #n"
    workers: env.step(action) for each env, write reward, done, env_info into the samples

The server holds one group of workers (``GpuSampler``) or two that take turns (alternating samplers):
while one group steps its envs, the master computes the other group's actions. Each group keeps the
agent's per-env state for its envs (random streams, and the RNN state of recurrent agents), swapped in
before acting for that group (``agent.get_step_state`` / ``set_step_state``). With ``no_overlap`` a
group steps only once the other group is back, so two workers never compete for one core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlrun.agents.base import AgentInputs, BaseAgent
from rlrun.samplers.action_sources import ValueAgent, value_agent
from rlrun.samplers.parallel.pool import WorkerPool
from rlrun.samplers.parallel.protocol import Report
from rlrun.samplers.parallel.worker import WorkerSettings
from rlrun.utils.buffer import buffer_from_example, numpify_buffer, torchify_buffer
from rlrun.utils.collections import NamedArrayTuple, namedarraytuple

__all__ = ["ActionServing", "ServedGroup", "StepBuffer", "build_step_buffer"]

StepBuffer = namedarraytuple("StepBuffer", ["observation", "action", "reward", "done", "agent_info"])


def build_step_buffer(examples: Mapping[str, object], B: int) -> NamedArrayTuple:
    """The ``[B, ...]`` arrays, in shared memory, through which master and workers exchange one step."""
    buffer: NamedArrayTuple = StepBuffer(
        *(buffer_from_example(examples[name], B, share_memory=True) for name in StepBuffer._fields)
    )
    return buffer


def _agent_inputs(step_buffer_pyt: NamedArrayTuple) -> NamedArrayTuple:
    """What the agent reads from the step buffer: the observation, and the last action and reward."""
    inputs: NamedArrayTuple = AgentInputs(step_buffer_pyt.observation, step_buffer_pyt.action, step_buffer_pyt.reward)
    return inputs


@dataclass
class ServedGroup:
    """Workers the master serves together: their ranks, their rows of the step buffer, and the agent's
    state for their envs (None when the sampler serves a single group)."""

    ranks: list[int]
    rows: slice
    agent_state: dict[str, Any] | None = field(default=None, repr=False)


class ActionServing:
    """Serves the actions of ``B`` training envs (and ``eval_n_envs`` evaluation envs) to the workers.

    ``alternating``: two groups of workers, each half of the envs, served in turn; ``no_overlap``: a
    group's actions are released only once the other group has finished its step. ``mid_batch_reset``
    is the collectors': whether a done env's agent state resets at every step or at the batch start.
    """

    def __init__(
        self,
        agent: BaseAgent,
        examples: Mapping[str, object],
        B: int,
        eval_n_envs: int,
        alternating: bool = False,
        no_overlap: bool = False,
        mid_batch_reset: bool = True,
    ) -> None:
        self.agent = agent
        self.alternating = alternating
        self.no_overlap = no_overlap
        self.mid_batch_reset = mid_batch_reset
        self.step_buffer_np = build_step_buffer(examples, B)
        self.step_buffer_pyt: NamedArrayTuple = torchify_buffer(self.step_buffer_np)
        self.agent_inputs = _agent_inputs(self.step_buffer_pyt)
        self.eval_step_buffer_np: NamedArrayTuple | None = None
        self.eval_agent_inputs: NamedArrayTuple | None = None
        if eval_n_envs > 0:
            self.eval_step_buffer_np = build_step_buffer(examples, eval_n_envs)
            self.eval_agent_inputs = _agent_inputs(torchify_buffer(self.eval_step_buffer_np))
        self.groups: list[ServedGroup] = []
        self._eval_state: dict[str, Any] | None = None
        self._loaded: dict[str, Any] | None = None  # the agent state in the agent now
        self._value_agent: ValueAgent | None = None  # the agent, once checked to give values

    def worker_rows(self, env_slice: slice, eval_slice: slice) -> dict[str, NamedArrayTuple | None]:
        """A worker's rows of the step buffers, as :class:`WorkerSettings` fields."""
        eval_rows = self.eval_step_buffer_np[eval_slice] if self.eval_step_buffer_np is not None else None
        return dict(step_buffer_np=self.step_buffer_np[env_slice], eval_step_buffer_np=eval_rows)

    def start(self, seed: int, env_ranks: list[int], settings: Sequence[WorkerSettings], global_B: int) -> None:
        """Once the workers are up: group them and seed the agent with every env's action stream."""
        eval_ranks = [r for s in settings for r in s.eval_env_ranks]
        self.groups = self._make_groups(settings)
        agent = self.agent
        if len(self.groups) == 1:
            agent.seed_env_streams(seed, env_ranks, eval_env_ranks=eval_ranks)
            agent.reset()
            agent.sample_mode(0)
            return
        # One agent state per group, swapped in before the agent steps that group's envs.
        for group in self.groups:
            agent.collector_initialize(global_B=global_B, env_ranks=env_ranks[group.rows])  # e.g. per-env epsilons
            agent.seed_env_streams(seed, env_ranks[group.rows], eval_env_ranks=[])
            agent.reset()
            agent.sample_mode(0)
            group.agent_state = agent.get_step_state()
        agent.seed_env_streams(seed, [], eval_env_ranks=eval_ranks)
        agent.reset()
        self._eval_state = self._loaded = agent.get_step_state()

    def _make_groups(self, settings: Sequence[WorkerSettings]) -> list[ServedGroup]:
        B = len(self.step_buffer_np.done)
        if not self.alternating:
            return [ServedGroup(ranks=[s.rank for s in settings], rows=slice(0, B))]
        half_w, half_b = len(settings) // 2, B // 2
        return [
            ServedGroup(ranks=list(range(half_w)), rows=slice(0, half_b)),
            ServedGroup(ranks=list(range(half_w, len(settings))), rows=slice(half_b, 2 * half_b)),
        ]

    def _use(self, state: dict[str, Any] | None) -> None:
        """Put ``state`` in the agent, keeping the one there now (no-op with one group)."""
        if state is None or state is self._loaded:
            return
        if self._loaded is not None:
            self._loaded.update(self.agent.get_step_state())
        self.agent.set_step_state(state)
        self._loaded = state

    def serve_batch(self, pool: WorkerPool, itr: int, samples_np: NamedArrayTuple) -> list[Report]:
        """The master's part of a batch round: every step's actions, then the bootstrap value."""
        agent, step, samples = self.agent, self.step_buffer_np, samples_np.agent
        samples.prev_action[0] = step.action  # the last action of the previous batch
        if len(self.groups) > 1:
            for group in self.groups:  # the runner set the mode of whichever state was loaded
                self._use(group.agent_state)
                agent.sample_mode(itr)
        reset_every_step = self.mid_batch_reset
        held: list[int] | None = None  # no_overlap: actions computed, released once the other group is back
        for t in range(len(samples_np.env.done)):
            for group in self.groups:
                pool.gather_observations(group.ranks)
                if held is not None:
                    pool.send_actions(held)
                    held = None
                self._use(group.agent_state)
                self._reset_done(group.rows, step.done, reset_every_step or t == 0)
                action_pyt, agent_info_pyt = agent.step(*(x[group.rows] for x in self.agent_inputs))
                action, agent_info = numpify_buffer(action_pyt), numpify_buffer(agent_info_pyt)
                step.action[group.rows] = action
                if agent_info is not None:
                    step.agent_info[group.rows] = agent_info
                if self.no_overlap:
                    held = group.ranks
                else:
                    pool.send_actions(group.ranks)  # before the samples' copies: the workers start sooner
                samples.action[t, group.rows] = action
                if agent_info is not None:
                    samples.agent_info[t, group.rows] = agent_info
        for group in self.groups:  # the observations after the last step
            pool.gather_observations(group.ranks)
            if held is not None:
                pool.send_actions(held)
                held = None
            if "bootstrap_value" in samples._fields:
                self._use(group.agent_state)
                self._reset_done(group.rows, step.done, reset_every_step)
                if self._value_agent is None:
                    self._value_agent = value_agent(agent)
                value = self._value_agent.value(*(x[group.rows] for x in self.agent_inputs))
                samples.bootstrap_value[0, group.rows] = numpify_buffer(value)
        return pool.gather_reports()

    def restarted(self, rows: Sequence[int]) -> None:
        """The workers of these env rows were replaced: their envs start new episodes, so the agent's state
        for them (a recurrent agent's memory) starts anew too. Their random streams go on, never repeating."""
        for group in self.groups:
            mine = [b - group.rows.start for b in rows if group.rows.start <= b < group.rows.stop]
            if mine:
                self._use(group.agent_state)
                for b in mine:
                    self.agent.reset_one(idx=b)

    def _reset_done(self, rows: slice, done: np.ndarray, now: bool) -> None:
        """Reset the agent's per-env state (recurrent agents) for envs done at the previous step; a
        waiting env (wait-reset collectors) only at the start of the batch, when its worker reset it."""
        if now:
            for b in np.flatnonzero(done[rows]):
                self.agent.reset_one(idx=int(b))

    def serve_evaluation(self, pool: WorkerPool, itr: int) -> list[Report]:
        """The master's part of an evaluation round: actions for every worker until it reports."""
        agent, step, inputs = self.agent, self.eval_step_buffer_np, self.eval_agent_inputs
        if step is None or inputs is None:
            raise RuntimeError("This sampler has no evaluation envs (eval_n_envs=0): there is nothing to serve.")
        self._use(self._eval_state)
        agent.reset()
        agent.eval_mode(itr)
        reports: dict[int, Report] = {}
        n_worker = len(pool.processes)
        active = list(range(n_worker))
        while True:
            for rank, report in pool.gather_step_or_report(active).items():
                if report is not None:  # this worker's episodes are done
                    reports[rank] = report
                    active.remove(rank)
            if not active:
                break
            self._reset_done(slice(None), step.done, True)
            action_pyt, agent_info_pyt = agent.step(*inputs)
            step.action[:] = numpify_buffer(action_pyt)
            if step.agent_info is not None:
                step.agent_info[:] = numpify_buffer(agent_info_pyt)
            pool.send_actions(active)
        return [reports[rank] for rank in range(n_worker)]
