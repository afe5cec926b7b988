"""Per-step checks of env outputs while sampling, cheap enough for the hot path.

``validate_env`` checks the first env at start-up. After that a collector writes each env's
observation into its ``[B, ...]`` batch array and lets the agent act on it, so a bad value would be
truncated (2.7 stored as 2), end in a bare numpy broadcast error, or reach the agent as NaN and look
like a diverging policy much later. Collectors call the two functions here instead:

- :func:`store_observation` for every observation they write (one env at a time);
- :func:`check_finite_batch` once per time step, on the whole batch, before the agent steps on it.

Both raise :class:`~rlrun.envs.validation.EnvValidationError` naming the env, its rank, the field,
the step and the fix. What is accepted matches start-up (``Box._shape_mismatch``): a float never goes
into an integer array, and integers of another integer dtype go in when their values fit (start-up
asks for the declared bounds; while sampling only the dtype's range is checked, since a bounds
check would cost a pass over every observation).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rlrun.envs.base import Env
from rlrun.envs.validation import EnvValidationError, env_name
from rlrun.samplers.collections import SpaceArray
from rlrun.utils.collections import fields_of, is_namedtuple

__all__ = [
    "store_observation",
    "check_finite_batch",
    "check_finite_actions",
    "has_floating_fields",
    "with_step_context",
    "AgentOutputError",
]

# Above this many elements the finiteness probe sums instead of taking a dot product, which BLAS
# may spread over threads that would compete with the sampler's own processes for cores.
_VDOT_MAX_SIZE = 1 << 14


def store_observation(dest: SpaceArray, b: int, value: Any, *, env: Env, env_rank: int, where: str) -> None:
    """Write one env's observation ``value`` into row ``b`` of ``dest`` (an array, or a namedarraytuple
    of arrays, with leading dim B), refusing a lossy dtype or a changed shape or structure.

    The common case (an array of the row's shape and dtype) costs a few attribute reads and
    comparisons more than the plain ``dest[b] = value`` it replaces: well under a microsecond.
    """
    # The fast path is inlined: this runs once per env step.
    if (
        type(value) is np.ndarray
        and type(dest) is np.ndarray
        and (value.dtype is dest.dtype or value.dtype == dest.dtype)
        and value.shape == dest.shape[1:]
    ):
        dest[b] = value
    else:
        _store(dest, b, value, env, env_rank, where, "observation")


def _store(dest: SpaceArray | None, b: int, value: Any, env: Env, env_rank: int, where: str, field: str) -> None:
    if isinstance(dest, np.ndarray):
        if not (type(value) is np.ndarray and value.shape == dest.shape[1:] and value.dtype == dest.dtype):
            value = _checked_conversion(dest, value, env, env_rank, where, field)
        dest[b] = value
        return
    if dest is None:
        if value is not None:
            raise _error(env, env_rank, field, where, "is a value, but the batch has no array for it", _FIX_STRUCTURE)
        return
    if not is_namedtuple(value) or tuple(value._fields) != tuple(dest._fields):
        got = f"a {type(value).__name__}{fields_of(value) if is_namedtuple(value) else ''}"
        raise _error(
            env,
            env_rank,
            field,
            where,
            f"is {got}, but the batch stores a {type(dest).__name__}{tuple(dest._fields)}",
            _FIX_STRUCTURE,
        )
    for name, d, v in zip(dest._fields, dest, value):
        _store(d, b, v, env, env_rank, where, f"{field}.{name}")


def _checked_conversion(dest: np.ndarray, value: Any, env: Env, env_rank: int, where: str, field: str) -> np.ndarray:
    """``value`` as an array that fits a row of ``dest`` without loss, or the error saying why not."""
    try:
        arr = np.asarray(value)
    except ValueError:  # ragged nesting
        arr = np.empty(0, dtype=object)
    row_shape = dest.shape[1:]
    if arr.dtype == object or arr.dtype.kind not in "biufc":
        raise _error(
            env,
            env_rank,
            field,
            where,
            f"is a {type(value).__name__} that is not an array of numbers; the batch stores shape {row_shape}, "
            f"dtype {dest.dtype}",
            _FIX_SHAPE,
        )
    if arr.shape != row_shape:
        # A plain write would broadcast () or (1,) into the row silently, or fail with numpy's bare message.
        raise _error(
            env,
            env_rank,
            field,
            where,
            f"has shape {arr.shape}, but the batch stores shape {row_shape} (the shape the env gave at start-up)",
            _FIX_SHAPE,
        )
    why = _lossy_cast(arr, dest.dtype)
    if why is not None:
        raise _error(env, env_rank, field, where, why, _FIX_DTYPE)
    return arr


def _lossy_cast(arr: np.ndarray, dtype: np.dtype) -> str | None:
    """Why storing ``arr`` in ``dtype`` would lose information, or None when it would not."""
    src = arr.dtype
    if np.can_cast(src, dtype, casting="safe"):
        return None
    if dtype.kind in "iub":
        if src.kind in "fc":
            example = ""
            if src.kind == "f" and arr.size:
                v = arr.flat[int(np.argmax(arr != np.trunc(arr)))]  # the first value with a fraction, if any
                if math.isfinite(v):
                    with np.errstate(all="ignore"):  # the cast may overflow: that is the point of the example
                        stored = v.astype(dtype).item()
                    example = f" ({v.item()!r} would be stored as {stored!r})"
            return f"has dtype {src}, which the batch's integer dtype {dtype} cannot hold without loss{example}"
        # Integers of another width or sign: accepted as start-up accepts them, when the values fit.
        lo, hi = (0, 1) if dtype.kind == "b" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        if arr.size and (arr.min() < lo or arr.max() > hi):
            return (
                f"has dtype {src} with values in [{arr.min()}, {arr.max()}], outside the range [{lo}, {hi}] of the "
                f"batch's dtype {dtype}: they would wrap around"
            )
        return None
    if dtype.kind == "f" and src.kind == "c":
        return f"has dtype {src}, whose imaginary part the batch's dtype {dtype} would drop"
    # float64 into float32 and the like: same kind, rounded as on every float32 buffer; an overflow
    # to inf is caught by the finiteness check.
    return None


_FIX_SHAPE = (
    "Return observations of one fixed shape, the declared observation space's, at every reset() and step() "
    "(pad or crop variable-size data, or declare the largest shape)."
)
_FIX_DTYPE = (
    "Return observations of the declared dtype: for an IntBox space, integers (round or cast them in the env "
    "if rounding is meant); for real values, declare a FloatBox observation space."
)
_FIX_STRUCTURE = "Return the same namedtuple fields at every reset() and step(), those of the declared Composite space."
_FIX_OBS_FINITE = (
    "The agent would act on it, and the run would look like a diverging policy. Find where the env's state "
    "becomes non-finite (a division by zero, an unstable simulation, an unnormalised input) and fix it there, "
    "or end the episode when it happens."
)
_FIX_REWARD_FINITE = "It would enter the returns and the losses. Check the env's reward computation."


def _error(env: Env, env_rank: int, field: str, where: str, problem: str, fix: str) -> EnvValidationError:
    return EnvValidationError(
        f"{env_name(env)} (env rank {env_rank}): {field} from {where} {problem}. {fix}",
        env_rank=env_rank,
        field=field,
        where=where,
    )


def has_floating_fields(observation: SpaceArray | None) -> bool:
    """Whether any array of a batch (array or namedarraytuple) can hold NaN: decide once, check every step."""
    if observation is None:
        return False
    if is_namedtuple(observation):
        return any(has_floating_fields(v) for v in observation)
    return np.asarray(observation).dtype.kind in "fc"


def check_finite_batch(
    observation: SpaceArray | None,
    reward: np.ndarray | None,
    *,
    envs: Sequence[Env],
    env_ranks: Sequence[int],
    where: str,
    reset_mask: np.ndarray | None = None,
) -> None:
    """Raise for the first env whose observation (``[B, ...]``, array or namedarraytuple) or reward
    (``[B]``) holds NaN or infinity. Either may be None; integer arrays are skipped at once.

    ``reset_mask`` (``[B]`` bools, optional) marks envs whose observation came from the ``reset()``
    that followed a done step, so the error names that call rather than ``step()``. One vectorised
    probe per array; the per-env search only runs when it fails.
    """
    # One probe call per array in the common case (a plain array, finite or integer): this runs every time step.
    if observation is not None and not (type(observation) is np.ndarray and _probably_finite(observation)):
        _check_observation(observation, "observation", envs, env_ranks, where, reset_mask)
    if reward is not None and not _probably_finite(reward):
        bad = _first_nonfinite_row(reward)
        if bad is not None:
            value = np.asarray(reward).reshape(len(envs), -1)[bad]
            value = value.item() if value.size == 1 else value
            raise _error(
                envs[bad],
                env_ranks[bad],
                "reward",
                where,
                f"is {value!r}, not a finite number",
                _FIX_REWARD_FINITE,
            )


class AgentOutputError(ValueError):
    """The agent produced an action an env cannot take (NaN or infinite): the agent's fault, not the env's.
    ``env_rank`` and ``where`` say which env's action and when."""

    def __init__(self, message: str, *, env_rank: int, where: str) -> None:
        super().__init__(message)
        self.env_rank = env_rank
        self.where = where

    def __reduce__(
        self,
    ) -> tuple[
        Callable[[str, int, str], AgentOutputError], tuple[str, int, str]
    ]:  # keyword-only fields: pickled whole, so it crosses from a worker to the master
        return _rebuild_agent_output_error, (str(self), self.env_rank, self.where)


def _rebuild_agent_output_error(message: str, env_rank: int, where: str) -> AgentOutputError:
    return AgentOutputError(message, env_rank=env_rank, where=where)


def check_finite_actions(
    action: SpaceArray | None, *, envs: Sequence[Env], env_ranks: Sequence[int], where: str
) -> None:
    """Raise :class:`AgentOutputError` for the first env whose action (``[B, ...]``, array or namedarraytuple)
    holds NaN or infinity, before any env steps on it. One vectorised probe per array per time step."""
    if isinstance(action, np.ndarray):
        if _probably_finite(action):
            return
        bad = _first_nonfinite_row(action)
        if bad is not None:
            raise AgentOutputError(
                f"The agent's action for {env_name(envs[bad])} (env rank {env_ranks[bad]}) at {where} is "
                f"{action[bad]!r}, not finite, so no env was stepped with it. The agent produced it: its model "
                "diverged (a loss that grew without bound: lower the learning rate, clip gradients, check the "
                "observation scaling) or its distribution was given a non-finite mean or std.",
                env_rank=env_ranks[bad],
                where=where,
            )
        return
    if action is not None and is_namedtuple(action):
        for value in action:
            if value is not None:
                check_finite_actions(value, envs=envs, env_ranks=env_ranks, where=where)


def with_step_context(error: EnvValidationError, env_rank: int, where: str) -> EnvValidationError:
    """``error`` (raised by an env wrapper's own check: an action outside the space, a reward that is no
    number) with the env rank and the step named, as the collectors' own checks name them."""
    return EnvValidationError(
        f"{error} [env rank {env_rank}, {where}]", env_rank=env_rank, field=error.field, where=where
    )


def _check_observation(
    observation: SpaceArray,
    field: str,
    envs: Sequence[Env],
    env_ranks: Sequence[int],
    where: str,
    reset_mask: np.ndarray | None,
) -> None:
    if isinstance(observation, np.ndarray):
        if not _probably_finite(observation):
            bad = _first_nonfinite_row(observation)
            if bad is not None:
                row = observation[bad]
                n_bad = int(np.count_nonzero(~np.isfinite(row)))
                at = where
                if reset_mask is not None and reset_mask[bad]:
                    at = f"reset() after the done {where}"
                raise _error(
                    envs[bad],
                    env_ranks[bad],
                    field,
                    at,
                    f"holds NaN or infinite values ({n_bad} of {row.size})",
                    _FIX_OBS_FINITE,
                )
        return
    if is_namedtuple(observation):
        for name, value in zip(observation._fields, observation):
            if value is not None:
                _check_observation(value, f"{field}.{name}", envs, env_ranks, where, reset_mask)


def _probably_finite(arr: np.ndarray) -> bool:
    """True when ``arr`` cannot hold NaN or inf (integers) or certainly holds none, in one vectorised pass:
    NaN and inf survive a sum of squares. False can also mean that sum overflowed, so a False is
    confirmed element-wise by :func:`_first_nonfinite_row`."""
    kind = arr.dtype.kind
    if kind != "f":
        return kind != "c" or bool(np.isfinite(arr).all())
    # vdot, unlike dot, does not warn when the sum overflows; neither does add.reduce.
    return math.isfinite(np.vdot(arr, arr) if arr.size <= _VDOT_MAX_SIZE else np.add.reduce(arr, axis=None))


def _first_nonfinite_row(arr: np.ndarray) -> int | None:
    """Index of the first row (env) holding NaN or inf, or None when the probe only saw an overflow."""
    arr = np.asarray(arr)
    finite = np.isfinite(arr).reshape(arr.shape[0], -1).all(axis=1) if arr.ndim else np.isfinite(arr).reshape(1)
    bad = np.flatnonzero(~finite)
    return int(bad[0]) if bad.size else None
