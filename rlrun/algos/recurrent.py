"""Replaying a recurrent agent over a ``[T, B]`` batch the way it sampled it: the state restarts from zeros
where an episode starts, and there the model sees zeros as the previous action and reward.

R2D1 replays sequences from its replay, A2C and PPO the batch just sampled; both go through
:func:`run_with_resets`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from rlrun.agents.base import SpaceTensor
from rlrun.models.lstm import RecurrentState
from rlrun.utils.buffer import buffer_func

__all__ = ["run_with_resets"]


def run_with_resets(
    model: Callable[..., tuple[Any, RecurrentState]],
    observation: SpaceTensor,
    prev_action: SpaceTensor,
    prev_reward: torch.Tensor,
    rnn_state: RecurrentState | None,
    reset: torch.Tensor,
    pass_reset: bool = False,
) -> tuple[Any, RecurrentState | None]:
    """Run a recurrent ``model`` over ``[T, B]`` inputs, starting each sequence's state from zeros at
    the steps where ``reset[t, b]`` (an episode starts there), as the agent did when sampling.

    The time axis is cut at every step where some sequence resets; each piece is one call of
    ``model(observation, prev_action, prev_reward, rnn_state) -> (output, rnn_state)`` (with
    ``pass_reset``, also the piece's ``reset`` rows, for agents that hide the previous episode's last
    action and reward at an episode's first step, as :class:`~rlrun.agents.dqn.r2d1_agent.R2d1Agent`
    and the recurrent policy-gradient agents do), so episodes that end inside a sequence cost a few
    more calls but no step is wasted or fed the wrong state. Gradients flow through the whole
    sequence. ``output`` is a tensor ``[t, B, ...]`` or a (named) tuple of them. Returns ``(output
    [T, B, ...], final state)``.

    Where to cut is host knowledge, so ``reset`` is best given on the CPU, as samples and replays hold
    it: the cuts are read from it there, and it goes to the inputs' device in one non-blocking copy for
    the state and input masks, so that an agent on a GPU is never waited for. A ``reset`` on a GPU
    works too, at the cost of one read back to the host per call.
    """
    T = reset.shape[0]
    on_host = (reset if reset.device.type == "cpu" else reset.cpu()).numpy()
    if reset.device != prev_reward.device:
        reset = reset.to(prev_reward.device, non_blocking=True)
    cuts = [0, *(np.flatnonzero(on_host[1:].any(axis=1)) + 1).tolist(), T]
    outputs = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        if on_host[a].any():
            rnn_state = _zero_where(rnn_state, reset[a])
        inputs = (observation[a:b], prev_action[a:b], prev_reward[a:b], rnn_state)
        out, rnn_state = model(*inputs, reset[a:b]) if pass_reset else model(*inputs)
        outputs.append(out)
    return _cat_time(outputs), rnn_state


def _cat_time(pieces: Sequence[Any]) -> Any:
    """The pieces' outputs joined along time (dim 0): tensors, or (named) tuples of them."""
    first = pieces[0]
    if len(pieces) == 1:
        return first
    if isinstance(first, torch.Tensor):
        return torch.cat(list(pieces))
    joined = [_cat_time(parts) for parts in zip(*pieces)]  # field by field (indexing a namedarraytuple slices)
    return type(first)(*joined) if hasattr(first, "_fields") else type(first)(joined)


def _zero_where(rnn_state: RecurrentState | None, reset: torch.Tensor) -> RecurrentState | None:
    """``[N, B, ...]`` states with the columns of ``reset`` (``[B]`` bool) set to zero."""
    if rnn_state is None:
        return rnn_state

    def zero(s: torch.Tensor) -> torch.Tensor:
        keep = (~reset).to(device=s.device, dtype=s.dtype)
        return s * keep.view(1, -1, *([1] * (s.dim() - 2)))

    result: RecurrentState | None = buffer_func(rnn_state, zero)
    return result
