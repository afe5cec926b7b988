"""The asynchronous sampler without workers: its process steps every env and runs the agent."""

from __future__ import annotations

import logging
from typing import Any

import torch

from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.async_.base import AsyncSamplerMixin
from rlrun.samplers.async_.collectors import DbCpuResetCollector
from rlrun.samplers.base import BaseSampler
from rlrun.samplers.builder import (
    close_envs,
    eval_env_ranks_of,
    make_collector,
    make_envs,
    make_local_eval,
    start_collector,
)
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector
from rlrun.samplers.parallel.base import resolve_start_method
from rlrun.samplers.serial.collectors import SerialEvalCollector
from rlrun.utils.collections import AttrDict
from rlrun.utils.launching.pinning import pin_to_cpus

__all__ = ["AsyncSerialSampler"]

_log = logging.getLogger(__name__)


class AsyncSerialSampler(AsyncSamplerMixin, BaseSampler):
    """Runs in a process of its own, beside the optimiser, and steps ``batch_B`` envs in turn there.

    Between batches it copies the weights the optimiser last published. ``start_method`` ("fork",
    "spawn", "forkserver"; None: fork on Linux) is how the runner starts the sampler and copier processes. ``affinity`` (the run's
    ``affinity['sampler']``) may name ``master_cpus`` to pin this process; it runs one torch thread.
    """

    def __init__(
        self,
        *args: Any,
        CollectorCls: type[BaseCollector] = DbCpuResetCollector,
        eval_CollectorCls: type[BaseEvalCollector] = SerialEvalCollector,
        start_method: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, CollectorCls=CollectorCls, eval_CollectorCls=eval_CollectorCls, **kwargs)  # type: ignore[misc]
        self.start_method = resolve_start_method(start_method)  # how the runner starts this sampler's process
        self.envs: list = []
        self.eval_envs: list = []

    def initialize(self, affinity: dict | None = None) -> None:  # type: ignore[override]  # rlpyt's async signature
        """In the sampler process: build the envs and collectors and start them (after async_initialize)."""
        affinity = dict(affinity or {})
        if affinity.get("master_cpus") is not None and affinity.get("set_affinity", True):
            pin_to_cpus(affinity["master_cpus"], "affinity['sampler']['master_cpus'] names CPUs")
        torch.set_num_threads(1)  # one batch of B envs per forward: more threads only compete with the optimiser
        T, B = self.batch_spec
        env_ranks = list(range(B))
        agent = self.agent
        agent.async_cpu(share_memory=False)
        agent.to_device(affinity.get("cuda_idx"))
        agent.recv_shared_memory()
        self.envs = make_envs(self.EnvCls, self.env_kwargs, env_ranks, self.seed)
        self.collector = make_collector(
            self.CollectorCls,
            rank=0,
            envs=self.envs,
            samples_np=self.double_buffer,
            batch_T=T,
            TrajInfoCls=self.TrajInfoCls,
            agent=agent,
            global_B=B,
            env_ranks=env_ranks,
            traj_info_kwargs=self.traj_info_kwargs,
            sync=AttrDict(),
        )
        eval_ranks = eval_env_ranks_of(B, 0, max(0, self.eval_n_envs))
        eval_envs, eval_collector = make_local_eval(self, agent, eval_ranks, self.seed, self.traj_info_kwargs)
        if eval_collector is not None:
            self.eval_envs, self.eval_collector = eval_envs, eval_collector
        self.agent_inputs, self.traj_infos = start_collector(self.collector, self.max_decorrelation_steps, self.seed)
        agent.seed_env_streams(self.seed, env_ranks, eval_env_ranks=eval_ranks)
        self.collector.start_agent()
        _log.info("Asynchronous serial sampler initialized: batch_T=%d, batch_B=%d.", T, B)

    def obtain_samples(self, itr: int, db_idx: int = 0) -> list[TrajInfo]:  # type: ignore[override]
        """Collect batch ``itr`` into half ``itr % 2`` (``db_idx``) with the newest published weights;
        returns the completed trajectories."""
        self.agent.recv_shared_memory()
        self.agent.sample_mode(itr)
        self.collector.reset_if_needed(self.agent_inputs)
        self.agent_inputs, self.traj_infos, completed = self.collector.collect_batch(
            self.agent_inputs, self.traj_infos, itr
        )
        return completed

    def evaluate_agent(self, itr: int) -> list[TrajInfo]:
        if self.eval_n_envs <= 0:
            raise RuntimeError("evaluate_agent needs eval_n_envs > 0 in the sampler.")
        self.agent.recv_shared_memory()
        self.agent.eval_mode(itr)
        return self.eval_collector.collect_evaluation(itr)

    def shutdown(self) -> None:
        close_envs(self.envs + self.eval_envs)
        self.envs, self.eval_envs = [], []
