"""The Categorical DQN (C51) agent: a distribution over ``n_atoms`` Q values per action."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from rlrun.agents.base import AgentStep, SpaceTensor
from rlrun.agents.dqn.q_agent import DqnAgentKwargs, EpsilonGreedyQAgent
from rlrun.agents.env_spaces import EnvSpacesLike, discrete_action_size
from rlrun.distributions.epsilon_greedy import CategoricalEpsilonGreedy
from rlrun.models.dqn.catdqn_mlp import CatDqnMlpModel
from rlrun.utils.collections import namedarraytuple

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["CatDqnAgent", "CatDqnAgentKwargs", "DqnAgentKwargsWithModel", "AgentInfo"]

AgentInfo = namedarraytuple("AgentInfo", ["p"])


class DqnAgentKwargsWithModel(DqnAgentKwargs, total=False):
    """:class:`EpsilonGreedyQAgent`'s keywords with ``ModelCls``: what :class:`CatDqnAgent` passes on."""

    ModelCls: type[torch.nn.Module] | None


class CatDqnAgentKwargs(DqnAgentKwargs, total=False):
    """:class:`CatDqnAgent`'s keywords besides ``ModelCls`` (what ``AtariCatDqnAgent`` passes on)."""

    n_atoms: int


class CatDqnAgent(EpsilonGreedyQAgent):
    """An epsilon-greedy Q agent (:class:`EpsilonGreedyQAgent`) whose model gives, per action, probabilities ``[..., n_actions, n_atoms]``
    over the atom values ``z = linspace(V_min, V_max, n_atoms)``.

    ``n_atoms`` is passed on to the model in ``model_kwargs``. The algorithm sets the support with
    :meth:`give_V_min_max` (``CategoricalDQN.initialize`` does); until then it is ``[-10, 10]``,
    CategoricalDQN's default. Actions are epsilon-greedy on the expected Q ``sum_i p_i z_i``, whose
    argmax does not depend on the support (``z`` is affine in ``V_min`` and ``V_max``), so an agent
    acts the same before and after :meth:`give_V_min_max`. ``__call__`` and ``target`` return the
    probabilities on the agent's device (for the loss); ``step`` records them, on the CPU, as
    ``agent_info.p``. Without ``ModelCls`` the agent builds a :class:`CatDqnMlpModel` sized from the env.

    A sibling of ``DqnAgent``, no longer its subclass as in rlpyt: its ``__call__`` returns distributions
    ``[..., n_actions, n_atoms]`` where a ``DqnAgent``'s returns Q-values (see ``docs/migration.md``).
    """

    default_model_cls = CatDqnMlpModel

    def __init__(self, n_atoms: int = 51, **kwargs: Unpack[DqnAgentKwargsWithModel]) -> None:
        super().__init__(**kwargs)
        if n_atoms < 2:
            raise ValueError(f"CatDqnAgent: n_atoms must be at least 2, got {n_atoms}.")
        given = self.model_kwargs.get("n_atoms", n_atoms)
        if given != n_atoms:
            raise ValueError(
                f"CatDqnAgent: model_kwargs has n_atoms={given} but the agent has n_atoms={n_atoms}; give it "
                "once, as the agent's keyword (the agent passes it to the model)."
            )
        self.n_atoms = n_atoms
        self.model_kwargs["n_atoms"] = n_atoms
        self.V_min: float = -10.0
        self.V_max: float = 10.0

    def initialize(
        self,
        env_spaces: EnvSpacesLike,
        share_memory: bool = False,
        global_B: int = 1,
        env_ranks: list[int] | None = None,
    ) -> None:
        """Build the model and its target copy, exploring over the expected Q."""
        super().initialize(env_spaces, share_memory, global_B=global_B, env_ranks=env_ranks)
        self.distribution = CategoricalEpsilonGreedy(
            dim=discrete_action_size(self, env_spaces.action),
            z=self.z,
            epsilon=self.distribution.epsilon,  # per-env values when make_vec_eps set them
        )

    @property
    def z(self) -> torch.Tensor:
        """The atom values ``[n_atoms]``, evenly spaced from ``V_min`` to ``V_max``."""
        return torch.linspace(self.V_min, self.V_max, self.n_atoms)

    def give_V_min_max(self, V_min: float, V_max: float) -> None:
        """Set the support of the Q distributions (rlpyt's name; the algorithm calls it)."""
        if not V_min < V_max:
            raise ValueError(f"CatDqnAgent: V_min must be below V_max, got {V_min} and {V_max}.")
        self.V_min = float(V_min)
        self.V_max = float(V_max)
        if self.distribution is not None:
            self.distribution.set_z(self.z)

    def __call__(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> torch.Tensor:
        """Probabilities ``[..., n_actions, n_atoms]`` on the agent's device, with grad (training)."""
        p: torch.Tensor = self.model(*self._inputs(observation, prev_action, prev_reward))
        return p

    @torch.no_grad()
    def target(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> torch.Tensor:
        """Target-network probabilities ``[..., n_actions, n_atoms]`` on the agent's device, without grad."""
        p: torch.Tensor = self.target_model(*self._inputs(observation, prev_action, prev_reward))
        return p

    @torch.no_grad()
    def step(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> AgentStep:
        """Epsilon-greedy actions on the expected Q; ``agent_info.p`` holds the probabilities."""
        p = self.model(*self._inputs(observation, prev_action, prev_reward)).cpu()
        action = self.distribution.sample(p, uniform=self.env_stream_uniform(p.shape[:-2]))
        return AgentStep(action=action, agent_info=AgentInfo(p=p))
