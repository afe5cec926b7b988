"""What the asynchronous samplers with workers share: the synchronous parallel sampler, started inside
the sampler process on the double buffer built in the training process."""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.async_.base import AsyncSamplerMixin
from rlrun.samplers.parallel.protocol import Command, CommandKind
from rlrun.samplers.parallel.worker import WorkerSettings
from rlrun.utils.buffer import torchify_buffer
from rlrun.utils.launching.pinning import pin_to_cpus

__all__ = ["AsyncParallelSamplerMixin"]


class AsyncParallelSamplerMixin(AsyncSamplerMixin):
    """Put first among the bases, before a :class:`~rlrun.samplers.parallel.base.ParallelSamplerBase`
    subclass. Worker ``r`` gets its columns of both halves; round ``itr`` fills half ``itr % 2``."""

    agent: Any
    double_buffer: tuple[Any, Any]
    examples: dict
    samples_np: Any
    samples_pyt: Any

    def initialize(self, affinity: dict | None = None) -> None:
        """In the sampler process (after async_initialize): pin it to ``affinity['master_cpus']`` if named,
        prepare the agent, start the workers."""
        affinity = dict(affinity or {})
        if affinity.get("master_cpus") is not None and affinity.get("set_affinity", True):
            pin_to_cpus(affinity["master_cpus"], "affinity['sampler']['master_cpus'] names CPUs")
        torch.set_num_threads(1)  # the workers and the optimiser want the cores
        self._prepare_agent(affinity)
        super().initialize(  # type: ignore[misc]
            agent=self.agent,
            affinity=affinity or None,
            seed=self.seed,
            bootstrap_value=self.bootstrap_value,
            traj_info_kwargs=self.traj_info_kwargs,
        )
        self.agent.recv_shared_memory()

    def _prepare_agent(self, affinity: dict) -> None:
        """The sampler's own model (see ``BaseAgent.async_cpu``)."""
        raise NotImplementedError

    def obtain_samples(self, itr: int, db_idx: int = 0) -> list[TrajInfo]:
        """Batch ``itr`` into half ``itr % 2`` (``db_idx``) with the newest published weights; returns the
        completed trajectories."""
        self.agent.recv_shared_memory()
        self.agent.sample_mode(itr)  # served samplers act here (and may come from an evaluation)
        self.samples_np = self.double_buffer[itr % 2]
        return self._run_round(Command(CommandKind.COLLECT, itr))  # type: ignore[attr-defined]

    # ---- hooks of ParallelSamplerBase.initialize ----

    def _agent_init(self, agent: Any, env: Any, global_B: int = 1, env_ranks: list[int] | None = None) -> None:
        self.agent = agent  # initialized in the training process, by async_initialize

    def _build_buffers(self, env: Any, bootstrap_value: bool):
        self.samples_np = self.double_buffer[0]
        self.samples_pyt = torchify_buffer(self.samples_np)
        return self.examples

    def _worker_settings(self, affinity: dict, seed: int, n_envs_list: list[int]) -> list[WorkerSettings]:
        settings = super()._worker_settings(affinity, seed, n_envs_list)  # type: ignore[misc]
        out = []
        for s in settings:
            columns = slice(s.env_ranks[0], s.env_ranks[-1] + 1)
            out.append(dataclasses.replace(s, samples_np=tuple(half[:, columns] for half in self.double_buffer)))
        return out
