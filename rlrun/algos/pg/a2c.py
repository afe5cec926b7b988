"""Advantage actor-critic (synchronous A2C; Mnih et al. 2016, without the asynchrony)."""

from __future__ import annotations

from typing import Any

import torch

from rlrun.algos.base import OptInfoTuple
from rlrun.algos.opt_info import opt_info_to_host
from rlrun.algos.optim import clip_grad_norm_tensor, optimizer_parameters
from rlrun.algos.pg.base import LossTerms, OptInfo, PolicyGradientAlgo, entropy_and_perplexity, require_samples, scalar
from rlrun.utils.data_model import SamplesBatch
from rlrun.utils.tensor import valid_mean

__all__ = ["A2C", "LossTerms"]


class A2C(PolicyGradientAlgo):
    """One gradient step per sampled batch on ``pi_loss + value_loss - entropy_loss_coeff * entropy``.

    ``pi_loss = -mean(log pi(a_t|s_t) * A_t)`` with GAE advantages, ``value_loss =
    value_loss_coeff * mean(0.5 * (V(s_t) - R_t)^2)``; gradients clipped to ``clip_grad_norm``.
    ``linear_lr_schedule`` (not in rlpyt's A2C) decays the learning rate linearly to zero over the run, or
    over ``lr_schedule_steps`` env steps where given. ``value_learning_rate`` (not in rlpyt's A2C) trains the
    value function (the model's ``v`` module) at its own rate, so that the critic can keep up with returns
    that grow as the policy improves (see docs/algorithms.md); None trains it at ``learning_rate``.
    A recurrent agent runs over the batch's ``T`` steps from the state stored at ``t=0``; steps after an
    env's done are masked out (such agents need a wait-reset collector).
    """

    def __init__(
        self,
        discount: float = 0.99,
        learning_rate: float = 0.001,
        value_loss_coeff: float = 0.5,
        entropy_loss_coeff: float = 0.01,
        OptimCls: type[torch.optim.Optimizer] = torch.optim.Adam,
        optim_kwargs: dict[str, Any] | None = None,
        clip_grad_norm: float = 1.0,
        initial_optim_state_dict: dict[str, Any] | None = None,
        gae_lambda: float = 1,
        normalize_advantage: bool = False,
        linear_lr_schedule: bool = False,
        lr_schedule_steps: int | None = None,
        value_learning_rate: float | None = None,
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
            value_learning_rate=value_learning_rate,
        )

    def optimize_agent(
        self, itr: int, samples: SamplesBatch | None = None, sampler_itr: int | None = None
    ) -> OptInfoTuple:
        """One gradient step on the whole ``[T, B]`` batch."""
        samples = require_samples(self, samples)
        if self.linear_lr_schedule:
            self.decay_learning_rate(itr)
        self.optimizer.zero_grad()
        terms = LossTerms.of(self.loss(samples))
        terms.loss.backward()
        grad_norm = clip_grad_norm_tensor(optimizer_parameters(self.optimizer), self.clip_grad_norm)
        self.optimizer.step()
        self.update_counter += 1

        opt_info = OptInfo(
            loss=[terms.loss.detach()],
            gradNorm=[grad_norm],
            entropy=[terms.entropy.detach()],
            perplexity=[terms.perplexity.detach()],
            piLoss=[scalar(terms.pi_loss)],
            valueLoss=[scalar(terms.value_loss)],
        )
        return opt_info_to_host(opt_info)  # one read back for all of them

    def loss(self, samples: SamplesBatch) -> LossTerms:
        """The A2C loss on a sampled batch, from one forward pass of the agent (with grad). Unpacks as
        rlpyt's ``(loss, entropy, perplexity)``; ``pi_loss`` and ``value_loss`` are attributes."""
        agent_inputs = self.agent_inputs(samples)
        # Returns on the host (a short recursion), then beside the agent's outputs on its device.
        action, return_, advantage, valid = self.on_agent_device((samples.agent.action, *self.process_returns(samples)))
        if self.agent.recurrent:  # the whole [T, B] batch, from the sampling start state, as sampled
            init_rnn_state = self.on_agent_device(self.initial_rnn_state(samples))
            assert init_rnn_state is not None  # initial_rnn_state raises for a recurrent agent without one
            dist_info, value = self.recurrent_forward(agent_inputs, init_rnn_state, self.episode_start(samples))
        else:
            dist_info, value = self.agent(*agent_inputs)
        dist = self.agent.distribution

        log_prob = dist.log_likelihood(action, dist_info)
        pi_loss = -valid_mean(log_prob * advantage, valid)
        value_loss = self.value_loss_coeff * valid_mean(0.5 * (value - return_) ** 2, valid)
        # Without an entropy bonus the entropy is only logged, and stays out of the graph.
        entropy, perplexity = entropy_and_perplexity(dist, dist_info, valid, with_grad=self.entropy_loss_coeff != 0)
        loss = pi_loss + value_loss
        if self.entropy_loss_coeff != 0:
            loss = loss - self.entropy_loss_coeff * entropy
        return LossTerms(loss, entropy.detach(), perplexity, pi_loss=pi_loss, value_loss=value_loss)
