"""Checks on a replay class that a user passes as ``ReplayBufferCls`` (DQN, R2D1, DDPG, TD3, SAC), made
before it is built, so that a class unfit for the run is refused with the fix instead of failing later."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["replay_class_kwargs", "takes_keyword"]


def takes_keyword(func: Callable[..., Any], name: str) -> bool:
    """True when ``func`` (a class or function) accepts the keyword ``name``, or any keyword; True too
    when its signature cannot be read (the call then decides)."""
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def replay_class_kwargs(
    ReplayCls: type, algo_name: str, *, async_: bool = False, mid_batch_reset: bool = True
) -> dict[str, Any]:
    """The keywords ``algo_name`` adds when it builds ``ReplayCls``, after refusing a class the run cannot use.

    ``async_``: the run shares the replay between processes (AsyncRl), which needs a class that says
    ``async_ = True``. ``mid_batch_reset=False``: the sampler lets a done env wait for the next batch,
    and the replay must take ``mid_batch_reset=False`` so that the filler steps are never trained on.
    """
    # getattr with a default stays: ReplayBufferCls may be a user's or rlpyt-style class that does not
    # derive from BaseReplayBuffer and so does not declare async_; one that does not say is not asynchronous.
    if async_ and not getattr(ReplayCls, "async_", False):
        raise TypeError(
            f"ReplayBufferCls={ReplayCls.__name__} is not an asynchronous replay (its async_ is not True), and "
            f"{algo_name} under AsyncRl shares the replay between the sampler's copier and the optimiser. Pass its "
            "Async variant (e.g. AsyncUniformReplayBuffer from rlrun.replays.non_sequence.uniform) or leave "
            "ReplayBufferCls=None."
        )
    if mid_batch_reset:
        return {}
    if not takes_keyword(ReplayCls, "mid_batch_reset"):
        raise TypeError(
            f"ReplayBufferCls={ReplayCls.__name__} takes no mid_batch_reset keyword, which {algo_name} passes under "
            "a wait-reset sampler (mid_batch_reset=False) so that the filler steps after an env's done are never "
            "trained on. Accept it (rlrun's replays do), or use a sampler that resets mid-batch."
        )
    return dict(mid_batch_reset=False)
