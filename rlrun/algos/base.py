"""The interface runners use to train an agent on sampled batches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

import torch

from rlrun.agents.base import BaseAgent
from rlrun.replays.base import BaseReplayBuffer
from rlrun.utils.data_model import SamplesBatch

if TYPE_CHECKING:  # samplers sit beside algos in the layers; the type alone is needed here
    from rlrun.samplers.collections import BatchSpec

__all__ = ["RlAlgorithm", "OptInfoTuple", "AgentT"]

# ``opt_info``: a namedtuple (fields :attr:`RlAlgorithm.opt_info_fields`) of per-gradient-step floats.
OptInfoTuple = tuple[list[float], ...]

AgentT = TypeVar("AgentT", bound=BaseAgent)


class RlAlgorithm(Generic[AgentT]):
    """Owns the optimiser and the update rule; the runner owns the loop.

    The runner calls :meth:`initialize` once after the sampler and agent are built, then per
    iteration ``opt_info = optimize_agent(itr, samples)``. ``opt_info`` is a namedtuple whose fields
    are :attr:`opt_info_fields`, each a list of floats with one entry per gradient step (empty when
    no step was taken), which the runner logs.

    The runner reads these attributes, declared here with their defaults:

    - ``bootstrap_value``: True asks the sampler for ``samples.agent.bootstrap_value``;
    - ``discount``: also given to the sampler's TrajInfo (``DiscountedReturn``);
    - ``min_steps_learn``: env steps sampled before the first gradient step (replay algorithms
      fill their replay first; 0 for on-policy ones);
    - ``min_itr_learn``: the first iteration that trains (replay algorithms wait to fill their
      replay); snapshots start there. Known after :meth:`initialize`;
    - ``batch_size``: the samples one gradient step trains on, for the replay ratio columns; None
      leaves those columns out;
    - ``update_counter``: gradient steps taken so far.
    """

    opt_info_fields: tuple[str, ...] = ()
    bootstrap_value: bool = False
    discount: float = 1.0
    min_steps_learn: int = 0
    min_itr_learn: int = 0
    batch_size: int | None = None
    update_counter: int = 0
    agent: AgentT  # set in initialize
    optimizer: torch.optim.Optimizer
    # A ReplayBufferCls instance or the factory's replay, set in initialize by algorithms that train from one.
    replay_buffer: Any = None

    def initialize(
        self,
        agent: AgentT,
        n_itr: int,
        batch_spec: BatchSpec,
        mid_batch_reset: bool = False,
        examples: dict[str, Any] | None = None,
        world_size: int = 1,
        rank: int = 0,
    ) -> None:
        """Build the optimiser (and replay) for ``agent``; ``n_itr`` iterations of ``batch_spec``
        batches will follow. ``mid_batch_reset`` tells whether envs reset inside a batch (otherwise
        the steps after an episode's end are filler); ``examples`` holds one sample of each field."""
        raise NotImplementedError

    def async_initialize(
        self,
        agent: AgentT,
        sampler_n_itr: int,
        batch_spec: BatchSpec,
        mid_batch_reset: bool,
        examples: dict[str, Any],
        world_size: int = 1,
    ) -> BaseReplayBuffer:
        """For asynchronous runners: build the replay in shared memory and return it."""
        raise NotImplementedError(
            f"{type(self).__name__} does not support asynchronous runners (AsyncRl) yet; use MinibatchRl."
        )

    def optim_initialize(self, rank: int = 0) -> None:
        """Build the optimiser; asynchronous runners call it in the optimiser process."""
        raise NotImplementedError

    def optimize_agent(
        self, itr: int, samples: SamplesBatch | None = None, sampler_itr: int | None = None
    ) -> OptInfoTuple:
        """Train on one batch (``[T, B]`` torch tensors) and return ``opt_info``."""
        raise NotImplementedError

    def optim_state_dict(self) -> dict[str, Any]:
        """The optimiser's state, for snapshots (override when holding several optimisers)."""
        return self.optimizer.state_dict()

    def load_optim_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state_dict)

    def state_dict(self, replay: bool = True) -> dict[str, Any]:
        """What a checkpoint needs to continue training after :meth:`initialize`: the optimiser state
        (:meth:`optim_state_dict`), ``update_counter``, and the replay's contents unless ``replay=False``.

        Schedules (learning rate, epsilon, PPO's clip, prioritized replay's beta) follow the iteration
        number, so the iteration a run resumes at restores them.
        """
        state: dict[str, Any] = dict(optimizer=self.optim_state_dict(), update_counter=self.update_counter)
        if replay and self.replay_buffer is not None:
            state["replay_buffer"] = self.replay_buffer.state_dict()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s output into an initialized algorithm (a replay left out of the
        checkpoint stays as built: empty)."""
        self.load_optim_state_dict(state_dict["optimizer"])
        self.update_counter = int(state_dict["update_counter"])
        if self.replay_buffer is not None and "replay_buffer" in state_dict:
            self.replay_buffer.load_state_dict(state_dict["replay_buffer"])
