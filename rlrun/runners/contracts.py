"""What a runner needs of its sampler, algorithm and agent, written down as typed protocols.

The runners are annotated with these protocols, not with base classes: any object with these
attributes and methods plugs in. rlrun's base classes (``BaseSampler``, ``RlAlgorithm``,
``BaseAgent``) declare every attribute with a default, so a subclass meets its protocol by
construction, and the type checker in CI verifies that they do (see the end of this module).

State dicts (and the agent's step state) are opaque to the runners: they keep them in checkpoints and
snapshots and hand them back, never reading a value, so the contracts type them as mappings of
``object``; what is inside is each component's business (its own class types it).

The agent is the one type the parts share: a sampler takes any :class:`~rlrun.agents.base.BaseAgent`,
and an algorithm its own kind (``DQN`` a ``DqnAgent``), so :class:`AlgorithmContract` is generic in
the agent class and a runner holds ``AlgorithmContract[AgentT]`` beside an ``AgentT``: mypy then checks
that a script pairs an algorithm with an agent it can train.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import torch

from rlrun.agents.base import BaseAgent, SpaceTensor
from rlrun.algos.base import OptInfoTuple
from rlrun.envs.base import Env
from rlrun.envs.traj_info import TrajInfo
from rlrun.replays.base import BaseReplayBuffer
from rlrun.samplers.collections import BatchSpec
from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.data_model import SamplesBatch

__all__ = [
    "SamplesBatch",
    "SamplerContract",
    "AlgorithmContract",
    "AsyncAlgorithmContract",
    "AgentContract",
    "AgentT",
]

# The agent class of a run: what its algorithm trains (runners are generic in it).
AgentT = TypeVar("AgentT", bound=BaseAgent)
_AgentT_contra = TypeVar("_AgentT_contra", bound=BaseAgent, contravariant=True)


@runtime_checkable
class RestartsWorkers(Protocol):
    """A sampler that may replace faulty workers (the parallel samplers' ``worker_restarts``)."""

    @property
    def worker_restart_count(self) -> int | None:
        """Restarts made so far; None when restarts are off (then no ``WorkerRestarts`` column is logged)."""


class SamplerContract(Protocol):
    """The sampler as runners use it."""

    TrajInfoCls: type[TrajInfo]
    n_worker: int
    eval_n_envs: int
    EnvCls: Callable[..., Env]  # for the run record and the videos
    env_kwargs: dict[str, Any]
    eval_env_kwargs: dict[str, Any]

    @property
    def batch_spec(self) -> BatchSpec: ...

    @property
    def mid_batch_reset(self) -> bool: ...

    def initialize(
        self,
        agent: BaseAgent,
        affinity: dict[str, Any] | None = None,
        seed: int | None = None,
        bootstrap_value: bool = False,
        traj_info_kwargs: dict[str, Any] | None = None,
        rank: int = 0,
        world_size: int = 1,
    ) -> dict[str, Any]: ...

    def obtain_samples(self, itr: int) -> tuple[SamplesBatch, Sequence[TrajInfo]]: ...

    def evaluate_agent(self, itr: int) -> Sequence[TrajInfo]: ...

    def shutdown(self) -> None: ...

    # Checkpoints (rlrun.runners.checkpoint).
    restores_env_state: bool

    def state_dict(self) -> dict[str, object]: ...

    def load_state_dict(self, state: dict[str, object]) -> None: ...


class AlgorithmContract(Protocol[_AgentT_contra]):
    """The algorithm as runners use it, training agents of class ``_AgentT_contra``; ``RlAlgorithm``
    documents each attribute."""

    # Read, never written, by the runners (so an algorithm may narrow them, as DQN's int batch_size).
    @property
    def opt_info_fields(self) -> tuple[str, ...]: ...

    @property
    def bootstrap_value(self) -> bool: ...

    @property
    def discount(self) -> float: ...

    @property
    def min_steps_learn(self) -> int: ...

    @property
    def min_itr_learn(self) -> int: ...

    @property
    def batch_size(self) -> int | None: ...

    @property
    def update_counter(self) -> int: ...

    def initialize(
        self,
        agent: _AgentT_contra,
        n_itr: int,
        batch_spec: BatchSpec,
        mid_batch_reset: bool = False,
        examples: dict[str, Any] | None = None,
        world_size: int = 1,
        rank: int = 0,
    ) -> None: ...

    def optimize_agent(
        self, itr: int, samples: SamplesBatch | None = None, sampler_itr: int | None = None
    ) -> OptInfoTuple: ...

    def optim_state_dict(self) -> dict[str, object]: ...

    def state_dict(self, replay: bool = True) -> dict[str, object]: ...

    def load_state_dict(self, state_dict: dict[str, object]) -> None: ...


class AsyncAlgorithmContract(AlgorithmContract[_AgentT_contra], Protocol[_AgentT_contra]):
    """What the asynchronous runners use besides: the replay built in shared memory before the processes
    start, the optimiser built after, the copier's conversion of a batch, and the replay ratio's terms
    (DQN and its kind: ``RlAlgorithm.async_initialize`` refuses for the others)."""

    @property
    def batch_size(self) -> int: ...

    @property
    def replay_ratio(self) -> float: ...

    @property
    def updates_per_optimize(self) -> int: ...

    def async_initialize(
        self,
        agent: _AgentT_contra,
        sampler_n_itr: int,
        batch_spec: BatchSpec,
        mid_batch_reset: bool,
        examples: dict[str, Any],
        world_size: int = 1,
    ) -> BaseReplayBuffer: ...

    def optim_initialize(self, rank: int = 0) -> None: ...

    def samples_to_buffer(self, samples: SamplesBatch) -> NamedArrayTuple: ...


class AgentContract(Protocol):
    """The agent as runners use it (samplers and algorithms use more; see ``BaseAgent``)."""

    def sample_mode(self, itr: int) -> None: ...

    def train_mode(self, itr: int) -> None: ...

    def eval_mode(self, itr: int) -> None: ...

    def to_device(self, cuda_idx: int | str | torch.device | None = None) -> None: ...

    def data_parallel(self) -> None: ...

    def leave_data_parallel(self) -> None: ...

    def state_dict(self) -> Mapping[str, object]: ...

    def load_state_dict(self, state_dict: Mapping[str, object]) -> None: ...

    def sync_shared_memory(self) -> None: ...

    # Playing an episode of its own (videos, rlrun play), with the sampling state kept aside.
    def get_step_state(self) -> Mapping[str, object]: ...

    def set_step_state(self, state: Mapping[str, object]) -> None: ...

    def reset(self) -> None: ...

    def reset_one(self, idx: int) -> None: ...

    def step(
        self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor
    ) -> NamedArrayTuple: ...


if TYPE_CHECKING:  # The type checker proves the base classes meet the contracts.
    from rlrun.agents.dqn.q_agent import EpsilonGreedyQAgent
    from rlrun.algos.base import RlAlgorithm
    from rlrun.algos.dqn.dqn import DqnStepLog, QLearning
    from rlrun.samplers.base import BaseSampler

    def _base_classes_meet_the_contracts(
        sampler: BaseSampler,
        algo: RlAlgorithm[BaseAgent],
        agent: BaseAgent,
        dqn: QLearning[EpsilonGreedyQAgent, DqnStepLog],
    ) -> tuple[
        SamplerContract, AlgorithmContract[BaseAgent], AgentContract, AsyncAlgorithmContract[EpsilonGreedyQAgent]
    ]:
        return sampler, algo, agent, dqn
