"""The agent interface samplers and algorithms rely on, and the bookkeeping every agent shares.

Who calls what:

- the sampler: ``initialize(env_spaces, share_memory, global_B, env_ranks)`` once, then per step
  ``step(observation, prev_action, prev_reward)`` with CPU tensors ``[B, ...]`` (no grad; outputs
  are CPU tensors), ``reset()`` / ``reset_one(idx)`` at episode ends, ``sample_mode(itr)`` and
  ``eval_mode(itr)``, ``sync_shared_memory()`` before workers step with new weights, and
  ``seed_env_streams(seed, env_ranks, eval_env_ranks)`` after ``initialize`` in every process that
  steps envs, so that each env's actions follow its own random stream;
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
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeAlias, TypedDict, TypeVar

import numpy as np
import torch

from rlrun.agents.env_spaces import EnvSpacesLike
from rlrun.agents.recurrent_state import RecurrentMemory
from rlrun.models.lstm import RecurrentState
from rlrun.models.utils import strip_ddp_state_dict, unwrap_ddp
from rlrun.utils.buffer import buffer_to
from rlrun.utils.collections import NamedArrayTuple, namedarraytuple
from rlrun.utils.random_streams import EnvStreams
from rlrun.utils.shared_memory import np_mp_array
from rlrun.utils.synchronize import DEFAULT_LOCK_TIMEOUT_S, RWLock

__all__ = [
    "SpaceTensor",
    "AgentInputs",
    "AgentStep",
    "AgentInputsRnn",
    "BaseAgent",
    "BaseAgentKwargs",
    "RecurrentAgentMixin",
    "resolve_device",
]

_log = logging.getLogger(__name__)

_Buffer = TypeVar("_Buffer")

# A value of a space as agents take it: a tensor, or a namedarraytuple of tensors for a composite (dict
# or tuple) space. Observations and actions are such values.
SpaceTensor: TypeAlias = "torch.Tensor | NamedArrayTuple"

# Key words that keep sampling and evaluation streams apart even where env ranks coincide.
_SAMPLE_DOMAIN, _EVAL_DOMAIN = 0, 1

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


class BaseAgentKwargs(TypedDict, total=False):
    """:class:`BaseAgent`'s keywords besides ``ModelCls``, as agents that pass them on take them (``**kwargs``)."""

    model_kwargs: dict[str, Any] | None
    initial_model_state_dict: Mapping[str, Any] | None


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
        # Built by initialize(); None until then.
        self.model: torch.nn.Module = None  # type: ignore[assignment]
        self.shared_model: torch.nn.Module | None = None
        self.distribution: Any = None
        self.device = torch.device("cpu")
        self.env_spaces: EnvSpacesLike | None = None
        self.env_model_kwargs: dict[str, Any] = {}
        self.share_memory = False
        self._mode: str | None = None
        self._sample_streams: EnvStreams | None = None
        self._eval_streams: EnvStreams | None = None
        # Asynchronous runs only (share_weights_async).
        self._weights_lock: RWLock | None = None
        self._weights_version: np.ndarray | None = None
        self._recv_version = 0

    # --- building --------------------------------------------------------------------------------

    def initialize(
        self,
        env_spaces: EnvSpacesLike,
        share_memory: bool = False,
        global_B: int = 1,
        env_ranks: list[int] | None = None,
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
        self.clear_env_streams()

    def make_env_to_model_kwargs(self, env_spaces: EnvSpacesLike) -> dict[str, Any]:
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

    def inputs_to_device(self, buffer: _Buffer) -> _Buffer:
        """``buffer`` (CPU tensors from a sampler or a batch) on the model's device; unchanged on the CPU.

        An agent on the CPU skips :func:`~rlrun.utils.buffer.buffer_to`'s walk of the nested tuples: it
        runs on every sampler step.
        """
        if self.device.type == "cpu":
            return buffer
        moved: _Buffer = buffer_to(buffer, self.device)
        return moved

    def outputs_to_cpu(self, buffer: _Buffer) -> _Buffer:
        """The model's outputs moved to the CPU for the sampler's buffers; unchanged on the CPU."""
        if self.device.type == "cpu":
            return buffer
        moved: _Buffer = buffer_to(buffer, "cpu")
        return moved

    def data_parallel(self) -> None:
        """Wrap ``model`` in ``DistributedDataParallel`` for multi-process training (SyncRl).

        Needs an initialized ``torch.distributed`` process group; call it after :meth:`to_device`.
        Every backward pass through the wrapped model then averages the gradients over all ranks, so
        identical optimiser steps keep the parameters identical on every rank. Wrapping broadcasts
        rank 0's parameters and buffers, so all ranks start alike. Buffers are not broadcast again on
        each forward (``forward_sync_buffers=False``): sampling runs forwards outside any collective,
        and models that keep statistics (``RunningMeanStdModel``) pool them across ranks themselves.
        ``state_dict`` and ``load_state_dict`` keep working on the bare model's keys.
        """
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()):
            raise RuntimeError(
                f"{type(self).__name__}.data_parallel() needs an initialized torch.distributed process group; "
                "the SyncRl runners start one. Call torch.distributed.init_process_group first."
            )
        if isinstance(self.model, torch.nn.parallel.DistributedDataParallel):
            return
        device_ids = [self.device.index] if self.device.type == "cuda" else None
        self.model = torch.nn.parallel.DistributedDataParallel(
            self.model,
            device_ids=device_ids,
            output_device=device_ids[0] if device_ids else None,
            forward_sync_buffers=False,
        )
        _log.info(
            "Agent model wrapped in DistributedDataParallel (rank %d of %d).", dist.get_rank(), dist.get_world_size()
        )

    def leave_data_parallel(self) -> None:
        """Unwrap ``model`` again (SyncRl calls it when training ends, before the process group goes), so
        the trained agent works on in one process and holds no reference to the finished group."""
        self.model = self.bare_model

    @property
    def bare_model(self) -> torch.nn.Module:
        """``model`` without its ``DistributedDataParallel`` wrapper (the same module when not wrapped)."""
        return unwrap_ddp(self.model)

    # --- calls -----------------------------------------------------------------------------------

    def __call__(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> Any:
        """Forward pass on training data ``[T, B, ...]`` with grad. The replay-based agents (DQN's, the qpg
        agents) return their outputs on the agent's device, where their algorithms move each batch."""
        raise NotImplementedError

    @torch.no_grad()
    def step(self, observation: SpaceTensor, prev_action: SpaceTensor, prev_reward: torch.Tensor) -> NamedArrayTuple:
        """Actions and agent_info for one step of ``B`` envs (CPU tensors in and out, no grad)."""
        raise NotImplementedError

    def reset(self) -> None:
        """Called when all envs reset (feedforward agents keep no state)."""

    def reset_one(self, idx: int) -> None:
        """Called when env ``idx`` of the batch resets."""

    def toggle_alt(self) -> None:
        """Switch to the other of two env groups served in turn; only alternating recurrent agents keep
        a state per group (:meth:`RecurrentAgentMixin.toggle_alt`), so here it does nothing. rlrun's
        alternating samplers swap whole step states instead (:meth:`get_step_state`); a sampler written
        for rlpyt calls this between the groups."""

    # --- per-env randomness ----------------------------------------------------------------------

    def seed_env_streams(self, seed: int, env_ranks: Sequence[int], eval_env_ranks: Sequence[int] = ()) -> None:
        """Give every env its own random stream for :meth:`step`, so actions follow env ranks.

        Samplers call this after :meth:`initialize` in each process that steps envs with this agent:
        in sample mode row ``b`` of a ``step`` batch belongs to env ``env_ranks[b]``, in eval mode to
        ``eval_env_ranks[b]`` (both global ranks). A call replaces all streams; a mode given no ranks
        keeps torch's global RNG, as do train mode and agents never seeded (an algorithm calling the
        agent, a user stepping it by hand). Sampling streams run on across iterations; evaluation
        streams restart at every ``eval_mode(itr)``, keyed by ``itr``, so an evaluation's draws do
        not depend on how long earlier evaluations ran.

        Env ``r``'s actions then depend only on ``(seed, r)``, the number of steps taken in that
        mode, and the model's output for its observation, not on which envs share the batch (the
        determinism of serial and parallel samplers). Model outputs for the same observation can
        differ in the last bits between batch sizes (BLAS blocking): agent_info then agrees to float
        tolerance, and an action can flip only if its uniform lands within about 1e-7 of a CDF
        boundary (categorical) or two Q-values tie to that precision (greedy). Agents whose ``step``
        does not call :meth:`env_stream_uniform` are unaffected.
        """
        self._sample_streams = EnvStreams(seed, env_ranks, domain=_SAMPLE_DOMAIN) if len(env_ranks) else None
        self._eval_streams = EnvStreams(seed, eval_env_ranks, domain=_EVAL_DOMAIN) if len(eval_env_ranks) else None

    def clear_env_streams(self) -> None:
        """Forget the per-env streams: :meth:`step` draws from torch's global RNG again."""
        self._sample_streams = None
        self._eval_streams = None

    def env_stream_uniform(self, leading_shape: torch.Size) -> torch.Tensor | None:
        """``[B, n_uniforms]`` uniforms for the distribution's ``sample``, or None (global RNG).

        ``step`` calls this with the leading shape of its distribution parameters (``[B]``); the
        streams of the current mode advance by one step. None when the mode has no streams.
        """
        mode = self._mode  # once per step: no dict built
        streams = self._sample_streams if mode == "sample" else self._eval_streams if mode == "eval" else None
        if streams is None:
            return None
        shape = tuple(leading_shape)
        if shape != (streams.n_envs,) and not (shape == () and streams.n_envs == 1):
            raise ValueError(
                f"{type(self).__name__}.step got a batch of leading shape {shape} in {self._mode} "
                f"mode, but seed_env_streams gave it one stream per env for env ranks {streams.env_ranks}. "
                "Step exactly one row per env, in that order, or call agent.clear_env_streams() to sample "
                "from torch's global RNG."
            )
        uniform = streams.uniform(self.distribution.n_uniforms)
        return uniform if shape else uniform[0]

    # --- state between steps, for samplers that serve several env groups -------------------------

    _step_state_fields: tuple[str, ...] = ("_mode", "_sample_streams", "_eval_streams")

    def get_step_state(self) -> dict[str, Any]:
        """What this agent carries from one ``step`` to the next for its envs: the mode and the per-env
        random streams (and, in recurrent agents, the RNN state).

        A sampler that serves two groups of envs in turn (:class:`AlternatingSampler
        <rlrun.samplers.parallel.gpu.alternating_sampler.AlternatingSampler>`) keeps one such state per
        group and swaps it in with :meth:`set_step_state` before stepping that group, so any agent
        serves both halves of the batch without knowing about groups.
        """
        return {name: getattr(self, name) for name in self._step_state_fields}

    def set_step_state(self, state: Mapping[str, Any]) -> None:
        for name in self._step_state_fields:
            setattr(self, name, state[name])

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
        """Before evaluation episodes; restarts the evaluation streams (see :meth:`seed_env_streams`)."""
        self.model.eval()
        self._mode = "eval"
        if self._eval_streams is not None:
            self._eval_streams.restart(epoch=itr)

    # --- parameters ------------------------------------------------------------------------------

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        """The parameters the optimiser trains."""
        return self.model.parameters()

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to restore the agent's weights, for snapshots."""
        return self.bare_model.state_dict()

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        self.bare_model.load_state_dict(strip_ddp_state_dict(state_dict))

    def sync_shared_memory(self) -> None:
        """Copy the trained weights into ``shared_model`` for sampler workers (no-op when they are one)."""
        if self.shared_model is not None and self.shared_model is not self.bare_model:
            self.shared_model.load_state_dict(self.bare_model.state_dict())

    # --- asynchronous runs: the optimiser publishes weights, the sampler copies them between batches ---

    def share_weights_async(self, timeout: float = DEFAULT_LOCK_TIMEOUT_S) -> None:
        """Prepare publishing weights between processes: a reader-writer lock and a version counter beside
        ``shared_model``. Called by asynchronous samplers after ``initialize(share_memory=True)``, before
        any process starts."""
        if self.shared_model is None:
            raise RuntimeError("share_weights_async() needs initialize(..., share_memory=True) first.")
        self._weights_lock = RWLock(timeout=timeout)
        self._weights_version = np_mp_array(1, np.int64)
        self._recv_version = 0

    def async_optimizer(self, cuda_idx: int | str | torch.device | None = None) -> None:
        """In the optimiser process of an asynchronous run: train a private copy of the model (on
        ``cuda_idx``); :meth:`send_shared_memory` publishes it. The target network and other private
        parts stay as they are."""
        self.to_device(cuda_idx)
        if self.model is self.shared_model:
            self.model = copy.deepcopy(self.shared_model)

    def async_cpu(self, share_memory: bool = True) -> None:
        """In the sampler process of an asynchronous run: act with a model of its own, a copy of the
        published weights, which :meth:`recv_shared_memory` refreshes between batches. With
        ``share_memory`` the copy lives in shared memory, so the sampler's workers act with it too."""
        if self.shared_model is None:
            raise RuntimeError("async_cpu() needs an agent initialized with share_memory=True.")
        self.model = copy.deepcopy(self.shared_model)
        if share_memory:
            self.model.share_memory()
        self._recv_version = -1  # the first recv copies whatever was published

    def send_shared_memory(self) -> None:
        """Optimiser: publish the trained weights for the sampler (under the write lock)."""
        if self.shared_model is None or self.shared_model is self.model:
            return
        lock, version = self._async_shared()
        with lock.write_lock:
            self.shared_model.load_state_dict(strip_ddp_state_dict(self.model.state_dict()))
            version[0] += 1

    def recv_shared_memory(self) -> bool:
        """Sampler: copy the weights the optimiser last published, if newer than the ones in use (under
        the read lock, in place). Returns True when it copied."""
        if self.shared_model is None or self.shared_model is self.model:
            return False
        lock, version = self._async_shared()
        if int(version[0]) == self._recv_version:
            return False
        with lock.read_lock:
            self._recv_version = int(version[0])
            self.model.load_state_dict(self.shared_model.state_dict())
        return True

    @property
    def weights_version(self) -> int:
        """How many times the optimiser published weights (0 before the first)."""
        return 0 if self._weights_version is None else int(self._weights_version[0])

    def _async_shared(self) -> tuple[RWLock, np.ndarray]:
        lock, version = self._weights_lock, self._weights_version
        if lock is None or version is None:
            raise RuntimeError(
                f"{type(self).__name__}: send_shared_memory/recv_shared_memory are for asynchronous runs; the "
                "asynchronous sampler's async_initialize() prepares them (share_weights_async())."
            )
        return lock, version


class RecurrentAgentMixin(BaseAgent):
    """Keeps the recurrent state between ``step`` calls, so samplers need not know about it.

    Put it before the agent class: ``class MyAgent(RecurrentAgentMixin, BaseAgent)``. It derives
    from ``BaseAgent`` so that its calls to the modes' ``super()`` are checked. The state lives in
    :attr:`rnn_memory`, a :class:`~rlrun.agents.recurrent_state.RecurrentMemory` the agent holds:
    ``step`` reads :attr:`prev_rnn_state` (None at the start: the model makes zeros) and calls
    :meth:`advance_rnn_state` with the new state. States are ``[N, B, H]`` tensors (the layout of
    ``torch.nn.LSTM``) or tuples of them; ``reset_one(idx)`` zeroes env ``idx``'s column. The
    sampling state is set aside during training and evaluation and restored for sampling. An agent
    class with ``alternating = True`` keeps one state per env group, switched by :meth:`toggle_alt`.
    """

    recurrent = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # passes the agent's own arguments through
        super().__init__(*args, **kwargs)
        self.rnn_memory = RecurrentMemory(n_groups=2 if self.alternating else 1)

    def reset(self) -> None:
        self.rnn_memory.reset()

    def reset_one(self, idx: int) -> None:
        """Zero env ``idx`` of the group being served (for alternating agents, ``idx`` counts within it)."""
        self.rnn_memory.reset_one(idx)

    def get_alt(self) -> int:
        """Which of the two env groups an alternating agent is serving: 0 or 1 (always 0 otherwise)."""
        return self.rnn_memory.alt

    def toggle_alt(self) -> None:
        """For an alternating agent (``alternating = True``), which serves two env groups in turn, each
        with its own recurrent state: set this group's state aside and take up the other's. Mode
        changes and :meth:`reset` return to group 0. Other agents ignore it."""
        self.rnn_memory.toggle()

    def advance_rnn_state(self, new_rnn_state: RecurrentState) -> None:
        """Store the state ``step`` produced, to feed the next ``step``."""
        self.rnn_memory.advance(new_rnn_state)

    @property
    def prev_rnn_state(self) -> RecurrentState | None:
        return self.rnn_memory.current.rnn_state

    def episode_starts(self, B: int) -> torch.Tensor | None:
        """Which of the ``B`` envs the next :meth:`step` starts an episode for (bool ``[B]``), or None for
        none: all after :meth:`reset` (the state is None), env ``idx`` after ``reset_one(idx)``."""
        if self.prev_rnn_state is None:
            return torch.ones(B, dtype=torch.bool)
        starting = self.rnn_memory.current.starting
        if not starting:
            return None
        start = torch.zeros(B, dtype=torch.bool)
        start[sorted(starting)] = True
        return start

    def train_mode(self, itr: int) -> None:
        self.rnn_memory.leave_sampling(self._mode == "sample")
        super().train_mode(itr)

    def eval_mode(self, itr: int) -> None:
        self.rnn_memory.leave_sampling(self._mode == "sample")
        super().eval_mode(itr)

    def sample_mode(self, itr: int) -> None:
        self.rnn_memory.resume_sampling(self._mode == "sample")
        super().sample_mode(itr)

    def get_step_state(self) -> dict[str, Any]:
        return dict(super().get_step_state(), rnn_memory=self.rnn_memory.copy())

    def set_step_state(self, state: Mapping[str, Any]) -> None:
        super().set_step_state(state)
        if "rnn_memory" in state:
            memory: RecurrentMemory = state["rnn_memory"]
            self.rnn_memory = memory.copy()
            return
        # A step state saved before the recurrent state became a RecurrentMemory (a serial sampler's
        # checkpoint of December 2026 or older): it held the served group's state as "_prev_rnn_state".
        if "_prev_rnn_state" not in state:
            raise KeyError(
                f"{type(self).__name__}.set_step_state: the state has no recurrent memory ('rnn_memory'); "
                "pass a state that get_step_state of a recurrent agent returned."
            )
        self.rnn_memory = RecurrentMemory(n_groups=2 if self.alternating else 1)
        self.rnn_memory.current.rnn_state = state["_prev_rnn_state"]
