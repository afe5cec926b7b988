"""The policy-gradient agent for continuous actions."""

from __future__ import annotations

from typing import Any

import torch

from rlrun.agents.base import AgentStep, BaseAgent
from rlrun.agents.env_spaces import array_observation_shape, continuous_action_size
from rlrun.agents.pg.base import AgentInfo
from rlrun.distributions.gaussian import DistInfoStd, Gaussian
from rlrun.models.pg.mujoco_ff_model import MujocoFfModel
from rlrun.utils.buffer import buffer_to

__all__ = ["GaussianPgAgent"]


class GaussianPgAgent(BaseAgent):
    """Samples actions from a diagonal Gaussian policy; the model returns ``(mu, log_std, value)``.

    Actions are not clipped to the action space's bounds (Gymnasium's continuous envs clip them).
    Without ``ModelCls`` the agent builds a :class:`MujocoFfModel` sized from the env; a user
    ``ModelCls`` receives only ``model_kwargs``, unless a subclass overrides
    :meth:`make_env_to_model_kwargs`.
    """

    default_model_cls = MujocoFfModel

    def initialize(
        self, env_spaces: Any, share_memory: bool = False, global_B: int = 1, env_ranks: list[int] | None = None
    ) -> None:
        action_size = continuous_action_size(self, env_spaces.action)
        super().initialize(env_spaces, share_memory, global_B=global_B, env_ranks=env_ranks)
        self.distribution = Gaussian(dim=action_size)

    def make_env_to_model_kwargs(self, env_spaces: Any) -> dict[str, Any]:
        if self.ModelCls is not None:
            return {}
        return dict(
            observation_shape=array_observation_shape(self, env_spaces.observation),
            action_size=continuous_action_size(self, env_spaces.action),
        )

    def _forward(self, observation: Any, prev_action: Any, prev_reward: torch.Tensor):
        inputs = buffer_to((observation, prev_action, prev_reward), device=self.device)
        return self.model(*inputs)

    def __call__(
        self, observation: Any, prev_action: Any, prev_reward: torch.Tensor
    ) -> tuple[DistInfoStd, torch.Tensor]:
        """``(DistInfoStd(mean, log_std) [T, B, A], value [T, B])`` on the CPU, with grad."""
        mu, log_std, value = self._forward(observation, prev_action, prev_reward)
        return buffer_to((DistInfoStd(mean=mu, log_std=log_std), value), device="cpu")

    @torch.no_grad()
    def step(self, observation: Any, prev_action: Any, prev_reward: torch.Tensor) -> AgentStep:
        mu, log_std, value = self._forward(observation, prev_action, prev_reward)
        dist_info = DistInfoStd(mean=mu, log_std=log_std)
        action = self.distribution.sample(dist_info, uniform=self.env_stream_uniform(mu.shape[:-1]))
        agent_info = AgentInfo(dist_info=dist_info, value=value)
        action, agent_info = buffer_to((action, agent_info), device="cpu")
        return AgentStep(action=action, agent_info=agent_info)

    @torch.no_grad()
    def value(self, observation: Any, prev_action: Any, prev_reward: torch.Tensor) -> torch.Tensor:
        """V(s) ``[B]`` on the CPU without grad, e.g. the bootstrap value after a batch's last step."""
        _mu, _log_std, value = self._forward(observation, prev_action, prev_reward)
        return value.cpu()
