"""Deep Q-learning from a replay buffer (Mnih et al. 2015), with double DQN, n-step returns and
prioritized replay."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar

import numpy as np
import torch

from rlrun.agents.base import BaseAgent, SpaceTensor
from rlrun.agents.dqn.catdqn_agent import CatDqnAgent
from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.dqn.q_agent import EpsilonGreedyQAgent
from rlrun.algos.base import OptInfoTuple, RlAlgorithm
from rlrun.algos.device import batch_to_device
from rlrun.algos.opt_info import StepValue, opt_info_to_host
from rlrun.algos.optim import clip_grad_norm_tensor, make_optimizer, optimizer_parameters
from rlrun.replays.base import BaseReplayBuffer
from rlrun.replays.factory import Prioritized, make_replay_buffer
from rlrun.replays.user_class import replay_class_kwargs
from rlrun.utils.collections import NamedArrayTuple, namedarraytuple, optional_field
from rlrun.utils.data_model import Array, SamplesBatch
from rlrun.utils.tensor import select_at_indexes

if TYPE_CHECKING:  # samplers sit beside algos in the layers; only the type is needed
    from rlrun.samplers.collections import BatchSpec

__all__ = ["DQN", "QLearning", "OptInfo", "SamplesToBuffer", "SamplesToBufferTl"]

_log = logging.getLogger(__name__)


class OptInfo(NamedTuple):
    """DQN's diagnostics, a list per field with one value per gradient step."""

    loss: list[StepValue]
    gradNorm: list[StepValue]
    tdAbsErr: list[StepValue]


class DqnStepLog(Protocol):
    """The ``OptInfo`` fields :meth:`DQN.train_step` appends to (R2D1's OptInfo has one more)."""

    @property
    def loss(self) -> list[StepValue]: ...

    @property
    def gradNorm(self) -> list[StepValue]: ...

    @property
    def tdAbsErr(self) -> list[StepValue]: ...

    def __iter__(self) -> Iterator[list[StepValue]]: ...


StepLogT = TypeVar("StepLogT", bound=DqnStepLog)
QAgentT = TypeVar("QAgentT", bound=EpsilonGreedyQAgent)
# The agents whose __call__ and target return one tensor per step (Q-values, or CatDqnAgent's distributions).
FfQAgentT = TypeVar("FfQAgentT", bound=DqnAgent | CatDqnAgent)

SamplesToBuffer = namedarraytuple("SamplesToBuffer", ["observation", "action", "reward", "done"])
SamplesToBufferTl = namedarraytuple("SamplesToBufferTl", SamplesToBuffer._fields + ("timeout",))


