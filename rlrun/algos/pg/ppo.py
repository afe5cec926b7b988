"""Proximal policy optimisation with the clipped surrogate objective (Schulman et al. 2017)."""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import torch

from rlrun.agents.base import AgentInputs, BaseAgent
from rlrun.algos.base import OptInfoTuple
from rlrun.algos.opt_info import opt_info_to_host
from rlrun.algos.optim import clip_grad_norm_tensor, optimizer_parameters
from rlrun.algos.pg.base import (
    LossTerms,
    OptInfo,
    PolicyGradientAlgo,
    entropy_and_perplexity,
    normalized,
    require_samples,
    scalar,
)
from rlrun.models.lstm import RecurrentState
from rlrun.utils.buffer import buffer_func
from rlrun.utils.collections import NamedArrayTuple, namedarraytuple, namedtuple
from rlrun.utils.data_model import SamplesBatch
from rlrun.utils.tensor import valid_mean

if TYPE_CHECKING:  # samplers sit beside algos in the layers; only the type is needed
    from rlrun.samplers.collections import BatchSpec

__all__ = ["PPO", "OptInfoPpo", "LossInputs", "LossTerms"]

OptInfoPpo = namedtuple("OptInfoPpo", OptInfo._fields + ("approxKl", "clipFraction"))
LossInputs = namedarraytuple("LossInputs", ["agent_inputs", "action", "return_", "advantage", "valid", "old_dist_info"])


