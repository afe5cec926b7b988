"""The agent interface samplers and algorithms rely on, and the bookkeeping every agent shares.

Who calls what:

- the sampler: ``initialize(env_spaces, share_memory, global_B, env_ranks)`` once, then per step
  ``step(observation, prev_action, prev_reward)`` with CPU tensors ``[B, ...]`` (no grad; outputs
  are CPU tensors), ``reset()`` / ``reset_one(idx)`` at episode ends, ``sample_mode(itr)`` and
  ``eval_mode(itr)``, and ``sync_shared_memory()`` before workers step with new weights;
- the runner: ``to_device(cuda_idx)`` after the sampler started its workers;
- the algorithm: ``agent(observation, prev_action, prev_reward)`` on ``[T, B, ...]`` batches (with
  grad; outputs on CPU), ``parameters()``, ``train_mode(itr)``, ``state_dict()``.

Shared memory: with ``share_memory=True`` the model's tensors live in shared memory and
``shared_model is model``; worker processes read it. ``to_device`` to another device leaves
``shared_model`` as the CPU copy and trains a separate ``model``; ``sync_shared_memory`` then copies
the trained weights into ``shared_model``.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from rlrun.models.utils import strip_ddp_state_dict
from rlrun.utils.collections import namedarraytuple

__all__ = ["AgentInputs", "AgentStep", "AgentInputsRnn", "BaseAgent", "RecurrentAgentMixin", "resolve_device"]

_log = logging.getLogger(__name__)

AgentInputs = namedarraytuple("AgentInputs", ["observation", "prev_action", "prev_reward"])
AgentStep = namedarraytuple("AgentStep", ["action", "agent_info"])
AgentInputsRnn = namedarraytuple("AgentInputsRnn", ["observation", "prev_action", "prev_reward", "init_rnn_state"])


def resolve_device(cuda_idx: int | str | torch.device | None) -> torch.device | None:
    """The device for ``to_device``: an int is a CUDA index; a string or device is used as given."""
    if cuda_idx is None:
        return None
    device = torch.device("cuda", int(cuda_idx)) if isinstance(cuda_idx, int) else torch.device(cuda_idx)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(
                f"The agent was asked to move to {device}, but this torch build sees no CUDA device. "
                "Pass cuda_idx=None (affinity without 'cuda_idx') to train on the CPU."
            )
        index = 0 if device.index is None else device.index
        if index >= torch.cuda.device_count():
            raise RuntimeError(
                f"cuda_idx={index} was requested but only {torch.cuda.device_count()} CUDA device(s) exist."
            )
    return device


class BaseAgent:
    """Holds ``model`` (built in :meth:`initialize` from ``ModelCls(**env kwargs, **model_kwargs)``).

    Subclasses set ``distribution`` in ``initialize``, implement ``__call__`` and ``step``, and
    override :meth:`make_env_to_model_kwargs` to pass sizes from the env's spaces to the model.
    A subclass may set ``default_model_cls``, used when ``ModelCls`` is None.
    """

    recurrent: bool = False
    alternating: bool = False
    default_model_cls: type[torch.nn.Module] | None = None

    def __init__(
        self,
        ModelCls: type[torch.nn.Module] | None = None,
        model_kwargs: dict[str, Any] | None = None,
        initial_model_state_dict: Mapping[str, Any] | None = None,
    ) -> None:
        self.ModelCls = ModelCls
        self.model_kwargs = dict(model_kwargs or {})
        self.initial_model_state_dict = initial_model_state_dict
        self.model: torch.nn.Module | None = None
        self.shared_model: torch.nn.Module | None = None
        self.distribution = None
        self.device = torch.device("cpu")
        self.env_spaces = None
        self.env_model_kwargs: dict[str, Any] = {}
        self.share_memory = False
        self._mode: str | None = None

    # --- building --------------------------------------------------------------------------------

    def initialize(
        self, env_spaces, share_memory: bool = False, global_B: int = 1, env_ranks: list[int] | None = None
    ) -> None:
        """Build the model for ``env_spaces``; with ``share_memory`` put its tensors in shared memory.

        ``global_B`` (envs across all samplers) and ``env_ranks`` (this agent's envs among them) let
        agents give each env its own settings, e.g. per-env exploration.
        """
        ModelCls = self.ModelCls or self.default_model_cls
        if ModelCls is None:
            raise ValueError(
                f"{type(self).__name__} has no model: pass ModelCls=... (a torch.nn.Module class) and its "
                "model_kwargs when constructing the agent."
            )
        self.env_spaces = env_spaces
        self.env_model_kwargs = self.make_env_to_model_kwargs(env_spaces)
        clash = sorted(set(self.env_model_kwargs) & set(self.model_kwargs))
        if clash:
            raise ValueError(
                f"model_kwargs sets {clash}, which {type(self).__name__} derives from the env spaces. Remove "
                "them from model_kwargs, or override make_env_to_model_kwargs to change what the env provides."
            )
        self.model = ModelCls(**self.env_model_kwargs, **self.model_kwargs)
        if self.initial_model_state_dict is not None:
            self.model.load_state_dict(strip_ddp_state_dict(self.initial_model_state_dict))
        self.share_memory = share_memory
        if share_memory:
            self.model.share_memory()
        self.shared_model = self.model if share_memory else None

    def make_env_to_model_kwargs(self, env_spaces) -> dict[str, Any]:
        """Keyword arguments for the model derived from the env spaces (sizes, shapes); none by default."""
        return {}

    def collector_initialize(self, global_B: int = 1, env_ranks: list[int] | None = None) -> None:
        """Per-worker setup inside a sampler worker process, for agents whose envs differ (a no-op here)."""

    def to_device(self, cuda_idx: int | str | torch.device | None = None) -> None:
        """Move the trained model to ``cuda_idx`` (an int CUDA index, or a device); None stays put.

        With a shared model, the moved model is a separate copy and ``shared_model`` stays on the CPU.
        """
        device = resolve_device(cuda_idx)
        if device is None:
            return
        if self.shared_model is not None and self.shared_model is self.model:
            self.model = copy.deepcopy(self.shared_model)
        self.device = device
        self.model.to(device)
        _log.info("Agent model on device %s.", device)

    def data_parallel(self) -> None:
        """Wrap the model for multi-process training (SyncRl); not available yet."""
        raise NotImplementedError(
            "BaseAgent.data_parallel (DistributedDataParallel for SyncRl) is not implemented in rlrun yet; "
            "train with one process (MinibatchRl)."
        )

    # --- calls -----------------------------------------------------------------------------------

    def __call__(self, observation, prev_action, prev_reward):
        """Forward pass on training data ``[T, B, ...]`` with grad; outputs on the CPU."""
        raise NotImplementedError

    @torch.no_grad()
    def step(self, observation, prev_action, prev_reward) -> AgentStep:
        """Actions and agent_info for one step of ``B`` envs (CPU tensors in and out, no grad)."""
        raise NotImplementedError

    def reset(self) -> None:
        """Called when all envs reset (feedforward agents keep no state)."""

    def reset_one(self, idx: int) -> None:
        """Called when env ``idx`` of the batch resets."""

    # --- modes -----------------------------------------------------------------------------------

    def train_mode(self, itr: int) -> None:
        """Before the algorithm's update: the model in training mode (dropout, batch norm)."""
        self.model.train()
        self._mode = "train"

    def sample_mode(self, itr: int) -> None:
        """Before collecting training samples."""
        self.model.eval()
        self._mode = "sample"

    def eval_mode(self, itr: int) -> None:
        """Before evaluation episodes."""
        self.model.eval()
        self._mode = "eval"

    # --- parameters ------------------------------------------------------------------------------

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        """The parameters the optimiser trains."""
        return self.model.parameters()

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to restore the agent's weights, for snapshots."""
        return self.model.state_dict()

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        self.model.load_state_dict(strip_ddp_state_dict(state_dict))

    def sync_shared_memory(self) -> None:
        """Copy the trained weights into ``shared_model`` for sampler workers (no-op when they are one)."""
        if self.shared_model is not None and self.shared_model is not self.model:
            self.shared_model.load_state_dict(strip_ddp_state_dict(self.model.state_dict()))


def _zero_batch_entry(state: Any, idx: int) -> None:
    """Zero column ``idx`` (the B dim of ``[N, B, H]``) of a state tensor or a tuple of them."""
    if state is None:
        return
    if isinstance(state, torch.Tensor):
        state[:, idx] = 0
        return
    for s in state:
        _zero_batch_entry(s, idx)


class RecurrentAgentMixin:
    """Keeps the recurrent state between ``step`` calls, so samplers need not know about it.

    Put it before the agent class: ``class MyAgent(RecurrentAgentMixin, BaseAgent)``. ``step`` reads
    :attr:`prev_rnn_state` (None at the start: the model makes zeros) and calls
    :meth:`advance_rnn_state` with the new state. States are ``[N, B, H]`` tensors (the layout of
    ``torch.nn.LSTM``) or tuples of them; ``reset_one(idx)`` zeroes env ``idx``'s column. The
    sampling state is set aside during training and evaluation and restored for sampling.
    """

    recurrent = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._prev_rnn_state = None
        self._sample_rnn_state = None

    def reset(self) -> None:
        self._prev_rnn_state = None

    def reset_one(self, idx: int) -> None:
        _zero_batch_entry(self._prev_rnn_state, idx)

    def advance_rnn_state(self, new_rnn_state) -> None:
        """Store the state ``step`` produced, to feed the next ``step``."""
        self._prev_rnn_state = new_rnn_state

    @property
    def prev_rnn_state(self):
        return self._prev_rnn_state

    def train_mode(self, itr: int) -> None:
        self._stash_sample_state()
        super().train_mode(itr)

    def eval_mode(self, itr: int) -> None:
        self._stash_sample_state()
        super().eval_mode(itr)

    def sample_mode(self, itr: int) -> None:
        if self._mode != "sample":
            self._prev_rnn_state = self._sample_rnn_state
        super().sample_mode(itr)

    def _stash_sample_state(self) -> None:
        if self._mode == "sample":
            self._sample_rnn_state = self._prev_rnn_state
        self._prev_rnn_state = None
