"""Returns and advantages over time-major batches, for torch tensors or numpy arrays.

Every function takes arrays with time as the leading dim (``[T]``, ``[T, B]``, ``[T, B, ...]``),
where ``done[t]`` means the episode ended at step ``t``: ``reward[t]`` was its last reward and step
``t + 1`` (if in the batch) belongs to a new episode. ``bootstrap_value`` is the value of the state
after the batch's last step, shaped like one time step (``[B]``; a leading ``1`` as in ``[1, B]`` is
accepted).

Time limits. A step with ``timeout[t]`` True (which requires ``done[t]``) was cut by a time limit, not
ended by the task: its return should bootstrap from ``V(s_{t+1})``, but the batch does not hold
``s_{t+1}`` (the sampler reset the env, so ``observation[t + 1]`` is the next episode's first). The
``_tl`` functions estimate ``V(s_{t+1})`` by ``value[t]``, the value of the last state the batch does
hold; the advantage trace still stops at ``t``, since step ``t + 1`` belongs to another episode.

Lives in utils so that algorithms and replay buffers both use it; ``rlrun.algos.utils`` re-exports it
under rlpyt's path.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import torch

__all__ = [
    "discount_return",
    "generalized_advantage_estimation",
    "discount_return_tl",
    "generalized_advantage_estimation_tl",
    "discount_return_n_step",
    "discount_return_n_step_tl",
    "valid_from_done",
]

Array = TypeVar("Array", torch.Tensor, np.ndarray)


def discount_return(
    reward: Array,
    done: Array,
    bootstrap_value: Array | float,
    discount: float,
    return_dest: Array | None = None,
) -> Array:
    """Discounted return ``G[t] = reward[t] + discount * G[t+1]``, restarted where ``done``.

    ``G`` after the last step is ``bootstrap_value`` (ignored where ``done[-1]``). Writes into
    ``return_dest`` when given. Returns ``[T, ...]`` like ``reward``.
    """
    return_ = _dest(return_dest, reward)
    not_done = 1 - _to_float(done, reward)
    g = _one_step_shaped(bootstrap_value, reward)
    for t in reversed(range(len(reward))):
        g = reward[t] + discount * not_done[t] * g
        return_[t] = g
    return return_


def generalized_advantage_estimation(
    reward: Array,
    value: Array,
    done: Array,
    bootstrap_value: Array | float,
    discount: float,
    gae_lambda: float,
    advantage_dest: Array | None = None,
    return_dest: Array | None = None,
) -> tuple[Array, Array]:
    """GAE(lambda) advantages (Schulman et al. 2016) and the value targets ``advantage + value``.

    ``delta[t] = reward[t] + discount * V(s_{t+1}) * (1 - done[t]) - value[t]`` and
    ``A[t] = delta[t] + discount * gae_lambda * (1 - done[t]) * A[t+1]``, with ``V`` after the last
    step being ``bootstrap_value``. Returns ``(advantage, return_)``, each ``[T, ...]``.
    """
    advantage = _dest(advantage_dest, reward)
    return_ = _dest(return_dest, reward)
    not_done = 1 - _to_float(done, reward)
    next_value = _one_step_shaped(bootstrap_value, reward)
    a: Array | float = 0.0
    for t in reversed(range(len(reward))):
        delta = reward[t] + discount * not_done[t] * next_value - value[t]
        a = delta + discount * gae_lambda * not_done[t] * a
        advantage[t] = a
        next_value = value[t]
    return_[:] = advantage + value
    return advantage, return_


def discount_return_tl(
    reward: Array,
    done: Array,
    bootstrap_value: Array | float,
    discount: float,
    timeout: Array,
    value: Array,
    return_dest: Array | None = None,
) -> Array:
    """``discount_return`` that bootstraps through time limits instead of ending the return there.

    Where ``timeout[t]``: ``G[t] = reward[t] + discount * value[t]`` (``value[t]`` standing in for
    the value of the unseen next state, see the module docstring). Where ``done[t]`` without a
    timeout: ``G[t] = reward[t]``. Raises ValueError if ``timeout`` is True anywhere ``done`` is not.
    """
    timeout = _to_bool(timeout)
    not_terminal = 1 - _to_float(_terminal(done, timeout), reward)
    return_ = _dest(return_dest, reward)
    g = _one_step_shaped(bootstrap_value, reward)
    for t in reversed(range(len(reward))):
        g_next = _where(timeout[t], value[t], g)
        g = reward[t] + discount * not_terminal[t] * g_next
        return_[t] = g
    return return_


def generalized_advantage_estimation_tl(
    reward: Array,
    value: Array,
    done: Array,
    bootstrap_value: Array | float,
    discount: float,
    gae_lambda: float,
    timeout: Array,
    advantage_dest: Array | None = None,
    return_dest: Array | None = None,
) -> tuple[Array, Array]:
    """``generalized_advantage_estimation`` that bootstraps through time limits.

    Where ``timeout[t]``: ``delta[t] = reward[t] + discount * value[t] - value[t]`` (``value[t]``
    standing in for ``V(s_{t+1})``) and the trace stops, ``A[t] = delta[t]``. Where ``done[t]``
    without a timeout, the step is terminal as usual. Returns ``(advantage, return_)``.
    """
    timeout = _to_bool(timeout)
    not_terminal = 1 - _to_float(_terminal(done, timeout), reward)
    not_done = 1 - _to_float(done, reward)
    advantage = _dest(advantage_dest, reward)
    return_ = _dest(return_dest, reward)
    next_value = _one_step_shaped(bootstrap_value, reward)
    a: Array | float = 0.0
    for t in reversed(range(len(reward))):
        v_next = _where(timeout[t], value[t], next_value)
        delta = reward[t] + discount * not_terminal[t] * v_next - value[t]
        a = delta + discount * gae_lambda * not_done[t] * a
        advantage[t] = a
        next_value = value[t]
    return_[:] = advantage + value
    return advantage, return_


def discount_return_n_step(
    reward: Array,
    done: Array,
    n_step: int,
    discount: float,
    return_dest: Array | None = None,
    done_n_dest: Array | None = None,
    do_truncated: bool = False,
) -> tuple[Array, Array]:
    """n-step returns ``sum_{k<n} discount^k * reward[t+k]``, stopping after the first ``done``.

    ``done_n[t]`` is True if any of ``done[t : t+n]`` is. Without ``do_truncated`` only the
    ``T - n_step + 1`` steps whose window fits in the batch are returned; with it all ``T`` are, the
    last windows cut short by the end of the batch. Returns ``(return_, done_n)``; ``done_n`` keeps
    ``done``'s dtype.
    """
    L = _n_step_length(reward, n_step, do_truncated)
    return_ = _copy(reward[:L])
    done_n = _to_bool(done[:L], copy=True)
    done_b = _to_bool(done)
    for k in range(1, n_step):
        m = min(L, len(reward) - k)
        alive = _to_float(~done_n[:m], reward)
        return_[:m] += discount**k * reward[k : k + m] * alive
        done_n[:m] |= done_b[k : k + m]
    done_n = _cast_like(done_n, done)
    if return_dest is not None:
        return_dest[:] = return_
        return_ = return_dest
    if done_n_dest is not None:
        done_n_dest[:] = done_n
        done_n = done_n_dest
    return return_, done_n


def discount_return_n_step_tl(
    reward: Array,
    done: Array,
    timeout: Array,
    n_step: int,
    discount: float,
    do_truncated: bool = False,
) -> tuple[Array, Array, Array, Array]:
    """n-step returns that tell terminal steps from time-limit cuts.

    The window of step ``t`` holds ``steps_n[t]`` rewards: ``n_step``, or fewer when an episode
    ends inside it. ``done_n[t]`` is True when the window reaches a terminal step (done without
    timeout): its reward counts, and nothing is bootstrapped. ``timeout_n[t]`` is True when it
    reaches a time-limit cut, and the target bootstraps with ``discount ** steps_n[t]``:

    - a cut ``k >= 1`` steps in stops the window before the cut step, whose observation was seen:
      ``k`` rewards, then the value of ``s_{t+k}``, an exact n-step target;
    - a cut at ``t`` itself keeps its reward (``steps_n = 1``); the state after it was never seen,
      so replays estimate its value by ``s_t``'s.

    Returns ``(return_, done_n, timeout_n, steps_n)``; ``done_n`` and ``timeout_n`` are bool,
    ``steps_n`` int64. Lengths as in ``discount_return_n_step``.
    """
    L = _n_step_length(reward, n_step, do_truncated)
    done_b, timeout_b = _to_bool(done), _to_bool(timeout)
    terminal = _terminal(done_b, timeout_b)
    return_ = _copy(reward[:L])
    ended = _copy(done_b[:L])
    done_n = _copy(terminal[:L])
    timeout_n = _copy(timeout_b[:L])
    steps_n = _ones_int(ended)
    for k in range(1, n_step):
        m = min(L, len(reward) - k)
        alive = ~ended[:m]
        cut = alive & timeout_b[k : k + m]  # the window stops before a time-limit cut
        take = alive & ~cut
        return_[:m] += discount**k * reward[k : k + m] * _to_float(take, reward)
        steps_n[:m] += _cast_like(take, steps_n)
        done_n[:m] |= take & terminal[k : k + m]
        timeout_n[:m] |= cut
        ended[:m] |= done_b[k : k + m] | cut
    return return_, done_n, timeout_n, steps_n


def valid_from_done(done: Array) -> Array:
    """1.0 up to and including each column's first ``done``, 0.0 after it (float32).

    For samplers that do not reset envs mid-batch: steps after an episode's end are filler.
    """
    done_f = _to_float(done, None)
    valid = _ones_like(done_f)
    if isinstance(done_f, torch.Tensor):
        valid[1:] = 1 - torch.clamp(torch.cumsum(done_f[:-1], dim=0), max=1)
    else:
        valid[1:] = 1 - np.minimum(np.cumsum(done_f[:-1], axis=0), 1)
    return valid


# Helpers that let each function above serve torch tensors and numpy arrays alike.


def _dest(dest: Array | None, like: Array) -> Array:
    if dest is not None:
        return dest
    if isinstance(like, torch.Tensor):
        return torch.zeros_like(like)
    return np.zeros_like(like)


def _copy(x: Array) -> Array:
    return x.clone() if isinstance(x, torch.Tensor) else np.array(x, copy=True)


def _ones_like(x: Array) -> Array:
    return torch.ones_like(x) if isinstance(x, torch.Tensor) else np.ones_like(x)


def _ones_int(like: Array) -> Array:
    if isinstance(like, torch.Tensor):
        return torch.ones(like.shape, dtype=torch.int64, device=like.device)
    return np.ones(like.shape, dtype=np.int64)


def _to_bool(x: Array, copy: bool = False) -> Array:
    if isinstance(x, torch.Tensor):
        b = x if x.dtype == torch.bool else x != 0
        return b.clone() if copy and b is x else b
    x = np.asarray(x)
    b = x if x.dtype == np.bool_ else x != 0
    return np.array(b, copy=True) if copy and b is x else b


def _to_float(x: Array, like: Array | None) -> Array:
    """``x`` as the float dtype of ``like`` (float32 when ``like`` is None)."""
    if isinstance(x, torch.Tensor):
        return x.to(like.dtype if like is not None else torch.float32)
    return np.asarray(x).astype(like.dtype if like is not None else np.float32)


def _cast_like(x: Array, like: Array) -> Array:
    return x.to(like.dtype) if isinstance(x, torch.Tensor) else np.asarray(x).astype(like.dtype)


def _where(cond: Array, a: Array, b: Array | float) -> Array:
    if isinstance(cond, torch.Tensor):
        return torch.where(cond, a, torch.as_tensor(b, dtype=a.dtype, device=a.device))
    return np.where(cond, a, b)


def _terminal(done: Array, timeout: Array) -> Array:
    """Steps where the episode really ended: done and not cut by a time limit."""
    done = _to_bool(done)
    if (timeout & ~done).any():
        raise ValueError(
            "timeout is True at a step where done is False; a time-limit cut must also end the episode "
            "(done = terminated or truncated). Check the env wrapper's env_info.timeout."
        )
    terminal: Array = done & ~timeout  # numpy's stubs type `&` of arrays as Any
    return terminal


def _one_step_shaped(bootstrap_value: Array | float, reward: Array) -> Array:
    """``bootstrap_value`` shaped like ``reward[0]``, so ``[1, B]`` and ``[B]`` both work."""
    step_shape = tuple(reward.shape[1:])
    if isinstance(reward, torch.Tensor):
        bv_t = torch.as_tensor(bootstrap_value, dtype=reward.dtype, device=reward.device)
        if bv_t.ndim == 0:
            return bv_t
        _check_one_step(bv_t.numel(), tuple(bv_t.shape), step_shape)
        return bv_t.reshape(step_shape)
    bv_n: np.ndarray = np.asarray(bootstrap_value, dtype=reward.dtype)
    if bv_n.ndim == 0:
        return bv_n
    _check_one_step(bv_n.size, bv_n.shape, step_shape)
    return bv_n.reshape(step_shape)


def _check_one_step(size: int, shape: tuple[int, ...], step_shape: tuple[int, ...]) -> None:
    if size != int(np.prod(step_shape)):
        raise ValueError(
            f"bootstrap_value has shape {shape} but one time step of reward has shape "
            f"{step_shape}; pass the value of the state after the last step for every env."
        )


def _n_step_length(reward: Array, n_step: int, do_truncated: bool) -> int:
    if n_step < 1:
        raise ValueError(f"n_step must be at least 1, got {n_step}.")
    L = len(reward) if do_truncated else len(reward) - (n_step - 1)
    if L < 1:
        raise ValueError(
            f"A batch of {len(reward)} steps holds no complete {n_step}-step window; pass more steps or "
            "do_truncated=True."
        )
    return L