class PPO(PolicyGradientAlgo):
    """``epochs`` passes over each batch in ``minibatches`` shuffled minibatches.

    Policy loss ``-mean(min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A))`` with ``ratio =
    pi(a|s) / pi_old(a|s)`` and ``eps = ratio_clip``; value loss ``value_loss_coeff * mean(0.5 *
    (V(s) - R)^2)``; minus ``entropy_loss_coeff`` times the entropy. With ``linear_lr_schedule`` the
    learning rate scales by ``(n_itr - itr) / n_itr`` at iteration ``itr``, and so does ``ratio_clip``
    unless ``anneal_ratio_clip=False`` (rlpyt anneals both; CleanRL and Baselines' PPO2 keep the clip fixed).
    ``lr_schedule_steps`` (env steps) puts the schedule's zero there instead of at the run's end.
    Two options that rlpyt lacks, as CleanRL's and Baselines' PPO2 Atari settings use them:
    ``minibatch_advantage_norm`` normalises the advantages within each minibatch (zero mean, unit std)
    instead of over the batch (``normalize_advantage``); ``value_clip`` takes the larger of the value
    error and that of the sampled value moved by at most ``value_clip`` towards the new one.
    Minibatches hold ``T * B // minibatches`` steps; the remainder of a shuffle is left out. For a
    recurrent agent the envs are shuffled instead of the steps: a minibatch holds the whole ``T``-step
    sequences of ``B // minibatches`` envs, each run from its state stored at ``t=0``, and steps after
    an env's done are masked out (such agents need a wait-reset collector).
    """

    opt_info_fields = OptInfoPpo._fields

    def __init__(
        self,
        discount: float = 0.99,
        learning_rate: float = 0.001,
        value_loss_coeff: float = 1.0,
        entropy_loss_coeff: float = 0.01,
        OptimCls: type[torch.optim.Optimizer] = torch.optim.Adam,
        optim_kwargs: dict[str, Any] | None = None,
        clip_grad_norm: float = 1.0,
        initial_optim_state_dict: dict[str, Any] | None = None,
        gae_lambda: float = 1,
        minibatches: int = 4,
        epochs: int = 4,
        ratio_clip: float = 0.1,
        linear_lr_schedule: bool = True,
        normalize_advantage: bool = False,
        anneal_ratio_clip: bool = True,
        minibatch_advantage_norm: bool = False,
        value_clip: float | None = None,
        lr_schedule_steps: int | None = None,
    ) -> None:
        super().__init__(
            discount=discount,
            learning_rate=learning_rate,
            value_loss_coeff=value_loss_coeff,
            entropy_loss_coeff=entropy_loss_coeff,
            OptimCls=OptimCls,
            optim_kwargs=optim_kwargs,
            clip_grad_norm=clip_grad_norm,
            initial_optim_state_dict=initial_optim_state_dict,
            gae_lambda=gae_lambda,
            normalize_advantage=normalize_advantage,
            linear_lr_schedule=linear_lr_schedule,
            lr_schedule_steps=lr_schedule_steps,
        )
        if minibatches < 1 or epochs < 1:
            raise ValueError(f"minibatches and epochs must be at least 1, got {minibatches} and {epochs}.")
        if ratio_clip <= 0:
            raise ValueError(f"ratio_clip must be positive, got {ratio_clip}.")
        if value_clip is not None and value_clip <= 0:
            raise ValueError(f"value_clip must be positive or None (no clipping), got {value_clip}.")
        self.minibatches = minibatches
        self.epochs = epochs
        self.ratio_clip = ratio_clip
        self.anneal_ratio_clip = anneal_ratio_clip
        self.minibatch_advantage_norm = minibatch_advantage_norm
        self.value_clip = value_clip
        self.current_ratio_clip = ratio_clip  # ratio_clip after the schedule, used by ``loss``
        # The episode starts of the minibatch optimize_agent trains on (recurrent agents), read by ``loss``.
        self._minibatch_episode_start: torch.Tensor | None = None

    def initialize(
        self,
        agent: BaseAgent,
        n_itr: int,
        batch_spec: BatchSpec,
        mid_batch_reset: bool = False,
        examples: dict[str, Any] | None = None,
        world_size: int = 1,
        rank: int = 0,
    ) -> None:
        """:meth:`PolicyGradientAlgo.initialize`, then the minibatch size, checked against the batch."""
        super().initialize(agent, n_itr, batch_spec, mid_batch_reset, examples, world_size, rank)
        T, B = self.batch_spec.T, self.batch_spec.B
        if self.agent.recurrent:
            if B < self.minibatches:
                raise ValueError(
                    f"PPO with a recurrent agent splits the batch's envs into minibatches (whole sequences), so "
                    f"minibatches={self.minibatches} needs at least that many envs, but batch_B = {B}; lower "
                    "minibatches or raise batch_B."
                )
            self.batch_size = T * (B // self.minibatches)
            return
        if T * B < self.minibatches:
            raise ValueError(
                f"PPO with minibatches={self.minibatches} needs at least that many steps per batch, but the "
                f"sampler gives batch_T * batch_B = {T * B}; lower minibatches or raise batch_T/B."
            )
        self.batch_size = T * B // self.minibatches

    def optimize_agent(
        self, itr: int, samples: SamplesBatch | None = None, sampler_itr: int | None = None
    ) -> OptInfoTuple:
        """``epochs`` x ``minibatches`` gradient steps on one ``[T, B]`` batch."""
        samples = require_samples(self, samples)
        agent_inputs = self.agent_inputs(samples)  # on the device once; minibatches index there
        return_, advantage, valid = self.process_returns(samples)  # on the host (a short recursion)
        old_value = samples.agent.agent_info.value if self.value_clip is not None else None
        # The whole batch to the agent's device at once, where its outputs stay: the minibatches index there.
        loss_inputs, init_rnn_state, old_value = self.on_agent_device(
            (
                LossInputs(
                    agent_inputs=agent_inputs,
                    action=samples.agent.action,
                    return_=return_,
                    advantage=advantage,
                    valid=valid,
                    old_dist_info=samples.agent.agent_info.dist_info,
                ),
                self.initial_rnn_state(samples),  # [B, N, H]; None for a feedforward agent
                old_value,
            )
        )
        self._apply_schedule(itr)

        T, B = samples.env.reward.shape[:2]
        recurrent = init_rnn_state is not None
        # [T, B], left on the host where the recurrent forward reads its cuts; None for an agent that records none.
        episode_start = self.episode_start(samples)
        n = B if recurrent else T * B  # a recurrent agent's minibatches are whole sequences: envs, not steps
        mb_size = n // self.minibatches
        if not recurrent:  # env-major and flat, once per batch: step k is [k % T, k // T], one index per field
            loss_inputs, old_value = buffer_func(
                (loss_inputs, old_value), lambda x: x.transpose(0, 1).reshape(T * B, *x.shape[2:])
            )
        # Passed only when clipping, so a subclass's loss() with rlpyt's parameters still runs without it.
        extra: dict[str, Any] = {}
        opt_info = OptInfoPpo(*([] for _ in OptInfoPpo._fields))
        for _epoch in range(self.epochs):
            order_on_host = torch.randperm(n)  # the CPU generator's stream, wherever the agent is
            order = self.on_agent_device(order_on_host)  # indexes on the host would be copied per minibatch, blocking
            for start in range(0, n - mb_size + 1, mb_size):
                idxs = order[start : start + mb_size]
                mb_inputs = loss_inputs[:, idxs] if recurrent else loss_inputs[idxs]
                if self.minibatch_advantage_norm:
                    mb_inputs = mb_inputs._replace(advantage=normalized(mb_inputs.advantage, mb_inputs.valid))
                if old_value is not None:
                    extra["old_value"] = old_value[:, idxs] if recurrent else old_value[idxs]
                # Handed to loss() beside its arguments, not as one: a subclass's loss() with rlpyt's
                # parameters, calling super().loss() without it, still replays the batch as sampled.
                if episode_start is not None:
                    self._minibatch_episode_start = episode_start[:, order_on_host[start : start + mb_size]]
                if recurrent:
                    mb_rnn_state = buffer_func(init_rnn_state, operator.getitem, idxs)
                    # Positional, as rlpyt passed it, so subclasses that name the parameter otherwise still run.
                    terms = LossTerms.of(self.loss(*(*mb_inputs, mb_rnn_state), **extra))
                else:
                    terms = LossTerms.of(self.loss(*mb_inputs, **extra))

                self.optimizer.zero_grad()
                terms.loss.backward()
                grad_norm = clip_grad_norm_tensor(optimizer_parameters(self.optimizer), self.clip_grad_norm)
                self.optimizer.step()
                self.update_counter += 1

                # 0-dim tensors, left on the device until the epochs end: one read back for all.
                opt_info.loss.append(terms.loss.detach())
                opt_info.gradNorm.append(grad_norm)
                opt_info.entropy.append(terms.entropy.detach())
                opt_info.perplexity.append(terms.perplexity.detach())
                opt_info.piLoss.append(scalar(terms.pi_loss))
                opt_info.valueLoss.append(scalar(terms.value_loss))
                opt_info.approxKl.append(scalar(terms.approx_kl))
                opt_info.clipFraction.append(scalar(terms.clip_fraction))
        self._minibatch_episode_start = None
        return opt_info_to_host(opt_info)

    def loss(
        self,
        agent_inputs: AgentInputs,
        action: torch.Tensor,
        return_: torch.Tensor,
        advantage: torch.Tensor,
        valid: torch.Tensor | None,
        old_dist_info: NamedArrayTuple,
        init_rnn_state: RecurrentState | None = None,
        old_value: torch.Tensor | None = None,
        episode_start: torch.Tensor | None = None,
    ) -> LossTerms:
        """The PPO loss on one minibatch, clipping the ratio at ``current_ratio_clip``. Unpacks as rlpyt's
        ``(loss, entropy, perplexity)``; the other parts are attributes.

        A feedforward agent's minibatch has leading dims ``[mb]`` and ``init_rnn_state`` is None. A
        recurrent agent's has ``[T, mb]`` (whole sequences of ``mb`` envs) and ``init_rnn_state`` is
        their state at ``t=0`` as stored, batch-first ``[mb, N, H]`` (rlpyt's convention). ``old_value``, the
        values recorded when sampling, is given when ``value_clip`` is set. ``episode_start`` ``[T, mb]``:
        the steps where the recurrent agent started an episode when sampling (``agent_info.episode_start``),
        where the state restarts and the previous action and reward are zeros, as when sampling; within
        :meth:`optimize_agent` the minibatch's own by default."""
        if init_rnn_state is not None:
            if episode_start is None:
                episode_start = self._minibatch_episode_start
            dist_info, value = self.recurrent_forward(agent_inputs, init_rnn_state, episode_start)
        else:
            dist_info, value = self.agent(*agent_inputs)
        dist = self.agent.distribution
        eps = self.current_ratio_clip

        ratio = dist.likelihood_ratio(action, old_dist_info=old_dist_info, new_dist_info=dist_info)
        surr_1 = ratio * advantage
        surr_2 = torch.clamp(ratio, 1.0 - eps, 1.0 + eps) * advantage
        pi_loss = -valid_mean(torch.min(surr_1, surr_2), valid)
        value_error = (value - return_) ** 2
        if self.value_clip is not None and old_value is not None:
            clipped = old_value + torch.clamp(value - old_value, -self.value_clip, self.value_clip)
            value_error = torch.max(value_error, (clipped - return_) ** 2)
        value_loss = self.value_loss_coeff * valid_mean(0.5 * value_error, valid)
        # Without an entropy bonus the entropy is only logged, and stays out of the graph.
        entropy, perplexity = entropy_and_perplexity(dist, dist_info, valid, with_grad=self.entropy_loss_coeff != 0)
        loss = pi_loss + value_loss
        if self.entropy_loss_coeff != 0:
            loss = loss - self.entropy_loss_coeff * entropy

        with torch.no_grad():
            approx_kl = dist.mean_kl(old_dist_info, dist_info, valid)
            clip_fraction = valid_mean(((ratio - 1).abs() > eps).float(), valid)
        return LossTerms(
            loss,
            entropy.detach(),
            perplexity,
            pi_loss=pi_loss,
            value_loss=value_loss,
            approx_kl=approx_kl,
            clip_fraction=clip_fraction,
        )

    def _apply_schedule(self, itr: int) -> None:
        """Set the learning rate and ratio clip for iteration ``itr`` (stateless, so resuming works)."""
        if not self.linear_lr_schedule:
            return
        frac = self.decay_learning_rate(itr)
        self.current_ratio_clip = self.ratio_clip * frac if self.anneal_ratio_clip else self.ratio_clip
