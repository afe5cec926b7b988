"""What the DDPG, TD3 and SAC agents share: a policy (``model``) plus critics and target copies, all
acting in ``[-1, 1]``, and the first training iteration (which ends pure exploration).

Action bounds: these agents output actions in ``[-1, 1]``. :func:`rlrun.envs.gym.make` rescales any
bounded Gymnasium action space to ``[-1, 1]`` (see ``docs/qpg.md``), so this holds for Gymnasium envs;
an env with other finite bounds is refused at :meth:`QpgAgentBase.initialize` with the fix.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import torch

from rlrun.agents.base import BaseAgent, SpaceTensor
from rlrun.agents.env_spaces import (
    EnvModelKwargs,
    EnvSpacesLike,
    continuous_action_size,
    continuous_array_model_kwargs,
    unwrap_space,
)
from rlrun.distributions.base import Distribution
from rlrun.models.utils import strip_ddp_state_dict
from rlrun.spaces.base import Space
from rlrun.spaces.float_box import FloatBox
from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.shared_memory import np_mp_array

__all__ = ["QpgAgentBase", "unit_action_size"]

_log = logging.getLogger(__name__)


def unit_action_size(agent: object, space: Space) -> int:
    """The action dim of a continuous action space whose finite bounds are ``[-1, 1]``.

    Raises with the fix when the space is discrete or bounded elsewhere; unbounded dims pass (the agent
    still acts in ``[-1, 1]`` there).
    """
    size = continuous_action_size(agent, space)
    inner = unwrap_space(space)
    assert isinstance(inner, FloatBox)  # continuous_action_size raised otherwise
    low = np.broadcast_to(np.asarray(inner.low, dtype=np.float64), (size,))
    high = np.broadcast_to(np.asarray(inner.high, dtype=np.float64), (size,))
    finite = np.isfinite(low) & np.isfinite(high)
    if not (np.allclose(low[finite], -1) and np.allclose(high[finite], 1)):
        raise ValueError(
            f"{type(agent).__name__} acts in [-1, 1], but the env's action space has bounds low={low.tolist()}, "
            f"high={high.tolist()}. Build the env with rlrun.envs.gym.make, which rescales bounded action spaces "
            "to [-1, 1], or wrap a Gymnasium env in gymnasium.wrappers.RescaleAction(env, -1.0, 1.0)."
        )
    if not finite.all():
        unbounded = np.flatnonzero(~finite).tolist()
        _log.warning(
            "%s: action dims %s are unbounded; the agent acts in [-1, 1] there.", type(agent).__name__, unbounded
        )
    return size


class QpgAgentBase(BaseAgent):
    """A policy ``model`` (shared with sampler workers) and critics used only in training.

    Subclasses build their critics and target networks in :meth:`build_critics` and name every module
    besides ``model`` in :meth:`other_models` (keys are their ``state_dict`` keys, rlpyt's names), which
    gives device moves, train/eval modes and state dicts here. Every model is built with
    ``observation_shape`` and ``action_size`` from the env, plus its own kwargs (as in rlpyt).

    ``initial_model_state_dict`` may be the policy's state dict or a whole :meth:`state_dict` of the
    agent (keys ``"model"``, ``"q_model"``, ...), which restores critics and targets too.

    The algorithm calls :meth:`give_min_itr_learn`; before that itr the agent explores with its pretrain
    noise. The value lives in shared memory so that sampler workers started earlier see it.
    """

    def __init__(
        self,
        ModelCls: type[torch.nn.Module] | None,
        QModelCls: type[torch.nn.Module],
        model_kwargs: dict[str, Any] | None,
        q_model_kwargs: dict[str, Any] | None,
        initial_model_state_dict: Mapping[str, Any] | None,
    ) -> None:
        super().__init__(ModelCls, model_kwargs, initial_model_state_dict)
        self.QModelCls = QModelCls
        self.q_model_kwargs = dict(q_model_kwargs or {})
        self._min_itr_learn = np_mp_array(1, np.int64)

    # --- building --------------------------------------------------------------------------------

    def initialize(
        self,
        env_spaces: EnvSpacesLike,
        share_memory: bool = False,
        global_B: int = 1,
        env_ranks: list[int] | None = None,
    ) -> None:
        """Build the policy, the critics and their targets for ``env_spaces``, then the distribution."""
        action_size = unit_action_size(self, env_spaces.action)
        initial = self.initial_model_state_dict
        whole_agent = _is_agent_state_dict(initial)
        self.initial_model_state_dict = None  # BaseAgent would load it into the policy; loaded below instead
        try:
            super().initialize(env_spaces, share_memory, global_B=global_B, env_ranks=env_ranks)
        finally:
            self.initial_model_state_dict = initial
        if initial is not None and not whole_agent:
            self.model.load_state_dict(strip_ddp_state_dict(initial))
        self.build_critics()
        if whole_agent:
            assert initial is not None
            self.load_state_dict(initial)
        self.distribution = self.make_distribution(action_size)

    def make_env_to_model_kwargs(self, env_spaces: EnvSpacesLike) -> EnvModelKwargs:
        return continuous_array_model_kwargs(self, env_spaces)

    def make_q_model(self, initial_state_dict: Mapping[str, Any] | None = None) -> torch.nn.Module:
        """A new critic ``QModelCls(**env kwargs, **q_model_kwargs)``, loaded from ``initial_state_dict``."""
        q_model = self.QModelCls(**self.env_model_kwargs, **self.q_model_kwargs)
        if initial_state_dict is not None:
            q_model.load_state_dict(strip_ddp_state_dict(initial_state_dict))
        return q_model

    @staticmethod
    def make_target(model: torch.nn.Module) -> torch.nn.Module:
        """A private copy of ``model`` without gradients, to be moved by :meth:`update_target`."""
        target = copy.deepcopy(model)
        target.requires_grad_(False)
        return target

    def build_critics(self) -> None:
        """Build the critics and target networks (after ``model`` exists)."""
        raise NotImplementedError

    def make_distribution(self, action_size: int) -> Distribution[NamedArrayTuple]:
        """The action distribution, built last in :meth:`initialize`."""
        raise NotImplementedError

    def other_models(self) -> dict[str, torch.nn.Module]:
        """Every module besides ``model``, by its state-dict key."""
        raise NotImplementedError

    def update_target(self, tau: float = 1) -> None:
        """Move the target networks toward their sources: a copy for ``tau=1``, else Polyak averaging."""
        raise NotImplementedError

    # --- exploration schedule --------------------------------------------------------------------

    def give_min_itr_learn(self, min_itr_learn: int) -> None:
        """The first sampler itr that trains; the algorithm calls this in ``initialize``."""
        self._min_itr_learn[0] = int(min_itr_learn)

    @property
    def min_itr_learn(self) -> int:
        return int(self._min_itr_learn[0])

    @property
    def deterministic(self) -> bool:
        """True in eval mode: actions are the policy's mean, without noise."""
        return self._mode == "eval"

    # --- calls -----------------------------------------------------------------------------------

    def model_inputs(self, *inputs: SpaceTensor) -> tuple[SpaceTensor, ...]:
        """``inputs`` moved to the agent's device."""
        return self.inputs_to_device(inputs)

    # --- devices, modes, parameters --------------------------------------------------------------

    def to_device(self, cuda_idx: int | str | torch.device | None = None) -> None:
        super().to_device(cuda_idx)
        for module in self.other_models().values():
            module.to(self.device)

    def data_parallel(self) -> None:
        """Refused: SyncRl does not train DDPG, TD3 or SAC yet (see docs/sync_rl.md)."""
        raise NotImplementedError(
            f"{type(self).__name__} cannot train under SyncRl yet: its critics are separate models that would "
            "need their own DistributedDataParallel wrappers, and the algorithm runs several forward passes "
            "through them before one backward pass, which DistributedDataParallel refuses. Train DDPG, TD3 "
            "and SAC with MinibatchRl (one process, a parallel sampler for more envs)."
        )

    def train_mode(self, itr: int) -> None:
        """Policy and critics train; target networks stay in eval mode (no dropout, no batch-norm
        statistics moved by target passes)."""
        super().train_mode(itr)
        for key, module in self.other_models().items():
            module.train(not key.startswith("target_"))

    def sample_mode(self, itr: int) -> None:
        super().sample_mode(itr)
        for module in self.other_models().values():
            module.eval()

    def eval_mode(self, itr: int) -> None:
        super().eval_mode(itr)
        for module in self.other_models().values():
            module.eval()

    def state_dict(self) -> dict[str, Any]:
        """``{"model": ..., <other model name>: ...}``: every network, targets included."""
        return dict(model=self.model.state_dict(), **{k: m.state_dict() for k, m in self.other_models().items()})

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Load :meth:`state_dict`'s output (a bare policy state dict loads into the policy only)."""
        if not _is_agent_state_dict(state_dict):
            self.model.load_state_dict(strip_ddp_state_dict(state_dict))
            return
        others = self.other_models()
        unknown = sorted(set(state_dict) - {"model", *others})
        if unknown:
            raise KeyError(
                f"{type(self).__name__}.load_state_dict got keys {unknown} it has no model for; it holds "
                f"{['model', *others]}. Load a state dict saved by the same agent class."
            )
        self.model.load_state_dict(strip_ddp_state_dict(state_dict["model"]))
        for key, module in others.items():
            if key in state_dict:
                module.load_state_dict(strip_ddp_state_dict(state_dict[key]))

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        """The policy's parameters (the algorithm trains critics through their own methods)."""
        return self.model.parameters()


def _is_agent_state_dict(state_dict: Mapping[str, Any] | None) -> bool:
    """True for a whole agent's state dict (``{"model": {...}, ...}``), False for one model's."""
    return state_dict is not None and isinstance(state_dict.get("model"), Mapping)
