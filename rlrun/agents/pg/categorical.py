"""The policy-gradient agent for discrete actions."""

from __future__ import annotations

from typing import Any

import torch

from rlrun.agents.base import AgentStep, BaseAgent
from rlrun.agents.env_spaces import array_observation_shape, discrete_action_size
from rlrun.agents.pg.base import AgentInfo
from rlrun.distributions.categorical import Categorical, DistInfo
from rlrun.models.pg.mlp import CategoricalPgMlpModel
from rlrun.utils.buffer import buffer_to

__all__ = ["CategoricalPgAgent"]


class CategoricalPgAgent(BaseAgent):
    """Samples actions from a categorical policy; the model returns ``(pi, value)``.

    The model gets ``prev_action`` one-hot encoded. Without ``ModelCls`` the agent builds a
    :class:`CategoricalPgMlpModel` sized from the env (array observations, discrete actions);
    ``model_kwargs`` such as ``hidden_sizes`` still apply. A user ``ModelCls`` receives only
    ``model_kwargs``, unless a subclass overrides :meth:`make_env_to_model_kwargs`.

    ``greedy_eval=True`` (not in rlpyt) takes the most probable action in eval mode instead of
    sampling, the deterministic evaluation most benchmarks report; training always samples.
    """

    default_model_cls = CategoricalPgMlpModel

    def __init__(self, *args: Any, greedy_eval: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.greedy_eval = greedy_eval

    def initialize(
        self, env_spaces: Any, share_memory: bool = False, global_B: int = 1, env_ranks: list[int] | None = None
    ) -> None:
        n_actions = discrete_action_size(self, env_spaces.action)
        super().initialize(env_spaces, share_memory, global_B=global_B, env_ranks=env_ranks)
        self.distribution = Categorical(dim=n_actions)

    def make_env_to_model_kwargs(self, env_spaces: Any) -> dict[str, Any]:
        if self.ModelCls is not None:
            return {}
        return dict(
            observation_shape=array_observation_shape(self, env_spaces.observation),
            action_size=discrete_action_size(self, env_spaces.action),
        )

    def _forward(
        self, observation: Any, prev_action: Any, prev_reward: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        prev_action = self.distribution.to_onehot(prev_action)
        inputs = buffer_to((observation, prev_action, prev_reward), device=self.device)
        return self.model(*inputs)

    def __call__(self, observation: Any, prev_action: Any, prev_reward: torch.Tensor) -> tuple[DistInfo, torch.Tensor]:
        """``(DistInfo(prob [T, B, A]), value [T, B])`` on the CPU, with grad."""
        pi, value = self._forward(observation, prev_action, prev_reward)
        return buffer_to((DistInfo(prob=pi), value), device="cpu")

    @torch.no_grad()
    def step(self, observation: Any, prev_action: Any, prev_reward: torch.Tensor) -> AgentStep:
        pi, value = self._forward(observation, prev_action, prev_reward)
        dist_info = DistInfo(prob=pi)
        if self.greedy_eval and self._mode == "eval":
            action = torch.argmax(pi, dim=-1)
        else:
            action = self.distribution.sample(dist_info, uniform=self.env_stream_uniform(pi.shape[:-1]))
        agent_info = AgentInfo(dist_info=dist_info, value=value)
        action, agent_info = buffer_to((action, agent_info), device="cpu")
        return AgentStep(action=action, agent_info=agent_info)

    @torch.no_grad()
    def value(self, observation: Any, prev_action: Any, prev_reward: torch.Tensor) -> torch.Tensor:
        """V(s) ``[B]`` on the CPU without grad, e.g. the bootstrap value after a batch's last step."""
        _pi, value = self._forward(observation, prev_action, prev_reward)
        return value.cpu()
