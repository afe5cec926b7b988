"""Recurrent replay distributed DQN (R2D2, Kapturowski et al. 2019) on one learner: R2D1.

Sequences of ``warmup_T + batch_T`` steps are drawn from a sequence replay, starting from the recurrent
state the agent had when it sampled them (stored every ``store_rnn_state_interval`` steps). The first
``warmup_T`` steps only warm up the state ("burn-in"); the loss is on the next ``batch_T`` steps, with
n-step double-DQN targets through the value rescaling ``h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x``
(Pohlen et al. 2018). Sequences are prioritized by ``eta * max |delta| + (1 - eta) * mean |delta|``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from rlrun.agents.base import BaseAgent
from rlrun.agents.dqn.r2d1_agent import R2d1AgentBase
from rlrun.algos.device import batch_to_device
from rlrun.algos.dqn.dqn import QLearning, SamplesToBuffer, SamplesToBufferTl, is_frame_stack, td_losses
from rlrun.algos.opt_info import StepValue
from rlrun.algos.recurrent import run_with_resets
from rlrun.models.lstm import RecurrentState
from rlrun.replays.factory import Prioritized, Sequences, make_replay_buffer
from rlrun.utils.buffer import buffer_method, buffer_to
from rlrun.utils.collections import NamedArrayTuple, fields_of, namedarraytuple
from rlrun.utils.data_model import SamplesBatch
from rlrun.utils.returns import discount_return_n_step, valid_from_done
from rlrun.utils.tensor import select_at_indexes, valid_mean

if TYPE_CHECKING:  # samplers sit beside algos in the layers; only the type is needed
    from rlrun.samplers.collections import BatchSpec

__all__ = [
    "R2D1",
    "OptInfo",
    "SamplesToBufferRnn",
    "SamplesToBufferTlRnn",
    "PrioritiesSamplesToBuffer",
    "value_rescale",
    "inv_value_rescale",
    "run_with_resets",
]

_log = logging.getLogger(__name__)


class OptInfo(NamedTuple):
    """R2D1's diagnostics: a value per gradient step in each list, and each step's new sequence priorities."""

    loss: list[StepValue]
    gradNorm: list[StepValue]
    tdAbsErr: list[StepValue]
    priority: list[StepValue]


SamplesToBufferRnn = namedarraytuple("SamplesToBufferRnn", SamplesToBuffer._fields + ("prev_rnn_state",))
SamplesToBufferTlRnn = namedarraytuple("SamplesToBufferTlRnn", SamplesToBufferTl._fields + ("prev_rnn_state",))
PrioritiesSamplesToBuffer = namedarraytuple("PrioritiesSamplesToBuffer", ["priorities", "samples"])


def value_rescale(x: torch.Tensor, eps: float) -> torch.Tensor:
    """``h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x``: squashes returns of any scale (no reward clipping)."""
    return torch.sign(x) * (torch.sqrt(x.abs() + 1) - 1) + eps * x


def inv_value_rescale(z: torch.Tensor, eps: float) -> torch.Tensor:
    """The inverse of :func:`value_rescale` (a quadratic in ``sqrt(|x| + 1)``, solved in closed form)."""
    root = (torch.sqrt(1 + 4 * eps * (z.abs() + 1 + eps)) - 1) / (2 * eps)
    return torch.sign(z) * (root**2 - 1)


class R2D1(QLearning[R2d1AgentBase, OptInfo]):
    """Q-learning of a recurrent agent on sequences drawn from a sequence replay.

    Per sampler iteration the batch goes into the replay (with the recurrent states of its steps, and,
    with ``input_priorities``, a priority per env computed from the Q-values recorded while sampling),
    then ``updates_per_optimize`` gradient steps follow, each on ``batch_B`` sequences of ``warmup_T +
    batch_T`` steps (``replay_ratio`` counts all of these steps, as in rlpyt). The state of each
    sequence starts from the stored one, is warmed up without gradient on ``warmup_T`` steps (for the
    online and the target network), and the loss is on the next ``batch_T`` steps:

    ``y_t = h(R_t^(n) + (1 - done_n) discount^n h^-1(Q_target(s_{t+n}, argmax_a Q(s_{t+n}, a))))``

    (``double_dqn``; else the target's max), squared error (Huber with ``delta_clip``), weighted by the
    importance-sampling weights with ``prioritized_replay``. Where an episode ends inside a sequence,
    the next one's state starts from zeros, as when sampling (:func:`run_with_resets`); rlpyt instead masked every step after the first ``done`` and
    zeroed the state after a warm-up with a ``done``. Wait-reset filler steps are never trained on.
    New sequence priorities: ``pri_eta * max |delta| + (1 - pri_eta) * mean |delta|`` over its steps.

    Defaults are rlpyt's (R2D2's Atari settings scaled to one learner); ``store_rnn_state_interval``
    equal to the sampler's ``batch_T`` (40) and a wait-reset sampler are the intended setting. The
    replay is a frame replay for stacked image frames; ``ReplayBufferCls`` replaces the choice.

    A sibling of :class:`~rlrun.algos.dqn.dqn.DQN` (both are :class:`~rlrun.algos.dqn.dqn.QLearning`), not
    its subclass as in rlpyt: its :meth:`loss` also returns the new sequence priorities.
    """

    opt_info_fields: tuple[str, ...] = OptInfo._fields
    OptInfoCls: Any = OptInfo

    def __init__(
        self,
        discount: float = 0.997,
        batch_T: int = 80,
        batch_B: int = 64,
        warmup_T: int = 40,
        store_rnn_state_interval: int = 40,
        min_steps_learn: int = int(1e5),
        delta_clip: float | None = None,
        replay_size: int = int(1e6),
        replay_ratio: float = 1,
        target_update_interval: int = 2500,
        n_step_return: int = 5,
        learning_rate: float = 1e-4,
        OptimCls: Callable[..., torch.optim.Optimizer] = torch.optim.Adam,
        optim_kwargs: dict[str, Any] | None = None,
        initial_optim_state_dict: dict[str, Any] | None = None,
        clip_grad_norm: float = 80.0,
        eps_steps: int = int(1e6),
        double_dqn: bool = True,
        prioritized_replay: bool = True,
        pri_alpha: float = 0.6,
        pri_beta_init: float = 0.9,
        pri_beta_final: float = 0.9,
        pri_beta_steps: int = int(50e6),
        pri_eta: float = 0.9,
        default_priority: float | None = None,
        input_priorities: bool = True,
        input_priority_shift: int | None = None,
        value_scale_eps: float = 1e-3,
        ReplayBufferCls: type | None = None,
        # rlpyt compatibility: read by asynchronous runners only; changes nothing under MinibatchRl.
        updates_per_sync: int = 1,
    ) -> None:
        if batch_T < 1 or batch_B < 1 or warmup_T < 0 or store_rnn_state_interval < 0:
            raise ValueError(
                "R2D1 needs batch_T >= 1, batch_B >= 1, warmup_T >= 0 and store_rnn_state_interval >= 0; got "
                f"{batch_T}, {batch_B}, {warmup_T}, {store_rnn_state_interval}."
            )
        if not 0 <= pri_eta <= 1 or not value_scale_eps > 0:
            raise ValueError(f"pri_eta must be in [0, 1] and value_scale_eps > 0; got {pri_eta}, {value_scale_eps}.")
        super().__init__(
            discount=discount,
            batch_size=(batch_T + warmup_T) * batch_B,
            min_steps_learn=min_steps_learn,
            delta_clip=delta_clip,
            replay_size=replay_size,
            replay_ratio=replay_ratio,
            target_update_interval=target_update_interval,
            n_step_return=n_step_return,
            learning_rate=learning_rate,
            OptimCls=OptimCls,
            optim_kwargs=dict(eps=1e-3) if optim_kwargs is None else optim_kwargs,  # rlpyt's (for Adam)
            initial_optim_state_dict=initial_optim_state_dict,
            clip_grad_norm=clip_grad_norm,
            eps_steps=eps_steps,
            double_dqn=double_dqn,
            ReplayBufferCls=ReplayBufferCls,
            prioritized_replay=prioritized_replay,
            pri_alpha=pri_alpha,
            pri_beta_init=pri_beta_init,
            pri_beta_final=pri_beta_final,
            pri_beta_steps=pri_beta_steps,
            default_priority=default_priority,
            updates_per_sync=updates_per_sync,
        )
        self.batch_T = batch_T
        self.batch_B = batch_B
        self.warmup_T = warmup_T
        self.store_rnn_state_interval = store_rnn_state_interval
        self.pri_eta = pri_eta
        self.input_priorities = input_priorities
        if input_priority_shift is None:  # the start whose warm-up precedes the new samples
            input_priority_shift = warmup_T // max(1, store_rnn_state_interval)
        self.input_priority_shift = input_priority_shift
        self.value_scale_eps = value_scale_eps

    def check_agent(self, agent: BaseAgent) -> None:
        if not agent.recurrent:
            raise TypeError(
                f"R2D1 trains recurrent agents (R2d1Agent, AtariR2d1Agent); got {type(agent).__name__}. Use DQN for "
                "feedforward agents."
            )

    # --- replay -----------------------------------------------------------------------------------

    def initialize_replay_buffer(self, examples: dict[str, Any], batch_spec: BatchSpec, async_: bool = False) -> None:
        """A sequence replay of ``warmup_T + batch_T``-step sequences, storing the agent's state every
        ``store_rnn_state_interval`` steps; frame-based for stacked image frames, prioritized with
        ``prioritized_replay``, or ``ReplayBufferCls``."""
        if async_:
            raise NotImplementedError(
                "R2D1 is not offered under AsyncRl yet (its asynchronous run is untested; the shared sequence "
                "replays exist: make_replay_buffer(..., sequence=..., async_=True)); use MinibatchRl."
            )
        example = self.examples_to_buffer(examples)
        if self.store_rnn_state_interval > 0:
            agent_info = examples["agent_info"]
            if "prev_rnn_state" not in fields_of(agent_info):
                raise ValueError(
                    f"R2D1 stores the agent's recurrent state every {self.store_rnn_state_interval} steps, but the "
                    f"agent's step records no agent_info.prev_rnn_state (fields: {fields_of(agent_info)}). "
                    "Record the state each step started from, batch-first, as R2d1Agent does, or set "
                    "store_rnn_state_interval=0 to start every replayed sequence from zeros."
                )
            example = self._with_rnn_state(example, agent_info.prev_rnn_state)
        prioritized = None
        if self.prioritized_replay:
            prioritized = Prioritized(
                alpha=self.pri_alpha,
                beta=self.pri_beta_init,
                default_priority=self.default_priority,
                input_priorities=self.input_priorities,
                input_priority_shift=self.input_priority_shift,
            )
        sequence = Sequences(rnn_state_interval=self.store_rnn_state_interval, batch_T=self.batch_T + self.warmup_T)
        if self.ReplayBufferCls is None:
            self.replay_buffer = make_replay_buffer(
                example,
                int(self.replay_size),
                batch_spec.B,
                discount=self.discount,
                n_step_return=self.n_step_return,
                frames=is_frame_stack(example.observation),
                prioritized=prioritized,
                sequence=sequence,
                mid_batch_reset=self.mid_batch_reset,
            )
            _log.info("R2D1 replay: %r of %d steps.", self.replay_buffer, self.replay_buffer.size)
            return
        # rlpyt's way: the class, built with keywords (rlpyt's prioritized buffers take example, size, B so).
        replay_kwargs: dict[str, Any] = dict(
            example=example,
            size=int(self.replay_size),
            B=batch_spec.B,
            rnn_state_interval=sequence.rnn_state_interval,
            batch_T=sequence.batch_T,
            discount=self.discount,
            n_step_return=self.n_step_return,
            mid_batch_reset=self.mid_batch_reset,
        )
        if prioritized is not None:
            replay_kwargs.update(
                alpha=prioritized.alpha,
                beta=prioritized.beta,
                default_priority=prioritized.default_priority,
                input_priorities=prioritized.input_priorities,
                input_priority_shift=prioritized.input_priority_shift,
            )
        _log.info("R2D1 replay: %s of %d steps.", self.ReplayBufferCls.__name__, replay_kwargs["size"])
        self.replay_buffer = self.ReplayBufferCls(**replay_kwargs)

    @staticmethod
    def _with_rnn_state(rows: Any, prev_rnn_state: Any) -> Any:
        Cls = SamplesToBufferTlRnn if "timeout" in rows._fields else SamplesToBufferRnn
        return Cls(*rows, prev_rnn_state=prev_rnn_state)

    def samples_to_buffer(self, samples: SamplesBatch) -> NamedArrayTuple:
        """The replay's rows, with the agent's recorded states, and the input priorities if used."""
        rows = super().samples_to_buffer(samples)
        if self.store_rnn_state_interval > 0:
            rows = self._with_rnn_state(rows, samples.agent.agent_info.prev_rnn_state)
        if self.prioritized_replay and self.input_priorities:
            rows = PrioritiesSamplesToBuffer(priorities=self.compute_input_priorities(samples), samples=rows)
        return rows

    def compute_input_priorities(self, samples: SamplesBatch) -> torch.Tensor:
        """A priority per env for the sequence these samples end, from the Q-values the online network
        gave while sampling: n-step TD errors of the steps whose window and bootstrap state lie in the
        batch (through the value rescaling), combined as ``pri_eta * max + (1 - pri_eta) * mean``.
        Batches shorter than ``n_step_return + 1`` steps get the running default."""
        q = torch.as_tensor(samples.agent.agent_info.q)
        action = torch.as_tensor(samples.agent.action)
        reward = torch.as_tensor(samples.env.reward, dtype=torch.float32)
        done = torch.as_tensor(samples.env.done)
        n, T = self.n_step_return, q.shape[0]
        if T <= n:
            return torch.full((q.shape[1],), self.replay_buffer.sampling.max_priority)
        return_n, done_n = discount_return_n_step(reward, done, n, self.discount)
        return_n, done_n = return_n[: T - n], done_n[: T - n]
        bootstrap = inv_value_rescale(q[n:].max(dim=-1).values, self.value_scale_eps)
        y = value_rescale(return_n + (1 - done_n.float()) * self.discount**n * bootstrap, self.value_scale_eps)
        delta = (select_at_indexes(action[: T - n], q[: T - n]) - y).abs()
        if self.delta_clip is not None:
            delta = delta.clamp(max=self.delta_clip)
        valid = torch.ones_like(delta) if self.mid_batch_reset else valid_from_done(done[: T - n])
        return self._sequence_priorities(delta, valid)

    def _sequence_priorities(self, abs_delta: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        max_d = (abs_delta * valid).max(dim=0).values
        mean_d = valid_mean(abs_delta, valid, dim=0)
        return self.pri_eta * max_d + (1 - self.pri_eta) * mean_d

    # --- optimisation -----------------------------------------------------------------------------

    def sample_replay(self) -> NamedArrayTuple:
        """A training batch from the replay: ``batch_B`` sequences, on the agent's device but for
        ``all_reset``, which stays on the host, where :func:`run_with_resets` reads where to cut them."""
        batch: NamedArrayTuple = self.replay_buffer.sample_batch(self.batch_B)
        on_device = batch_to_device(batch._replace(all_reset=None), self.agent.device)
        result: NamedArrayTuple = on_device._replace(all_reset=batch.all_reset)
        return result

    def loss_and_priorities(self, samples: NamedArrayTuple) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.loss(samples)

    def train_step(self, opt_info: OptInfo) -> torch.Tensor:
        """DQN's gradient step; ``opt_info.priority`` also gets the new sequence priorities."""
        priorities = super().train_step(opt_info)
        if self.prioritized_replay:  # the replay took them: already on the host, read with the step's figures
            opt_info.priority.extend(priorities.numpy().tolist())
        else:
            opt_info.priority.append(priorities.detach())  # its values, once per iteration
        return priorities

    def loss(self, samples: NamedArrayTuple) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Loss over a batch of sequences ``[warmup_T + batch_T (+ n), batch_B]``; returns ``(loss, |TD
        error| [batch_T, batch_B] (0 where not trained), new priorities [batch_B])``."""
        wT, bT, n = self.warmup_T, self.batch_T, self.n_step_return
        # Previous actions and rewards as the replay stored them (at an episode's first step the previous
        # episode's last ones, which R2d1Agent zeroes as it did when sampling); the state restarts at resets.
        reset = samples.all_reset.bool()  # on the host (sample_replay): where the sequences are cut
        prev_action, prev_reward = samples.all_action, samples.all_reward
        observation = samples.all_observation
        init_rnn_state = samples.init_rnn_state
        if init_rnn_state is not None:  # stored batch-first [B, N, H]; models take [N, B, H]
            init_rnn_state = buffer_to(
                buffer_method(buffer_method(init_rnn_state, "transpose", 0, 1), "contiguous"),
                device=self.agent.device,
                non_blocking=True,  # there already from sample_replay, unless a subclass draws otherwise
            )

        pass_reset = isinstance(self.agent, R2d1AgentBase)  # other agents take rlpyt's four inputs

        def over(
            model: Callable[..., tuple[torch.Tensor, RecurrentState]],
            start: int,
            stop: int | None,
            state: RecurrentState | None,
        ) -> tuple[torch.Tensor, RecurrentState | None]:
            s = slice(start, stop)
            return run_with_resets(
                model, observation[s], prev_action[s], prev_reward[s], state, reset[s], pass_reset=pass_reset
            )

        agent_state = target_state = init_rnn_state
        if wT > 0:
            with torch.no_grad():
                _, agent_state = over(self.agent, 0, wT, init_rnn_state)
                _, target_state = over(self.agent.target, 0, wT, init_rnn_state)
        qs, _ = over(self.agent, wT, None, agent_state)  # [bT + n, B, A]; the loss uses the first bT
        q = select_at_indexes(samples.all_action[wT + 1 : wT + 1 + bT], qs[:bT])
        with torch.no_grad():
            target_qs, _ = over(self.agent.target, wT, None, target_state)
            if self.double_dqn:
                target_q_all = select_at_indexes(torch.argmax(qs.detach(), dim=-1), target_qs)
            else:
                target_q_all = target_qs.max(dim=-1).values
            return_ = samples.return_[wT:]
            done_n = samples.done_n[wT:].float()
            if "steps_n" in samples._fields:  # a window cut by a time limit bootstraps from its last seen step
                steps = samples.steps_n[wT:]
                cut_here = samples.timeout[wT:].long()  # cut at the step itself: its own observation
                offset = torch.where(samples.timeout_n[wT:], steps - cut_here, torch.full_like(steps, n))
            else:
                steps = offset = torch.full(return_.shape, n, dtype=torch.long, device=return_.device)
            # [bT, B], index into the bT + n target steps
            rows = torch.arange(bT, device=return_.device).unsqueeze(1) + offset
            target_q = target_q_all.gather(0, rows)
            y = value_rescale(
                return_ + (1 - done_n) * self.discount**steps * inv_value_rescale(target_q, self.value_scale_eps),
                self.value_scale_eps,
            )
        losses, td_abs_errors = td_losses(y - q, self.delta_clip)
        if "is_weights" in samples._fields:
            losses = losses * samples.is_weights.unsqueeze(0)
        valid = samples.valid[wT:].float()
        loss = valid_mean(losses, valid)
        priorities = self._sequence_priorities(td_abs_errors, valid)
        return loss, td_abs_errors * valid, priorities

    def value_scale(self, x: torch.Tensor) -> torch.Tensor:
        """rlpyt's name for :func:`value_rescale` with this algorithm's ``value_scale_eps``."""
        return value_rescale(x, self.value_scale_eps)

    def inv_value_scale(self, z: torch.Tensor) -> torch.Tensor:
        """rlpyt's name for :func:`inv_value_rescale` with this algorithm's ``value_scale_eps``."""
        return inv_value_rescale(z, self.value_scale_eps)
