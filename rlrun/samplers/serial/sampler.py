"""The sampler that runs every env and the agent in the training process."""

from __future__ import annotations

import logging
import pickle
from collections.abc import Callable, Mapping
from typing import Any

from rlrun.agents.base import BaseAgent
from rlrun.envs.base import Env
from rlrun.envs.traj_info import TrajInfo
from rlrun.envs.validation import validate_env
from rlrun.samplers.base import BaseSampler, report_unfinished_evaluation
from rlrun.samplers.batch_buffers import BatchBuffers
from rlrun.samplers.builder import (
    close_envs,
    eval_env_ranks_of,
    make_collector,
    make_envs,
    make_local_eval,
    start_collector,
)
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector, ResetCollector
from rlrun.samplers.serial.collectors import SerialEvalCollector
from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.data_model import SamplesBatch
from rlrun.utils.seed import make_seed

__all__ = ["SerialSampler"]

_log = logging.getLogger(__name__)


class SerialSampler(BaseSampler):
    """Steps ``batch_B`` envs in turn in this process; the simplest sampler and the reference for
    the parallel ones, which produce the same samples for the same seed.

    Env ``b`` (global rank ``rank * batch_B + b``) is seeded with ``seed + rank``; evaluation envs
    continue the numbering after all training envs.
    """

    def __init__(
        self,
        *args: Any,
        CollectorCls: type[BaseCollector] = ResetCollector,
        eval_CollectorCls: type[BaseEvalCollector] = SerialEvalCollector,
        **kwargs: Any,
    ) -> None:
        kwargs.update(CollectorCls=CollectorCls, eval_CollectorCls=eval_CollectorCls)  # after rlpyt's positional args
        super().__init__(*args, **kwargs)
        self.envs: list[Env] = []
        self.eval_envs: list[Env] = []
        # Built by initialize (start_with).
        self.agent: BaseAgent
        self.buffers: BatchBuffers
        self.collector: BaseCollector
        self.eval_collector: BaseEvalCollector
        self.agent_inputs: NamedArrayTuple
        self.traj_infos: list[TrajInfo]
        self.samples_pyt: NamedArrayTuple
        self.samples_np: NamedArrayTuple
        self._closed = False
        self._warned_unpicklable = False

    def initialize(
        self,
        agent: BaseAgent,
        affinity: Mapping[str, object] | None = None,
        seed: int | None = None,
        bootstrap_value: bool = False,
        traj_info_kwargs: Mapping[str, object] | None = None,
        rank: int = 0,
        world_size: int = 1,
        worker_process: Callable[..., None] | None = None,
    ) -> dict[str, Any]:
        if worker_process is not None:
            raise ValueError(
                f"{type(self).__name__} steps its envs in this process and starts no workers, so it takes no "
                "worker_process; use a parallel sampler (CpuSampler, GpuSampler) for a custom worker target."
            )
        B = self.batch_spec.B
        env_ranks = list(range(rank * B, (rank + 1) * B))
        example_env = self.EnvCls(**self.env_kwargs)
        try:
            validate_env(example_env)
            agent.initialize(example_env.spaces, share_memory=False, global_B=B * world_size, env_ranks=env_ranks)
            buffers = BatchBuffers.build(agent, example_env, self.batch_spec, bootstrap_value, shared=False)
        finally:
            example_env.close()
        self.start_with(agent, buffers, affinity, seed, traj_info_kwargs, rank, world_size)
        return buffers.examples

    def start_with(
        self,
        agent: BaseAgent,
        buffers: BatchBuffers,
        affinity: Mapping[str, object] | None = None,
        seed: int | None = None,
        traj_info_kwargs: Mapping[str, object] | None = None,
        rank: int = 0,
        world_size: int = 1,
    ) -> None:
        """Build the envs and collectors on ``buffers`` for an initialized ``agent`` and start them: the
        rest of :meth:`initialize`, also for an asynchronous sampler's double buffer and model. This
        sampler runs in the calling process, so ``affinity`` is the caller's to apply."""
        T, B = self.batch_spec
        seed = make_seed() if seed is None else int(seed)
        global_B = B * world_size
        env_ranks = list(range(rank * B, (rank + 1) * B))
        self.envs = make_envs(self.EnvCls, self.env_kwargs, env_ranks, seed)
        self.collector = make_collector(
            self.CollectorCls,
            rank=0,
            envs=self.envs,
            samples_np=buffers.collector_samples(),
            batch_T=T,
            TrajInfoCls=self.TrajInfoCls,
            agent=agent,
            global_B=global_B,
            env_ranks=env_ranks,
            traj_info_kwargs=traj_info_kwargs,
        )
        eval_ranks = eval_env_ranks_of(global_B, rank, max(0, self.eval_n_envs))
        eval_envs, eval_collector = make_local_eval(self, agent, eval_ranks, seed, traj_info_kwargs)
        if eval_collector is not None:
            self.eval_envs, self.eval_collector = eval_envs, eval_collector
        self.agent_inputs, self.traj_infos = start_collector(self.collector, self.max_decorrelation_steps, seed)
        agent.seed_env_streams(seed, env_ranks, eval_env_ranks=eval_ranks)
        self.collector.start_agent()
        self.agent = agent
        self.buffers = buffers
        self.samples_pyt = buffers.pyt_of(0)
        self.samples_np = buffers.np_of(0)
        self._closed = False
        _log.info("%s initialized: batch_T=%d, batch_B=%d.", type(self).__name__, T, B)

    def obtain_samples(self, itr: int) -> tuple[SamplesBatch, list[TrajInfo]]:
        """Collect one batch; returns ``(samples, completed_traj_infos)``, samples as torch views."""
        completed = self.collect_round(itr)
        return self.samples_pyt, completed

    def collect_round(self, itr: int) -> list[TrajInfo]:
        """Batch ``itr`` into its buffer (half ``itr % 2`` of a double buffer); returns the completed
        trajectories."""
        self.collector.reset_if_needed(self.agent_inputs)
        self.agent_inputs, self.traj_infos, completed = self.collector.collect_batch(
            self.agent_inputs, self.traj_infos, itr
        )
        self.samples_pyt, self.samples_np = self.buffers.pyt_of(itr), self.buffers.np_of(itr)
        return completed

    def evaluate_agent(self, itr: int) -> list[TrajInfo]:
        """Run the evaluation episodes; returns their TrajInfos."""
        return self.evaluation_round(itr)

    def evaluation_round(self, itr: int) -> list[TrajInfo]:
        """:meth:`evaluate_agent`, for the asynchronous sampler that runs this one."""
        if self.eval_n_envs <= 0:
            raise RuntimeError("evaluate_agent needs eval_n_envs > 0 in the sampler.")
        infos = self.eval_collector.collect_evaluation(itr)
        report_unfinished_evaluation(_log, itr, len(infos), self.eval_collector.n_unfinished, self.eval_max_steps)
        return infos

    # ---- checkpoints ----

    restores_env_state = True

    def state_dict(self) -> dict[str, Any]:
        """Everything the next batch depends on, so that a resumed run goes on as if never stopped: each
        env pickled mid-episode (training and evaluation envs), the agent inputs (observation, previous
        action and reward), the unfinished TrajInfos, the collector's state, the agent's step state (its
        per-env random streams, epsilons, recurrent state) and the samples buffer.

        An env that cannot be pickled (``None`` here) makes :meth:`load_state_dict` keep the fresh envs
        of ``initialize``: training goes on from new episodes."""
        envs = [self._pickled(env) for env in self.envs]
        return dict(
            envs=envs,
            eval_envs=[self._pickled(env) for env in self.eval_envs],
            agent_inputs=self.agent_inputs,
            traj_infos=self.traj_infos,
            collector=self.collector.state_dict(),
            agent_step_state=self.agent.get_step_state(),
            samples=self.samples_np,
        )

    def _pickled(self, env: Env) -> bytes | None:
        # cloudpickle (a Gymnasium dependency) also takes the local functions some Gymnasium wrappers
        # hold (RescaleAction's); what it writes, pickle reads.
        try:
            import cloudpickle

            dumps = cloudpickle.dumps
        except ImportError:
            dumps = pickle.dumps
        try:
            data: bytes = dumps(env)
            return data
        except Exception as e:
            if not self._warned_unpicklable:
                self._warned_unpicklable = True
                _log.warning(
                    "Checkpoint: %s cannot be pickled (%s: %s), so a resumed run starts its envs from reset and "
                    "continues from new episodes (not bit-identical to an uninterrupted run).",
                    type(env).__name__,
                    type(e).__name__,
                    e,
                )
            return None

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s output after ``initialize`` (same env, batch shape and agent).

        An empty state is what a parallel sampler keeps (its envs live in its workers): a run resumed with
        a SerialSampler from such a checkpoint (``sampler="auto"`` may pick another layout on resume)
        keeps the fresh envs of ``initialize``, as that sampler would have."""
        if not state:
            _log.info("The checkpoint holds no sampler state (a parallel sampler wrote it): new episodes start.")
            return
        self.agent.set_step_state(state["agent_step_state"])
        self.samples_np[:] = state["samples"]
        if all(env is not None for env in state["envs"]) and len(state["envs"]) == len(self.envs):
            close_envs(self.envs)
            self.envs = [pickle.loads(env) for env in state["envs"]]
            self.collector.envs = list(self.envs)
            self.agent_inputs[:] = state["agent_inputs"]
            self.traj_infos = list(state["traj_infos"])
            self.collector.load_state_dict(state["collector"])
        eval_envs = state["eval_envs"]
        if self.eval_n_envs > 0 and eval_envs and all(env is not None for env in eval_envs):
            close_envs(self.eval_envs)
            self.eval_envs = [pickle.loads(env) for env in eval_envs]
            self.eval_collector.envs = list(self.eval_envs)

    def shutdown(self) -> None:
        """Close every env; safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        close_envs(self.envs + self.eval_envs)
