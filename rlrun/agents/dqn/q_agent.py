"""The epsilon-greedy Q-learning agents' shared part: a model, its target copy, and the epsilon schedule."""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from rlrun.agents.base import BaseAgent, BaseAgentKwargs, SpaceTensor
from rlrun.agents.dqn.epsilon_greedy import linear_epsilon, log_spaced_epsilons
from rlrun.agents.env_spaces import EnvModelKwargs, EnvSpacesLike, discrete_action_size, discrete_array_model_kwargs
from rlrun.distributions.epsilon_greedy import EpsilonGreedy
from rlrun.models.utils import reads_prev_action, strip_ddp_state_dict, update_state_dict
from rlrun.utils.shared_memory import np_mp_array

__all__ = ["EpsilonGreedyQAgent", "DqnAgentKwargs"]

_log = logging.getLogger(__name__)


class DqnAgentKwargs(BaseAgentKwargs, total=False):
    """The epsilon-greedy Q agents' keywords besides ``ModelCls``, as agents that pass them on take them
    (``**kwargs``)."""

    eps_init: float
    eps_final: float
    eps_final_min: float | None
    eps_itr_min: int
    eps_itr_max: int
    eps_eval: float


class EpsilonGreedyQAgent(BaseAgent):
    """What the epsilon-greedy Q-learning agents share: the model, its target copy, and exploration.

    Its subclasses differ in what their model returns, so each defines its own ``__call__``, ``target``
    and ``step``: :class:`~rlrun.agents.dqn.dqn_agent.DqnAgent` Q-values, ``CatDqnAgent`` a distribution
    per action, ``R2d1AgentBase`` Q-values and a recurrent state. Here: the epsilon schedule (shared with
    sampler workers), the target network and its updates, device moves, and the state dicts.

    Exploration: in ``sample_mode(itr)`` epsilon anneals linearly from ``eps_init`` (until sampler
    itr ``eps_itr_min``) to ``eps_final`` (from ``eps_itr_max``); the algorithm usually sets those
    itrs with :meth:`set_epsilon_itr_min_max`. They live in shared memory, so sampler workers
    started before the algorithm set them still follow. ``eval_mode(itr)`` uses ``eps_eval``, or 1
    at itr 0 (the evaluation before training measures a random policy). Given ``eps_final_min``,
    each env gets its own final epsilon, log-spaced over all ``global_B`` envs from
    ``eps_final_min`` to ``eps_final``; this agent's envs are ``env_ranks``.

    A user ``ModelCls`` receives only ``model_kwargs``, unless a subclass overrides
    :meth:`make_env_to_model_kwargs`. Models get ``prev_action`` one-hot encoded.
    """

    def __init__(
        self,
        eps_init: float = 1,
        eps_final: float = 0.01,
        eps_final_min: float | None = None,
        eps_itr_min: int = 50,
        eps_itr_max: int = 1000,
        eps_eval: float = 0.001,
        ModelCls: type[torch.nn.Module] | None = None,
        model_kwargs: dict[str, Any] | None = None,
        initial_model_state_dict: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(ModelCls, model_kwargs, initial_model_state_dict)
        for name, eps in (("eps_init", eps_init), ("eps_final", eps_final), ("eps_eval", eps_eval)):
            if not 0 <= eps <= 1:
                raise ValueError(f"{type(self).__name__}: {name} must be in [0, 1], got {eps}.")
        if eps_final_min is not None and not 0 < eps_final_min <= 1:
            raise ValueError(f"{type(self).__name__}: eps_final_min must be in (0, 1], got {eps_final_min}.")
        self.eps_init: float | torch.Tensor = eps_init
        self.eps_final: float | torch.Tensor = eps_final
        self.eps_final_min = eps_final_min
        self.eps_eval = eps_eval
        self.eps_sample: float | torch.Tensor = eps_init
        self._eps_init_scalar = eps_init
        self._eps_final_scalar = eps_final
        # Shared, so workers forked before the algorithm sets the schedule still read it.
        self._eps_itr_min_max = np_mp_array(2, np.int64)
        self.target_model: torch.nn.Module = None  # type: ignore[assignment]  # built by initialize()
        self.set_epsilon_itr_min_max(eps_itr_min, eps_itr_max)

    # --- building --------------------------------------------------------------------------------

    def initialize(
        self,
        env_spaces: EnvSpacesLike,
        share_memory: bool = False,
        global_B: int = 1,
        env_ranks: list[int] | None = None,
    ) -> None:
        """Build the model and its target copy; with ``env_ranks``, this agent's per-env epsilons."""
        n_actions = discrete_action_size(self, env_spaces.action)
        super().initialize(env_spaces, share_memory, global_B=global_B, env_ranks=env_ranks)
        self.target_model = copy.deepcopy(self.model)  # a private copy, also when the model is shared
        self.target_model.requires_grad_(False)
        self.distribution = EpsilonGreedy(dim=n_actions, epsilon=self.eps_sample)
        if env_ranks is not None:
            self.make_vec_eps(global_B, env_ranks)

    def make_env_to_model_kwargs(self, env_spaces: EnvSpacesLike) -> EnvModelKwargs:
        """The env's sizes for the default model; a user ``ModelCls`` gets none."""
        return {} if self.ModelCls is not None else discrete_array_model_kwargs(self, env_spaces)

    def collector_initialize(self, global_B: int = 1, env_ranks: list[int] | None = None) -> None:
        """In a sampler worker: take the epsilons of this worker's envs."""
        if env_ranks is not None:
            self.make_vec_eps(global_B, env_ranks)

    def make_vec_eps(self, global_B: int, env_ranks: list[int]) -> None:
        """Per-env epsilons for envs ``env_ranks`` out of ``global_B`` (only when ``eps_final_min`` is set)."""
        if self.eps_final_min is None or self.eps_final_min == self._eps_final_scalar:
            return
        env_ranks = list(env_ranks)
        if any(not 0 <= r < global_B for r in env_ranks):
            raise ValueError(f"{type(self).__name__}: env_ranks {env_ranks} must lie in [0, global_B={global_B}).")
        if self.alternating:  # alternating samplers step env pairs together; a pair shares its epsilon
            if global_B % 2:
                raise ValueError(f"An alternating sampler needs an even number of envs, got global_B={global_B}.")
            global_B //= 2
            env_ranks = sorted({r // 2 for r in env_ranks})
        all_final = log_spaced_epsilons(global_B, self.eps_final_min, self._eps_final_scalar)
        self.eps_final = all_final[env_ranks]
        self.eps_init = torch.full((len(env_ranks),), float(self._eps_init_scalar))
        self.eps_sample = self.eps_init

    def to_device(self, cuda_idx: int | str | torch.device | None = None) -> None:
        super().to_device(cuda_idx)
        self.target_model.to(self.device)

    # Per-env epsilons belong to the envs being stepped, like the random streams.
    _step_state_fields = (*BaseAgent._step_state_fields, "eps_init", "eps_final", "eps_sample")

    def get_step_state(self) -> dict[str, Any]:
        return dict(super().get_step_state(), _epsilon=self.distribution.epsilon)

    def set_step_state(self, state: Mapping[str, Any]) -> None:
        super().set_step_state(state)
        self.distribution.set_epsilon(state["_epsilon"])

    # --- exploration -----------------------------------------------------------------------------

    @property
    def eps_itr_min(self) -> int:
        return int(self._eps_itr_min_max[0])

    @property
    def eps_itr_max(self) -> int:
        return int(self._eps_itr_min_max[1])

    def set_epsilon_itr_min_max(self, eps_itr_min: int, eps_itr_max: int) -> None:
        """Anneal epsilon between these sampler itrs (the algorithm converts its step counts)."""
        if eps_itr_max < eps_itr_min:
            raise ValueError(f"eps_itr_max ({eps_itr_max}) must not be below eps_itr_min ({eps_itr_min}).")
        self._eps_itr_min_max[0] = int(eps_itr_min)
        self._eps_itr_min_max[1] = int(eps_itr_max)
        _log.info("Sample epsilon anneals from sampler itr %d to itr %d.", eps_itr_min, eps_itr_max)

    def sample_mode(self, itr: int) -> None:
        super().sample_mode(itr)
        self.eps_sample = linear_epsilon(itr, self.eps_itr_min, self.eps_itr_max, self.eps_init, self.eps_final)
        self.distribution.set_epsilon(self.eps_sample)

    def set_sample_epsilon_greedy(self, epsilon: float | torch.Tensor) -> None:
        """Explore with ``epsilon`` (a float, or one value per env) until the next ``sample_mode`` sets
        the scheduled value again (rlpyt's name)."""
        self.eps_sample = epsilon
        self.distribution.set_epsilon(epsilon)

    def eval_mode(self, itr: int) -> None:
        super().eval_mode(itr)
        self.distribution.set_epsilon(self.eps_eval if itr > 0 else 1.0)

    # --- inputs and the target ---------------------------------------------------------------------

    def _inputs(
        self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor
    ) -> tuple[SpaceTensor, SpaceTensor, torch.Tensor]:
        """The model's inputs on the agent's device, ``prev_action`` one-hot when the model reads it."""
        if reads_prev_action(self.model):  # not for a forward marked ignores_prev_action: a cost per step
            prev_action = self.distribution.to_onehot(prev_action)
        return self.inputs_to_device((observation, prev_action, prev_reward))

    def update_target(self, tau: float = 1) -> None:
        """Copy the model into the target (``tau=1``) or move it by ``tau`` toward the model (Polyak)."""
        update_state_dict(self.target_model, self.bare_model.state_dict(), tau)

    # --- parameters ------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        return dict(model=self.bare_model.state_dict(), target=self.target_model.state_dict())

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Load ``state_dict()``'s output; a bare model state dict loads into both model and target."""
        if "model" in state_dict and isinstance(state_dict["model"], Mapping):
            self.bare_model.load_state_dict(strip_ddp_state_dict(state_dict["model"]))
            target = state_dict.get("target", state_dict["model"])
            self.target_model.load_state_dict(strip_ddp_state_dict(target))
        else:
            self.bare_model.load_state_dict(strip_ddp_state_dict(state_dict))
            self.target_model.load_state_dict(strip_ddp_state_dict(state_dict))
