"""What a runner needs of its sampler, algorithm and agent, written down as typed protocols.

The runners are annotated with these protocols, not with base classes: any object with these
attributes and methods plugs in. rlrun's base classes (``BaseSampler``, ``RlAlgorithm``,
``BaseAgent``) declare every attribute with a default, so a subclass meets its protocol by
construction, and the type checker in CI verifies that they do (see the end of this module).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import torch

from rlrun.agents.base import SpaceTensor
from rlrun.algos.base import OptInfoTuple
from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.collections import BatchSpec
from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.data_model import SamplesBatch

__all__ = ["SamplesBatch", "SamplerContract", "AlgorithmContract", "AgentContract"]


class SamplerContract(Protocol):
    """The sampler as runners use it."""

    TrajInfoCls: type[TrajInfo]
    n_worker: int
    eval_n_envs: int
    EnvCls: Callable[..., Any]  # for the run record and the videos
    env_kwargs: dict[str, Any]
    eval_env_kwargs: dict[str, Any]

    @property
    def batch_spec(self) -> BatchSpec: ...

    @property
    def mid_batch_reset(self) -> bool: ...

    def initialize(
        self,
        agent: Any,
        affinity: dict | None = None,
        seed: int | None = None,
        bootstrap_value: bool = False,
        traj_info_kwargs: dict | None = None,
        rank: int = 0,
        world_size: int = 1,
    ) -> Any: ...

    def obtain_samples(self, itr: int) -> tuple[SamplesBatch, Sequence[TrajInfo]]: ...

    def evaluate_agent(self, itr: int) -> Sequence[TrajInfo]: ...

    def shutdown(self) -> None: ...

    # Checkpoints (rlrun.runners.checkpoint).
    restores_env_state: bool

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class AlgorithmContract(Protocol):
    """The algorithm as runners use it; ``RlAlgorithm`` documents each attribute."""

    opt_info_fields: tuple[str, ...]
    bootstrap_value: bool
    discount: float
    min_steps_learn: int
    min_itr_learn: int
    batch_size: int | None
    update_counter: int

    def initialize(
        self,
        agent: Any,
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

    def optim_state_dict(self) -> dict[str, Any]: ...

    def state_dict(self, replay: bool = True) -> dict[str, Any]: ...

    def load_state_dict(self, state_dict: dict[str, Any]) -> None: ...


class AgentContract(Protocol):
    """The agent as runners use it (samplers and algorithms use more; see ``BaseAgent``)."""

    def sample_mode(self, itr: int) -> None: ...

    def train_mode(self, itr: int) -> None: ...

    def eval_mode(self, itr: int) -> None: ...

    def to_device(self, cuda_idx: int | str | torch.device | None = None) -> None: ...

    def data_parallel(self) -> None: ...

    def leave_data_parallel(self) -> None: ...

    def state_dict(self) -> Mapping[str, Any]: ...

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None: ...

    def sync_shared_memory(self) -> None: ...

    # Playing an episode of its own (videos, rlrun play), with the sampling state kept aside.
    def get_step_state(self) -> dict[str, Any]: ...

    def set_step_state(self, state: Mapping[str, Any]) -> None: ...

    def reset(self) -> None: ...

    def reset_one(self, idx: int) -> None: ...

    def step(
        self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor
    ) -> NamedArrayTuple: ...


if TYPE_CHECKING:  # The type checker proves the base classes meet the contracts.
    from rlrun.agents.base import BaseAgent
    from rlrun.algos.base import RlAlgorithm
    from rlrun.samplers.base import BaseSampler

    def _base_classes_meet_the_contracts(
        sampler: BaseSampler, algo: RlAlgorithm, agent: BaseAgent
    ) -> tuple[SamplerContract, AlgorithmContract, AgentContract]:
        return sampler, algo, agent
