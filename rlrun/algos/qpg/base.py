"""The loop DDPG, TD3 and SAC share: store sampled steps in a replay, then take gradient steps on
batches drawn from it, moving target networks as they go."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
import torch

from rlrun.agents.base import SpaceTensor
from rlrun.agents.qpg.base import QpgAgentBase
from rlrun.algos.base import OptInfoTuple, RlAlgorithm
from rlrun.algos.device import batch_to_device
from rlrun.algos.dqn.dqn import SamplesToBuffer, SamplesToBufferTl
from rlrun.algos.opt_info import StepValue, opt_info_to_host
from rlrun.algos.optim import clipped_step, fused_adam_kwargs, make_optimizer
from rlrun.replays.factory import make_replay_buffer
from rlrun.replays.user_class import replay_class_kwargs
from rlrun.utils.collections import NamedArrayTuple, fields_of, optional_field
from rlrun.utils.data_model import Array, SamplesBatch

if TYPE_CHECKING:  # samplers sit beside algos in the layers; only the type is needed
    from rlrun.samplers.collections import BatchSpec

__all__ = ["OffPolicyActorCritic", "SamplesToBuffer", "SamplesToBufferTl", "clipped_step", "fused_adam_kwargs"]

_log = logging.getLogger(__name__)

# An algorithm's OptInfo: a NamedTuple with a list per field, filled by train_step.
OptInfoT = TypeVar("OptInfoT", bound="Iterable[list[StepValue]]")


class OffPolicyActorCritic(RlAlgorithm[QpgAgentBase], Generic[OptInfoT]):
    """Replay handling and the update loop of DDPG, TD3 and SAC; subclasses write :meth:`train_step`.

    Per sampler iteration :meth:`optimize_agent` appends the batch to the replay and, from sampler itr
    ``min_itr_learn = min_steps_learn // sampler batch size`` on, takes ``updates_per_optimize =
    max(1, round(replay_ratio * sampler batch size / batch_size))`` gradient steps (``replay_ratio``:
    how many times each sampled step is trained on). Each step draws ``batch_size`` transitions,
    increments ``update_counter``, calls :meth:`train_step`, and every ``target_update_interval``
    steps moves the agent's targets by ``target_update_tau``.

    Time limits (``bootstrap_timelimit=True``, and envs reporting ``env_info.timeout``, as every
    :func:`rlrun.envs.gym.make` env does): the replay keeps ``timeout``, so a time-limit cut is not
    terminal; a window reaching it stops before it and bootstraps with ``discount ** steps_n`` from
    the last observation it holds; only the cut step's own transition uses its observation as an
    estimate of the next (unstored) one. rlpyt instead dropped such transitions from the loss. With
    ``bootstrap_timelimit=False`` every ``done`` is terminal.

    ``ReplayBufferCls`` replaces the replay choice; it is built with ``example``, ``size``, ``B``,
    ``discount``, ``n_step_return`` (and ``mid_batch_reset=False`` under wait-reset samplers).
    ``updates_per_sync`` is kept for rlpyt's asynchronous runners and unused here.
    """

    agent_methods: tuple[str, ...] = ("give_min_itr_learn", "update_target")
    agent_example: str = "a qpg agent"

    def __init__(
        self,
        discount: float,
        batch_size: int,
        min_steps_learn: int,
        replay_size: int,
        replay_ratio: float,
        target_update_tau: float,
        target_update_interval: int,
        n_step_return: int,
        OptimCls: Callable[..., torch.optim.Optimizer],
        optim_kwargs: dict[str, Any] | None,
        initial_optim_state_dict: dict[str, Any] | None,
        clip_grad_norm: float,
        updates_per_sync: int,
        bootstrap_timelimit: bool,
        ReplayBufferCls: type | None,
    ) -> None:
        name = type(self).__name__
        if not 0 <= discount <= 1:
            raise ValueError(f"{name}: discount must be in [0, 1], got {discount}.")
        if batch_size < 1 or n_step_return < 1 or target_update_interval < 1:
            raise ValueError(
                f"{name}: batch_size, n_step_return and target_update_interval must be at least 1; got "
                f"{batch_size}, {n_step_return}, {target_update_interval}."
            )
        if not 0 < target_update_tau <= 1:
            raise ValueError(f"{name}: target_update_tau must be in (0, 1], got {target_update_tau}.")
        if replay_ratio <= 0:
            raise ValueError(f"{name}: replay_ratio must be positive, got {replay_ratio}.")
        self.discount = discount
        self.batch_size: int = batch_size
        self.min_steps_learn = min_steps_learn
        self.replay_size = replay_size
        self.replay_ratio = replay_ratio
        self.target_update_tau = target_update_tau
        self.target_update_interval = target_update_interval
        self.n_step_return = n_step_return
        self.OptimCls = OptimCls
        self.optim_kwargs = dict(optim_kwargs or {})
        self.initial_optim_state_dict = initial_optim_state_dict
        self.clip_grad_norm = clip_grad_norm
        self.updates_per_sync = updates_per_sync
        self.bootstrap_timelimit = bootstrap_timelimit
        self.ReplayBufferCls = ReplayBufferCls
        self.update_counter = 0
        self._warned_no_timeout = False

    # --- building --------------------------------------------------------------------------------

    def initialize(
        self,
        agent: QpgAgentBase,
        n_itr: int,
        batch_spec: BatchSpec,
        mid_batch_reset: bool = False,
        examples: dict[str, Any] | None = None,
        world_size: int = 1,
        rank: int = 0,
    ) -> None:
        """Check the agent, tell it ``min_itr_learn``, build the replay from ``examples`` and the optimisers."""
        name = type(self).__name__
        # getattr with a default stays: duck-typed on purpose, so that rlpyt-style agents that are not
        # QpgAgentBase subclasses train too, and one lacking a method is refused here with its name.
        missing = [m for m in self.agent_methods if not callable(getattr(agent, m, None))]
        if missing:
            raise TypeError(
                f"{name} trains an agent with {list(self.agent_methods)}, but {type(agent).__name__} lacks "
                f"{missing}. Use {self.agent_example} (rlrun.agents.qpg) or a subclass of it."
            )
        if agent.recurrent:
            raise TypeError(f"{name} trains feedforward agents; {type(agent).__name__} is recurrent.")
        if examples is None:
            raise ValueError(f"{name}.initialize needs examples (from sampler.initialize) to build the replay buffer.")
        self.agent = agent
        self.n_itr = n_itr
        self.batch_spec = batch_spec
        self.mid_batch_reset = mid_batch_reset
        self.world_size = world_size
        self.sampler_bs = batch_spec.size
        self.updates_per_optimize = max(1, round(self.replay_ratio * self.sampler_bs / self.batch_size))
        _log.info(
            "%s: sampler batch %d, training batch %d, replay ratio %s -> %d updates per iteration.",
            name,
            self.sampler_bs,
            self.batch_size,
            self.replay_ratio,
            self.updates_per_optimize,
        )
        self.min_itr_learn = int(self.min_steps_learn // self.sampler_bs)
        agent.give_min_itr_learn(self.min_itr_learn)
        self.initialize_replay_buffer(examples, batch_spec)
        self.optim_initialize(rank)

    def initialize_replay_buffer(self, examples: dict[str, Any], batch_spec: BatchSpec, async_: bool = False) -> None:
        """A uniform replay of rows like :meth:`examples_to_buffer`'s, with ``timeout`` when bootstrapping
        through time limits, or ``ReplayBufferCls``. ``async_``: its asynchronous variant, in shared memory
        under a reader-writer lock."""
        example = self.examples_to_buffer(examples)
        if self.ReplayBufferCls is None:
            # The storage keeps timeout when the rows carry it (rlpyt's Tl replays).
            self.replay_buffer = make_replay_buffer(
                example,
                int(self.replay_size),
                batch_spec.B,
                discount=self.discount,
                n_step_return=self.n_step_return,
                mid_batch_reset=self.mid_batch_reset,
                async_=async_,
            )
            _log.info("%s replay: %r of %d steps.", type(self).__name__, self.replay_buffer, self.replay_buffer.size)
            return
        ReplayCls = self.ReplayBufferCls
        replay_kwargs: dict[str, Any] = dict(
            example=example,
            size=int(self.replay_size),
            B=batch_spec.B,
            discount=self.discount,
            n_step_return=self.n_step_return,
        )
        replay_kwargs.update(
            replay_class_kwargs(ReplayCls, type(self).__name__, async_=async_, mid_batch_reset=self.mid_batch_reset)
        )
        _log.info("%s replay: %s of %d steps.", type(self).__name__, ReplayCls.__name__, replay_kwargs["size"])
        self.replay_buffer = ReplayCls(**replay_kwargs)

    def examples_to_buffer(self, examples: dict[str, Any]) -> NamedArrayTuple:
        """One replay row from the sampler's examples; the replay is allocated from it."""
        return self.samples_to_buffer_from(
            examples["observation"], examples["action"], examples["reward"], examples["done"], examples["env_info"]
        )

    def samples_to_buffer(self, samples: SamplesBatch) -> NamedArrayTuple:
        """The fields of a sampled batch the replay stores."""
        return self.samples_to_buffer_from(
            samples.env.observation, samples.agent.action, samples.env.reward, samples.env.done, samples.env.env_info
        )

    def samples_to_buffer_from(
        self,
        observation: SpaceTensor | np.ndarray,
        action: SpaceTensor | np.ndarray,
        reward: Array,
        done: Array,
        env_info: NamedArrayTuple,
    ) -> NamedArrayTuple:
        """:data:`SamplesToBufferTl` when bootstrapping through time limits, else :data:`SamplesToBuffer`."""
        timeout = optional_field(env_info, "timeout")
        # The row classes are made at run time (namedarraytuple), so the checker needs their type named.
        row: NamedArrayTuple
        if not self.bootstrap_timelimit:
            row = SamplesToBuffer(observation, action, reward, done)
            return row
        if timeout is None:
            if not self._warned_no_timeout:
                self._warned_no_timeout = True
                _log.warning(
                    "%s: bootstrap_timelimit=True but env_info has no 'timeout' field, so every done is "
                    "terminal. Envs from rlrun.envs.gym.make report it.",
                    type(self).__name__,
                )
            row = SamplesToBuffer(observation, action, reward, done)
            return row
        row = SamplesToBufferTl(observation, action, reward, done, timeout)
        return row

    def optim_initialize(self, rank: int = 0) -> None:
        raise NotImplementedError

    def make_optimizer(self, parameters: Iterable[torch.Tensor], learning_rate: float) -> torch.optim.Optimizer:
        """``OptimCls(parameters, lr=learning_rate, **optim_kwargs)`` with torch's fastest implementation
        unless ``optim_kwargs`` chooses one (:func:`rlrun.algos.optim.make_optimizer`)."""
        return make_optimizer(self.OptimCls, parameters, learning_rate, self.optim_kwargs)

    # --- training --------------------------------------------------------------------------------

    def optimize_agent(
        self, itr: int, samples: SamplesBatch | None = None, sampler_itr: int | None = None
    ) -> OptInfoTuple:
        """Append ``samples`` to the replay, then take ``updates_per_optimize`` gradient steps (none
        before ``min_itr_learn``). ``sampler_itr`` (asynchronous runners) replaces ``itr``."""
        itr = itr if sampler_itr is None else sampler_itr
        if samples is not None:
            self.replay_buffer.append_samples(self.samples_to_buffer(samples))
        opt_info = self.empty_opt_info()
        if itr < self.min_itr_learn:
            return opt_info_to_host(opt_info)  # empty lists
        for _ in range(self.updates_per_optimize):
            samples_from_replay = self.sample_replay()
            self.update_counter += 1
            self.train_step(samples_from_replay, opt_info)
            if self.update_counter % self.target_update_interval == 0:
                self.agent.update_target(self.target_update_tau)
        return opt_info_to_host(opt_info)  # the steps' figures stayed on the device until now

    def sample_replay(self) -> NamedArrayTuple:
        """A training batch of ``batch_size`` transitions from the replay, on the agent's device (where the
        agent's Q-values and actions are, so losses and targets are computed there)."""
        batch: NamedArrayTuple = self.replay_buffer.sample_batch(self.batch_size)
        return batch_to_device(batch, self.agent.device)

    def empty_opt_info(self) -> OptInfoT:
        """The algorithm's ``OptInfo`` with an empty list per field."""
        raise NotImplementedError

    def train_step(self, samples: NamedArrayTuple, opt_info: OptInfoT) -> None:
        """One gradient step (of each optimiser due) on a replay batch; append to ``opt_info``'s lists
        (0-dim tensors, read back once per iteration, or floats). ``update_counter`` already counts this step."""
        raise NotImplementedError

    def target_discount(self, samples: NamedArrayTuple) -> torch.Tensor | float:
        """The bootstrap discount per sample: ``discount ** steps_n`` where the batch has ``steps_n``
        (windows shortened by a time limit), else ``discount ** n_step_return``."""
        if "steps_n" in fields_of(samples):
            steps_n: torch.Tensor = samples.steps_n
            return self.discount ** steps_n.to(torch.float32)
        return self.discount**self.n_step_return