class QLearning(RlAlgorithm[QAgentT], Generic[QAgentT, StepLogT]):
    """What the Q-learning algorithms share: the replay, the optimiser, the epsilon and beta schedules,
    the update loop and the target-network updates, for an epsilon-greedy Q agent of type ``QAgentT``.

    Each concrete algorithm says which agents it trains (:meth:`check_agent`) and defines the loss:
    :meth:`loss_and_priorities` returns ``(loss, |TD error|, new priorities)`` for :meth:`train_step`.
    :class:`DQN` learns from transitions and :class:`~rlrun.algos.dqn.r2d1.R2D1` from sequences; they
    are siblings because their ``loss`` methods return different things (two values and three). The
    keywords and their defaults are :class:`DQN`'s, documented there.
    """

    opt_info_fields: tuple[str, ...] = OptInfo._fields
    OptInfoCls: Any = OptInfo
    mid_batch_reset: bool = True  # set by initialize; until then the replay assumes envs reset mid-batch

    def __init__(
        self,
        discount: float = 0.99,
        batch_size: int = 32,
        min_steps_learn: int = int(5e4),
        delta_clip: float | None = 1.0,
        replay_size: int = int(1e6),
        replay_ratio: float = 8,
        target_update_tau: float = 1,
        target_update_interval: int = 312,
        n_step_return: int = 1,
        learning_rate: float = 2.5e-4,
        OptimCls: Callable[..., torch.optim.Optimizer] = torch.optim.Adam,
        optim_kwargs: dict[str, Any] | None = None,
        initial_optim_state_dict: dict[str, Any] | None = None,
        clip_grad_norm: float = 10.0,
        eps_steps: int = int(1e6),
        double_dqn: bool = False,
        prioritized_replay: bool = False,
        pri_alpha: float = 0.6,
        pri_beta_init: float = 0.4,
        pri_beta_final: float = 1.0,
        pri_beta_steps: int = int(50e6),
        default_priority: float | None = None,
        ReplayBufferCls: type | None = None,
        # Asynchronous runners only: gradient steps per optimize_agent call (changes nothing under MinibatchRl).
        updates_per_sync: int = 1,
    ) -> None:
        if not 0 <= discount <= 1:
            raise ValueError(f"discount must be in [0, 1], got {discount}.")
        if batch_size < 1 or n_step_return < 1 or target_update_interval < 1:
            raise ValueError(
                "batch_size, n_step_return and target_update_interval must be at least 1; got "
                f"{batch_size}, {n_step_return}, {target_update_interval}."
            )
        if not 0 < target_update_tau <= 1:
            raise ValueError(f"target_update_tau must be in (0, 1], got {target_update_tau}.")
        if delta_clip is not None and delta_clip <= 0:
            raise ValueError(f"delta_clip must be positive, or None for the squared loss; got {delta_clip}.")
        self.discount = discount
        self.batch_size: int = batch_size  # always set, unlike RlAlgorithm's
        self.min_steps_learn = min_steps_learn
        self.delta_clip = delta_clip
        self.replay_size = replay_size
        self.replay_ratio = replay_ratio
        self.target_update_tau = target_update_tau
        self.target_update_interval = target_update_interval
        self.n_step_return = n_step_return
        self.learning_rate = learning_rate
        self.OptimCls = OptimCls
        # rlpyt's default: Adam's eps scaled to the batch, as in Rainbow.
        self.optim_kwargs = dict(eps=0.01 / batch_size) if optim_kwargs is None else dict(optim_kwargs)
        self.initial_optim_state_dict = initial_optim_state_dict
        self.clip_grad_norm = clip_grad_norm
        self.eps_steps = eps_steps
        self.double_dqn = double_dqn
        self.prioritized_replay = prioritized_replay
        self.pri_alpha = pri_alpha
        self.pri_beta_init = pri_beta_init
        self.pri_beta_final = pri_beta_final
        self.pri_beta_steps = pri_beta_steps
        if default_priority is None:  # rlpyt's default: the largest clipped |TD error|
            default_priority = 1.0 if delta_clip is None else delta_clip
        self.default_priority = default_priority
        self.ReplayBufferCls = ReplayBufferCls
        self.updates_per_sync = updates_per_sync
        self.update_counter = 0

    def initialize(
        self,
        agent: QAgentT,
        n_itr: int,
        batch_spec: BatchSpec,
        mid_batch_reset: bool = False,
        examples: dict[str, Any] | None = None,
        world_size: int = 1,
        rank: int = 0,
    ) -> None:
        """Set the agent's epsilon schedule, build the replay from ``examples`` and the optimiser."""
        self._initialize(agent, n_itr, batch_spec, mid_batch_reset, examples, world_size, async_=False)
        self.optim_initialize(rank)

    def async_initialize(
        self,
        agent: QAgentT,
        sampler_n_itr: int,
        batch_spec: BatchSpec,
        mid_batch_reset: bool,
        examples: dict[str, Any],
        world_size: int = 1,
    ) -> BaseReplayBuffer:
        """For asynchronous runners, before any process starts: the epsilon schedule (the agent holds it in
        shared memory, so the sampler follows it) and the replay in shared memory, which is returned for
        the copier processes. The optimiser comes later, in :meth:`optim_initialize`.

        Each :meth:`optimize_agent` call then takes ``updates_per_sync`` gradient steps; the runner calls
        it as often as ``replay_ratio`` allows against the sampler's progress."""
        if world_size != 1:
            raise ValueError(f"{type(self).__name__}: asynchronous runs train in one optimiser process (world_size=1).")
        if int(self.updates_per_sync) < 1:
            raise ValueError(f"updates_per_sync must be at least 1, got {self.updates_per_sync}.")
        self._initialize(agent, sampler_n_itr, batch_spec, mid_batch_reset, examples, world_size, async_=True)
        replay: BaseReplayBuffer = self.replay_buffer
        return replay

    def _initialize(
        self,
        agent: QAgentT,
        n_itr: int,
        batch_spec: BatchSpec,
        mid_batch_reset: bool,
        examples: dict[str, Any] | None,
        world_size: int,
        async_: bool,
    ) -> None:
        """What :meth:`initialize` and :meth:`async_initialize` share: the agent checked and kept, the
        update count, the epsilon and beta schedules, and the replay (shared with ``async_``)."""
        self.check_agent(agent)
        if examples is None:
            raise ValueError(
                f"{type(self).__name__} needs examples (from sampler.initialize) to build the replay buffer."
            )
        self.agent = agent
        self.n_itr = n_itr
        self.batch_spec = batch_spec
        self.mid_batch_reset = mid_batch_reset
        self.world_size = world_size
        self.sampler_bs = batch_spec.size
        if async_:
            self.updates_per_optimize = int(self.updates_per_sync)
        else:
            self.updates_per_optimize = max(1, round(self.replay_ratio * self.sampler_bs / self.batch_size))
            _log.info(
                "DQN: sampler batch %d, training batch %d, replay ratio %s -> %d updates per iteration.",
                self.sampler_bs,
                self.batch_size,
                self.replay_ratio,
                self.updates_per_optimize,
            )
        self.min_itr_learn = int(self.min_steps_learn // self.sampler_bs)
        # Annealing starts at min_itr_learn, so an earlier end means a step down at min_itr_learn.
        eps_itr_max = max(1, self.min_itr_learn, int(self.eps_steps // self.sampler_bs))
        agent.set_epsilon_itr_min_max(self.min_itr_learn, eps_itr_max)
        self.pri_beta_itr = max(1, int(self.pri_beta_steps // self.sampler_bs))
        if async_:
            self.initialize_replay_buffer(examples, batch_spec, async_=True)
        else:  # rlpyt's call: subclasses may override it without async_
            self.initialize_replay_buffer(examples, batch_spec)

    def check_agent(self, agent: BaseAgent) -> None:
        """Refuse an agent this algorithm cannot train, before anything is built."""
        raise NotImplementedError(f"{type(self).__name__} must say which agents it trains (check_agent).")

    def optim_initialize(self, rank: int = 0) -> None:
        self.rank = rank
        self.optimizer = make_optimizer(self.OptimCls, self.agent.parameters(), self.learning_rate, self.optim_kwargs)
        if self.initial_optim_state_dict is not None:
            self.optimizer.load_state_dict(self.initial_optim_state_dict)

    def initialize_replay_buffer(self, examples: dict[str, Any], batch_spec: BatchSpec, async_: bool = False) -> None:
        """A replay whose rows look like :meth:`examples_to_buffer` of the sampler's examples: frame storage
        for stacked image frames, prioritized with ``prioritized_replay``, or ``ReplayBufferCls``.
        ``async_``: in shared memory under a reader-writer lock."""
        example = self.examples_to_buffer(examples)
        mid_batch_reset = self.mid_batch_reset
        prioritized = (
            Prioritized(alpha=self.pri_alpha, beta=self.pri_beta_init, default_priority=self.default_priority)
            if self.prioritized_replay
            else None
        )
        if self.ReplayBufferCls is None:
            self.replay_buffer = make_replay_buffer(
                example,
                int(self.replay_size),
                batch_spec.B,
                discount=self.discount,
                n_step_return=self.n_step_return,
                frames=is_frame_stack(optional_field(example, "observation")),
                prioritized=prioritized,
                mid_batch_reset=mid_batch_reset,
                async_=async_,
            )
            _log.info("DQN replay: %r of %d steps.", self.replay_buffer, self.replay_buffer.size)
            return
        # rlpyt's way: the class, built with keywords (rlpyt's prioritized buffers take example, size, B so).
        ReplayCls = self.ReplayBufferCls
        replay_kwargs: dict[str, Any] = dict(
            example=example,
            size=int(self.replay_size),
            B=batch_spec.B,
            discount=self.discount,
            n_step_return=self.n_step_return,
        )
        if prioritized is not None:
            replay_kwargs.update(
                alpha=prioritized.alpha, beta=prioritized.beta, default_priority=prioritized.default_priority
            )
        replay_kwargs.update(
            replay_class_kwargs(ReplayCls, type(self).__name__, async_=async_, mid_batch_reset=mid_batch_reset)
        )
        _log.info("DQN replay: %s of %d steps.", ReplayCls.__name__, replay_kwargs["size"])
        self.replay_buffer = ReplayCls(**replay_kwargs)

    def optimize_agent(
        self, itr: int, samples: SamplesBatch | None = None, sampler_itr: int | None = None
    ) -> OptInfoTuple:
        """Append ``samples`` to the replay, then take ``updates_per_optimize`` gradient steps (none
        before ``min_steps_learn``). ``sampler_itr`` (asynchronous runners) replaces ``itr``."""
        itr = itr if sampler_itr is None else sampler_itr
        if samples is not None:
            self.replay_buffer.append_samples(self.samples_to_buffer(samples))
        self.update_itr_hyperparams(itr)
        opt_info = self.empty_opt_info()
        if itr < self.min_itr_learn:
            return opt_info_to_host(opt_info)  # empty lists
        for _ in range(self.updates_per_optimize):
            self.train_step(opt_info)
        return opt_info_to_host(opt_info)  # the steps' figures stayed on the device until now

    def empty_opt_info(self) -> StepLogT:
        """An ``OptInfoCls`` with an empty list per field."""
        opt_info: StepLogT = self.OptInfoCls(*([] for _ in self.OptInfoCls._fields))
        return opt_info

    def train_step(self, opt_info: StepLogT) -> torch.Tensor:
        """One gradient step on a replay batch: the loss, the step, the new priorities, the target copy
        when due, and the step's figures appended to ``opt_info``. Returns the new priorities: on the host
        with ``prioritized_replay`` (the replay took them there), else on the agent's device."""
        samples_from_replay = self.sample_replay()  # on the agent's device
        loss, td_abs_errors, priorities = self.loss_and_priorities(samples_from_replay)
        self.optimizer.zero_grad()
        torch.autograd.backward(loss)
        grad_norm = clip_grad_norm_tensor(optimizer_parameters(self.optimizer), self.clip_grad_norm)
        self.optimizer.step()
        step_figures = (loss.detach(), grad_norm, td_abs_errors.mean())
        figures: list[StepValue] = list(step_figures)
        if self.prioritized_replay:
            # The replay needs the priorities on the host now: this step's figures come back in the same copy.
            on_device = [x.reshape(-1).to(grad_norm) for x in (priorities.detach(), *step_figures)]
            host = torch.cat(on_device).cpu().numpy()
            self.replay_buffer.update_batch_priorities(host[: -len(figures)])
            figures = host[-len(figures) :].tolist()
            priorities = torch.from_numpy(host[: -len(figures)])
        self.update_counter += 1
        if self.update_counter % self.target_update_interval == 0:
            self.agent.update_target(self.target_update_tau)
        # 0-dim tensors, left on the device, are read back once per iteration by optimize_agent.
        opt_info.loss.append(figures[0])
        opt_info.gradNorm.append(figures[1])
        opt_info.tdAbsErr.append(figures[2])
        return priorities

    def sample_replay(self) -> NamedArrayTuple:
        """A training batch from the replay: ``batch_size`` transitions, on the agent's device (where the
        agent's Q-values are, so the loss, its targets and importance weights are computed there)."""
        batch: NamedArrayTuple = self.replay_buffer.sample_batch(self.batch_size)
        return batch_to_device(batch, self.agent.device)

    def loss_and_priorities(self, samples: NamedArrayTuple) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(loss, |TD error| per sample, new priorities)`` for a replay batch on the agent's device."""
        raise NotImplementedError(f"{type(self).__name__} must define its loss (loss_and_priorities).")

    def update_itr_hyperparams(self, itr: int) -> None:
        """Called once per iteration before the updates, for settings that follow the iteration: with
        prioritized replay, beta moves linearly from ``pri_beta_init`` at ``min_itr_learn`` to
        ``pri_beta_final`` at the itr of ``pri_beta_steps`` sampled steps, and stays there."""
        if not self.prioritized_replay:
            return
        span = self.pri_beta_itr - self.min_itr_learn
        progress = 1.0 if span <= 0 else min(1.0, max(0.0, (itr - self.min_itr_learn) / span))
        beta = self.pri_beta_init + progress * (self.pri_beta_final - self.pri_beta_init)
        self.replay_buffer.set_beta(beta)

    def examples_to_buffer(self, examples: dict[str, Any]) -> NamedArrayTuple:
        """One replay row built from the sampler's examples; the replay is allocated from it. Override it
        together with :meth:`samples_to_buffer` to store an extra field (as in rlpyt)."""
        return self.samples_to_buffer_from(
            observation=examples["observation"],
            action=examples["action"],
            reward=examples["reward"],
            done=examples["done"],
            env_info=examples["env_info"],
        )

    def samples_to_buffer(self, samples: SamplesBatch) -> NamedArrayTuple:
        """The fields of a sampled batch the replay stores (rows shaped like :meth:`examples_to_buffer`'s)."""
        return self.samples_to_buffer_from(
            observation=samples.env.observation,
            action=samples.agent.action,
            reward=samples.env.reward,
            done=samples.env.done,
            env_info=samples.env.env_info,
        )

    @staticmethod
    def samples_to_buffer_from(
        observation: SpaceTensor | np.ndarray,
        action: SpaceTensor | np.ndarray,
        reward: Array,
        done: Array,
        env_info: NamedArrayTuple,
    ) -> NamedArrayTuple:
        """:data:`SamplesToBufferTl` when ``env_info`` has ``timeout``, else :data:`SamplesToBuffer`."""
        timeout = optional_field(env_info, "timeout")
        # The row classes are made at run time (namedarraytuple), so the checker needs their type named.
        row: NamedArrayTuple = (
            SamplesToBuffer(observation, action, reward, done)
            if timeout is None
            else SamplesToBufferTl(observation, action, reward, done, timeout)
        )
        return row


class DQN(QLearning[FfQAgentT, StepLogT]):
    """Q-learning on transitions drawn from a replay of the last ``replay_size`` steps.

    Per sampler iteration, :meth:`optimize_agent` appends the batch to the replay, then (from
    ``min_steps_learn`` sampled steps on) takes ``updates_per_optimize = max(1, round(replay_ratio
    * sampler_batch_size / batch_size))`` gradient steps: ``replay_ratio`` is how many times each
    sampled step is trained on, on average. The target is ``y = R^(n) + (1 - done_n) * discount^n *
    Q_target(s_{t+n}, a*)`` with ``a*`` the target network's argmax (or the online network's with
    ``double_dqn``); the loss is Huber with threshold ``delta_clip`` (squared error if None). The
    target network follows the online one every ``target_update_interval`` gradient steps, fully
    (``target_update_tau=1``) or softly. Exploration: epsilon anneals over sampler iterations from
    ``min_steps_learn`` to ``eps_steps`` sampled steps (the agent holds the epsilon values).

    Time limits: when the env reports ``env_info.timeout``, the replay stores it and a time-limit cut
    is not terminal: a window reaching it stops before it and bootstraps from the last observation it
    holds (see :class:`rlrun.replays.transitions.TransitionReplay`).

    Replay (:func:`rlrun.replays.factory.make_replay_buffer`): observations that stack image frames
    (uint8 ``[k, H, W]``, e.g. Atari) go to a frame storage that keeps each frame once, others to one
    that stores whole observations. ``prioritized_replay=True`` draws transitions in proportion to ``priority **
    pri_alpha``, priorities being ``|TD error|`` after each update (new steps get the largest so far,
    ``default_priority`` at first, which defaults to ``delta_clip``, or 1 without it); each sample's
    loss is then weighted by its importance-sampling weight, whose exponent beta anneals linearly from
    ``pri_beta_init`` at ``min_steps_learn`` to ``pri_beta_final`` at ``pri_beta_steps`` sampled steps.
    ``ReplayBufferCls`` replaces the choice (built with the same keywords, plus ``alpha``, ``beta``,
    ``default_priority`` when prioritized, and ``mid_batch_reset=False`` under wait-reset samplers).

    Samplers that reset envs only between batches (wait-reset collectors) work too: the replay marks
    the filler steps after an env's done and never draws them.

    Asynchronous runners (:class:`~rlrun.runners.async_rl.AsyncRl`) call :meth:`async_initialize` instead of
    :meth:`initialize`; each :meth:`optimize_agent` call then takes ``updates_per_sync`` gradient steps.

    All but the loss and the agents it accepts is :class:`QLearning`'s, which R2D1 shares.
    """

    def check_agent(self, agent: BaseAgent) -> None:
        """Refuse an agent this algorithm cannot train, before anything is built."""
        if agent.recurrent:
            raise TypeError(
                f"{type(self).__name__} trains feedforward agents; recurrent agents ({type(agent).__name__}) need "
                "R2D1 (rlrun.algos.dqn.r2d1) with an R2d1Agent."
            )

    def loss_and_priorities(self, samples: NamedArrayTuple) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(loss, |TD error| per sample, new priorities)``: DQN's priorities are the ``|TD error|``
        :meth:`loss` returns (so a subclass overriding ``loss`` keeps prioritized replay working)."""
        loss, td_abs_errors = self.loss(samples)
        return loss, td_abs_errors, td_abs_errors

    def loss(self, samples: NamedArrayTuple) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean Huber (or squared) TD error over a replay batch ``[batch_B]``, each sample's term weighted
        by ``samples.is_weights`` when the batch has them (prioritized replay), and ``|TD error|`` per
        sample (clipped at ``delta_clip``) for logging and priorities."""
        qs = self.agent(*samples.agent_inputs)
        q = select_at_indexes(samples.action, qs)
        with torch.no_grad():
            target_qs = self.agent.target(*samples.target_inputs)
            if self.double_dqn:
                next_a = torch.argmax(self.agent(*samples.target_inputs), dim=-1)
                target_q = select_at_indexes(next_a, target_qs)
            else:
                target_q = target_qs.max(dim=-1).values
            # Windows cut short by a time limit bootstrap after fewer steps (replays with timeout).
            n = samples.steps_n if "steps_n" in samples else self.n_step_return
            y = samples.return_ + (1 - samples.done_n.float()) * self.discount**n * target_q
        losses, td_abs_errors = td_losses(y - q, self.delta_clip)
        if "is_weights" in samples._fields:
            losses = losses * samples.is_weights
        return losses.mean(), td_abs_errors


def td_losses(delta: torch.Tensor, delta_clip: float | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-element losses of TD errors ``delta``: ``delta**2 / 2``, linear beyond ``delta_clip`` (Huber) when
    given; and ``|delta|`` without grad, clipped at ``delta_clip``, for logging and priorities."""
    abs_delta = delta.abs()
    losses = 0.5 * delta**2
    td_abs_errors = abs_delta.detach()
    if delta_clip is not None:
        losses = torch.where(abs_delta <= delta_clip, losses, delta_clip * (abs_delta - delta_clip / 2))
        td_abs_errors = td_abs_errors.clamp(max=delta_clip)
    return losses, td_abs_errors


def is_frame_stack(observation: object) -> bool:
    """True for an observation example that stacks image frames: uint8 ``[k, H, W]`` (Atari's)."""
    return (
        isinstance(observation, np.ndarray | torch.Tensor)
        and observation.dtype in (np.uint8, torch.uint8)
        and observation.ndim == 3
    )
