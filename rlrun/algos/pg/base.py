"""What A2C and PPO share: the optimiser, settings, and returns/advantages from a sampled batch."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import torch

from rlrun.agents.base import AgentInputs, BaseAgent, SpaceTensor
from rlrun.agents.pg.base import is_recurrent_pg_agent, rnn_state_from_storage
from rlrun.algos import optim
from rlrun.algos.base import RlAlgorithm
from rlrun.algos.device import batch_to_device
from rlrun.algos.opt_info import StepValue
from rlrun.algos.optim import make_optimizer
from rlrun.algos.recurrent import run_with_resets
from rlrun.distributions.base import Distribution
from rlrun.models.lstm import RecurrentState
from rlrun.utils.collections import NamedArrayTuple, namedtuple, optional_field
from rlrun.utils.data_model import SamplesBatch
from rlrun.utils.returns import generalized_advantage_estimation, generalized_advantage_estimation_tl, valid_from_done
from rlrun.utils.tensor import valid_mean

if TYPE_CHECKING:  # samplers sit beside algos in the layers; only the type is needed
    from rlrun.samplers.collections import BatchSpec

BatchT = TypeVar("BatchT")

__all__ = [
    "PolicyGradientAlgo",
    "OptInfo",
    "LossTerms",
    "check_recurrent_setup",
    "entropy_and_perplexity",
    "normalized",
]

# rlpyt's convention: opt_info fields are lowerCamelCase.
OptInfo = namedtuple("OptInfo", ["loss", "gradNorm", "entropy", "perplexity", "piLoss", "valueLoss"])


class LossTerms(tuple[torch.Tensor, ...]):
    """A loss with its diagnostics. It unpacks as rlpyt's ``(loss, entropy, perplexity)``, so a subclass
    can write ``loss, entropy, perplexity = super().loss(...)``; the loss's other parts (``pi_loss``,
    ``value_loss``, PPO's ``approx_kl`` and ``clip_fraction``) are attributes, None where unknown."""

    def __new__(cls, loss: torch.Tensor, entropy: torch.Tensor, perplexity: torch.Tensor, **parts: Any) -> LossTerms:
        terms = super().__new__(cls, (loss, entropy, perplexity))
        terms.__dict__.update(parts)
        return terms

    @classmethod
    def of(cls, result: LossTerms | tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> LossTerms:
        """What a ``loss`` method returned (these terms, or rlpyt's plain 3-tuple) as LossTerms."""
        return result if isinstance(result, cls) else cls(*result)

    loss = property(lambda self: self[0])
    entropy = property(lambda self: self[1])
    perplexity = property(lambda self: self[2])

    def __getattr__(self, name: str) -> Any:  # parts a plain 3-tuple did not give
        if name in ("pi_loss", "value_loss", "approx_kl", "clip_fraction"):
            return None
        raise AttributeError(f"LossTerms has no part {name!r}")


_MISSING_RNN_STATE = (
    "{algo} trains the recurrent {agent} over sequences that start from the state stored in the samples, "
    "but its agent_info has no 'prev_rnn_state'. Record the state each step started from, batch-first "
    "([B, N, H]), in AgentInfoRnn(dist_info, value, prev_rnn_state), as RecurrentCategoricalPgAgent does."
)


def check_recurrent_setup(
    algo: RlAlgorithm[BaseAgent], agent: BaseAgent, mid_batch_reset: bool, examples: dict[str, Any] | None = None
) -> None:
    """Refuse what a recurrent agent cannot train from: no stored RNN state, or envs reset mid-batch by an
    agent that records no ``episode_start`` (the replay restarts the state at the recorded starts only)."""
    agent_info = examples.get("agent_info") if isinstance(examples, dict) else None
    if mid_batch_reset and (agent_info is None or optional_field(agent_info, "episode_start") is None):
        raise ValueError(
            f"{type(algo).__name__} trains the recurrent {type(agent).__name__} on whole [T, B] sequences, "
            "which an env reset in mid-batch would cut unless the agent records where episodes start "
            "(agent_info.episode_start, as RecurrentCategoricalPgAgent does in AgentInfoRnnStart). Record it, "
            "or use a collector that waits for the batch end to reset: CollectorCls=WaitResetCollector "
            "(rlrun.samplers.collectors) for SerialSampler and CpuSampler, CollectorCls=GpuWaitResetCollector "
            "(rlrun.samplers.parallel.gpu.collectors) for GpuSampler and AlternatingSampler."
        )
    if agent_info is not None and optional_field(agent_info, "prev_rnn_state") is None:
        raise ValueError(_MISSING_RNN_STATE.format(algo=type(algo).__name__, agent=type(agent).__name__))


def require_samples(algo: RlAlgorithm[BaseAgent], samples: SamplesBatch | None) -> SamplesBatch:
    """``samples``, which an on-policy algorithm cannot train without (``None`` is for replay algorithms
    under asynchronous runners)."""
    if samples is None:
        raise ValueError(
            f"{type(algo).__name__}.optimize_agent needs the batch just sampled: it trains on-policy, with no "
            "replay to draw from. Pass optimize_agent(itr, samples), e.g. from MinibatchRl, not AsyncRl."
        )
    return samples


def scalar(value: torch.Tensor | None) -> StepValue:
    """A diagnostic for opt_info: the tensor, detached and left on its device (``opt_info_to_host`` reads
    it back with the others), or NaN when a custom loss did not give it."""
    return float("nan") if value is None else value.detach()


def entropy_and_perplexity(
    dist: Distribution[NamedArrayTuple], dist_info: NamedArrayTuple, valid: torch.Tensor | None, with_grad: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """The mean entropy of ``dist_info`` (in the autograd graph only ``with_grad``, i.e. when the loss has an
    entropy bonus) and the mean perplexity, for logging, from the same per-step entropies where the
    distribution's perplexity is the default ``exp(entropy)``."""
    with torch.set_grad_enabled(torch.is_grad_enabled() and with_grad):
        step_entropy = dist.entropy(dist_info)
    with torch.no_grad():
        if type(dist).perplexity is Distribution.perplexity:
            perplexity = valid_mean(torch.exp(step_entropy.detach()), valid)
        else:
            perplexity = dist.mean_perplexity(dist_info, valid)
    return valid_mean(step_entropy, valid), perplexity


def normalized(advantage: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
    """``advantage`` shifted and scaled so that its valid entries have zero mean and unit standard deviation."""
    if valid is not None and advantage.device.type not in optim.HOST_DEVICE_TYPES:
        # Selecting the valid entries would make a GPU's host wait for the device to count them: weigh instead.
        mean = valid_mean(advantage, valid)
        std = valid_mean((advantage - mean) ** 2, valid).sqrt()
        return (advantage - mean) / std.clamp(min=1e-6)
    adv = advantage if valid is None else advantage[valid > 0]
    return (advantage - adv.mean()) / adv.std(correction=0).clamp(min=1e-6)


def value_parameters(agent: BaseAgent) -> list[torch.nn.Parameter]:
    """The parameters of ``agent.model.v``, the value function of rlrun's actor-critic models (with a
    shared trunk only the value head: the trunk stays with the policy)."""
    try:
        value_module = agent.bare_model.get_submodule("v")
    except AttributeError:
        raise ValueError(
            f"value_learning_rate trains the value function at its own rate, but {type(agent.bare_model).__name__} "
            "has no submodule 'v' to find it by. Name the value function's module 'v' (as rlrun's actor-critic "
            "models do), or leave value_learning_rate=None."
        ) from None
    return list(value_module.parameters())


class PolicyGradientAlgo(RlAlgorithm[BaseAgent]):
    """Base of on-policy actor-critic algorithms; subclasses implement ``optimize_agent``.

    Needs an agent whose ``__call__`` returns ``(dist_info, value)``, whose ``step`` records
    ``agent_info.dist_info`` and ``agent_info.value``, and a sampler run with ``bootstrap_value=True``.
    A recurrent agent (``agent.recurrent``) is called as ``agent(*inputs, init_rnn_state)`` and returns
    ``(dist_info, value, next_rnn_state)``; its ``step`` also records ``agent_info.prev_rnn_state``, and
    its batches come from a collector that does not reset envs mid-batch (see docs/recurrent_pg.md).
    """

    bootstrap_value = True
    opt_info_fields = OptInfo._fields

    def __init__(
        self,
        discount: float,
        learning_rate: float,
        value_loss_coeff: float,
        entropy_loss_coeff: float,
        OptimCls: Callable[..., torch.optim.Optimizer],
        optim_kwargs: dict[str, Any] | None,
        clip_grad_norm: float,
        initial_optim_state_dict: dict[str, Any] | None,
        gae_lambda: float,
        normalize_advantage: bool,
        linear_lr_schedule: bool = False,
        lr_schedule_steps: int | None = None,
        value_learning_rate: float | None = None,
    ) -> None:
        if not 0 <= discount <= 1:
            raise ValueError(f"discount must be in [0, 1], got {discount}.")
        if not 0 <= gae_lambda <= 1:
            raise ValueError(f"gae_lambda must be in [0, 1], got {gae_lambda}.")
        if clip_grad_norm <= 0:
            raise ValueError(f"clip_grad_norm must be positive, got {clip_grad_norm}; pass float('inf') to not clip.")
        self.discount = discount
        self.learning_rate = learning_rate
        self.value_loss_coeff = value_loss_coeff
        self.entropy_loss_coeff = entropy_loss_coeff
        self.OptimCls = OptimCls
        self.optim_kwargs = dict(optim_kwargs or {})
        self.clip_grad_norm = clip_grad_norm
        self.initial_optim_state_dict = initial_optim_state_dict
        self.gae_lambda = gae_lambda
        self.normalize_advantage = normalize_advantage
        if lr_schedule_steps is not None and (isinstance(lr_schedule_steps, bool) or not lr_schedule_steps > 0):
            raise ValueError(
                f"lr_schedule_steps must be a positive number of env steps or None, got {lr_schedule_steps!r}."
            )
        if lr_schedule_steps is not None and not linear_lr_schedule:
            raise ValueError(
                "lr_schedule_steps sets the length of the linear learning-rate schedule, which is off: pass "
                "linear_lr_schedule=True with it, or leave lr_schedule_steps out."
            )
        self.linear_lr_schedule = linear_lr_schedule
        self.lr_schedule_steps = lr_schedule_steps
        if value_learning_rate is not None and not value_learning_rate > 0:
            raise ValueError(f"value_learning_rate must be positive or None, got {value_learning_rate!r}.")
        self.value_learning_rate = value_learning_rate
        self.update_counter = 0

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
        """Build the optimiser over ``agent.parameters()``.

        A recurrent agent needs a sampler that does not reset envs mid-batch (``mid_batch_reset=False``),
        and agent_info with ``prev_rnn_state`` (checked in ``examples`` where given).
        """
        if agent.recurrent:
            check_recurrent_setup(self, agent, mid_batch_reset, examples)
        self.agent = agent
        self.n_itr = n_itr
        self.batch_spec = batch_spec
        self.mid_batch_reset = mid_batch_reset
        self.world_size = world_size
        self.rank = rank
        self.batch_size = batch_spec.size
        self.optim_initialize(rank)

    def optim_initialize(self, rank: int = 0) -> None:
        """One optimiser over the agent's parameters; with ``value_learning_rate``, the value function's
        (the model's ``v`` module) are a second parameter group at that rate."""
        if self.value_learning_rate is None:
            self.optimizer = make_optimizer(
                self.OptimCls, self.agent.parameters(), self.learning_rate, self.optim_kwargs
            )
            self._group_learning_rates = [self.learning_rate]
        else:
            value_params = value_parameters(self.agent)
            value_ids = {id(p) for p in value_params}
            others = [p for p in self.agent.parameters() if id(p) not in value_ids]
            self.optimizer = make_optimizer(self.OptimCls, others, self.learning_rate, self.optim_kwargs)
            self.optimizer.add_param_group(dict(params=value_params, lr=self.value_learning_rate))
            self._group_learning_rates = [self.learning_rate, self.value_learning_rate]
        if self.initial_optim_state_dict is not None:
            self.optimizer.load_state_dict(self.initial_optim_state_dict)

    def decay_learning_rate(self, itr: int) -> float:
        """Set the learning rate to ``learning_rate * (1 - itr / n_itr)`` (and ``value_learning_rate`` by
        the same fraction) and return that fraction.

        With ``lr_schedule_steps`` the schedule reaches zero after that many env steps (all ranks' together)
        instead of at the run's end: a run can stop part way down a longer schedule, as published runs
        that are read at fewer frames than they trained for did. Computed from ``itr`` alone (no scheduler
        state), so a resumed run continues the schedule.
        """
        if self.lr_schedule_steps is None:
            horizon = float(self.n_itr)
        else:
            horizon = self.lr_schedule_steps / (self.batch_spec.size * self.world_size)
        frac = max(horizon - itr, 0.0) / horizon
        for group, learning_rate in zip(self.optimizer.param_groups, self._group_learning_rates):
            group["lr"] = learning_rate * frac
        return frac

    def agent_inputs(self, samples: SamplesBatch) -> NamedArrayTuple:
        """The agent's inputs for a sampled batch, on the agent's device; agents that normalise
        observations update their statistics here."""
        on_host = AgentInputs(
            observation=samples.env.observation,
            prev_action=samples.agent.prev_action,
            prev_reward=samples.env.prev_reward,
        )
        agent_inputs: NamedArrayTuple = self.on_agent_device(on_host)
        if hasattr(self.agent, "update_obs_rms"):
            self.agent.update_obs_rms(agent_inputs.observation)
        return agent_inputs

    def on_agent_device(self, batch: BatchT) -> BatchT:
        """``batch`` (a nested tuple of CPU tensors from the samples) on the agent's device, in non-blocking
        copies: the agent's training outputs stay on its device (a GPU's), so the loss's other inputs
        (actions, returns, advantages, masks, the sampled distributions and states) go there, once per
        iteration, and no gradient step waits for a copy."""
        return batch_to_device(batch, self.agent.device)

    def initial_rnn_state(self, samples: SamplesBatch) -> RecurrentState | None:
        """The recurrent state each env's sequence in ``samples`` starts from, batch-first (``[B, N, H]``,
        as the agent stored it in ``agent_info.prev_rnn_state`` at t=0); None for a feedforward agent."""
        if not self.agent.recurrent:
            return None
        stored = optional_field(samples.agent.agent_info, "prev_rnn_state")
        if stored is None:
            raise ValueError(_MISSING_RNN_STATE.format(algo=type(self).__name__, agent=type(self.agent).__name__))
        result: RecurrentState | None = stored[0]
        return result

    def episode_start(self, samples: SamplesBatch) -> torch.Tensor | None:
        """The steps ``[T, B]`` (bool) at which the agent started an episode when sampling, where it fed
        its model zeros as the previous action and reward (``agent_info.episode_start``, which rlrun's
        recurrent agents record); None for an agent that records none (it is replayed as stored)."""
        if not self.agent.recurrent:
            return None
        recorded = optional_field(samples.agent.agent_info, "episode_start")
        return None if recorded is None else torch.as_tensor(recorded, dtype=torch.bool)

    def recurrent_forward(
        self, agent_inputs: AgentInputs, init_rnn_state: RecurrentState, episode_start: torch.Tensor | None
    ) -> tuple[NamedArrayTuple, torch.Tensor]:
        """``(dist_info, value)`` of a recurrent agent over ``[T, B]`` inputs (with grad), from the state each
        env's sequence started from (batch-first, as stored: ``[B, N, H]``) and fed as sampling fed it:
        at the steps of ``episode_start`` the state restarts from zeros and the previous action and
        reward are zeros (:func:`~rlrun.algos.recurrent.run_with_resets`; ``episode_start`` is best left
        on the host, where the cuts are read). Without ``episode_start`` (an agent that records none),
        one pass over the inputs as stored."""
        state = rnn_state_from_storage(init_rnn_state)
        agent = self.agent
        if not is_recurrent_pg_agent(agent):  # BaseAgent's __call__ takes no state
            raise TypeError(
                f"recurrent_forward needs a recurrent agent, but {type(agent).__name__}.recurrent is False. Use a "
                "recurrent agent (recurrent = True, __call__ taking init_rnn_state), or the feedforward path."
            )
        observation, prev_action, prev_reward = agent_inputs
        if episode_start is None:
            dist_info, value, _next = agent(observation, prev_action, prev_reward, state)
            return dist_info, value

        def forward(
            observation: SpaceTensor,
            prev_action: SpaceTensor,
            prev_reward: torch.Tensor,
            rnn_state: RecurrentState | None,
            starts: torch.Tensor,
        ) -> tuple[tuple[NamedArrayTuple, torch.Tensor], RecurrentState]:
            dist_info, value, next_state = agent(observation, prev_action, prev_reward, rnn_state, episode_start=starts)
            return (dist_info, value), next_state

        (dist_info, value), _final = run_with_resets(
            forward, observation, prev_action, prev_reward, state, episode_start, pass_reset=True
        )
        return dist_info, value

    def process_returns(self, samples: SamplesBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """``(return_, advantage, valid)``, each ``[T, B]``, from a sampled batch.

        Advantages are GAE(``gae_lambda``) over ``agent_info.value`` and ``bootstrap_value``
        (``gae_lambda=1`` gives discounted returns minus values). Where ``env_info.timeout`` exists,
        time-limit cuts bootstrap instead of ending the return (see
        :func:`rlrun.algos.utils.generalized_advantage_estimation_tl`). ``valid`` masks the filler
        steps after an episode's end when the sampler does not reset envs mid-batch; it is None when
        every step is valid. With ``normalize_advantage`` the valid advantages get zero mean and unit
        standard deviation.
        """
        reward, done = samples.env.reward, samples.env.done
        value = samples.agent.agent_info.value
        bootstrap_value = optional_field(samples.agent, "bootstrap_value")
        if bootstrap_value is None:
            raise ValueError(
                f"{type(self).__name__} needs samples.agent.bootstrap_value: initialize the sampler with "
                "bootstrap_value=algo.bootstrap_value (the runners do)."
            )
        timeout = optional_field(samples.env.env_info, "timeout")
        inputs = [reward, value, done, bootstrap_value] + ([] if timeout is None else [timeout])
        # The recursion runs T steps of a few elementwise ops on [B]: in numpy (views of the same memory)
        # each op costs about a microsecond against several in torch, a sixth of an A2C update on CartPole.
        in_numpy = all(isinstance(x, torch.Tensor) and x.device.type == "cpu" and not x.requires_grad for x in inputs)
        if in_numpy:
            inputs = [x.numpy() for x in inputs]
        reward_, value_, done_, bootstrap_ = inputs[:4]
        if timeout is None:
            advantage, return_ = generalized_advantage_estimation(
                reward_, value_, done_, bootstrap_, self.discount, self.gae_lambda
            )
        else:
            advantage, return_ = generalized_advantage_estimation_tl(
                reward_, value_, done_, bootstrap_, self.discount, self.gae_lambda, inputs[4]
            )
        if in_numpy:
            advantage, return_ = torch.from_numpy(advantage), torch.from_numpy(return_)
        # Samplers give on-policy algorithms torch tensors (as_tensor returns them as they are).
        valid = None if self.mid_batch_reset else valid_from_done(torch.as_tensor(done))
        if self.normalize_advantage:
            advantage = normalized(advantage, valid)
        return return_, advantage, valid
