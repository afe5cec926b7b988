"""Helpers for building and updating models: conv output sizes, gradient scaling, state copies."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import torch

from rlrun.utils.tensor import infer_leading_dims

__all__ = [
    "conv2d_output_shape",
    "ScaleGrad",
    "scale_grad",
    "update_state_dict",
    "polyak_update",
    "strip_ddp_state_dict",
    "unwrap_ddp",
    "ignores_prev_action",
    "reads_prev_action",
]


_F = TypeVar("_F", bound=Callable[..., Any])
# The forwards marked by ignores_prev_action (the decorator runs at import, so every process has them).
_IGNORES_PREV_ACTION: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()


def ignores_prev_action(forward: _F) -> _F:
    """Mark a model's ``forward`` as never reading ``prev_action``.

    Agents for discrete actions one-hot encode ``prev_action`` before every call, a cost of each
    sampler step; for a forward marked so they pass the action indexes as they are. The mark
    belongs to the function, so a subclass that overrides ``forward`` is encoded for again unless
    it marks its own.
    """
    _IGNORES_PREV_ACTION.add(forward)
    return forward


def reads_prev_action(model: torch.nn.Module) -> bool:
    """False when ``model``'s ``forward`` is marked with :func:`ignores_prev_action`, else True."""
    return type(model).forward not in _IGNORES_PREV_ACTION


def _pair(x: int | tuple[int, ...]) -> tuple[int, int]:
    return (x, x) if isinstance(x, int) else (int(x[0]), int(x[1]))


def conv2d_output_shape(
    h: int,
    w: int,
    kernel_size: int | tuple[int, ...] = 1,
    stride: int | tuple[int, ...] = 1,
    padding: int | tuple[int, ...] = 0,
    dilation: int = 1,
) -> tuple[int, int]:
    """Height and width after a ``Conv2d`` or ``MaxPool2d`` with these settings on an ``h x w`` input."""
    kh, kw = _pair(kernel_size)
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    h = (h + 2 * ph - dilation * (kh - 1) - 1) // sh + 1
    w = (w + 2 * pw - dilation * (kw - 1) - 1) // sw + 1
    return h, w


class ScaleGrad(torch.autograd.Function):
    """Identity in the forward pass; multiplies the gradient by ``scale`` in the backward pass."""

    @staticmethod
    def forward(ctx: Any, tensor: torch.Tensor, scale: float) -> torch.Tensor:  # ctx: torch's, keeps scale
        ctx.scale = scale
        return tensor.view_as(tensor)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor, None]:
        return grad_output * ctx.scale, None


def frames_to_float(frames: torch.Tensor) -> tuple[int, int, int, torch.Tensor]:
    """``(lead_dim, T, B, x)``: frames ``[T, B, C, H, W]``, ``[B, C, H, W]`` or ``[C, H, W]`` in [0, 255] as
    one float tensor ``[T * B, C, H, W]`` in [0, 1]. A new tensor scaled in place: the sampler pays this
    every step (``copy=True`` also leaves a float input untouched)."""
    lead_dim, T, B, image_shape = infer_leading_dims(frames, 3)
    x = frames.reshape(T * B, *image_shape).to(torch.float32, copy=True).mul_(1 / 255)
    return lead_dim, T, B, x


def scale_grad(tensor: torch.Tensor, scale: float) -> torch.Tensor:
    """``tensor`` unchanged, with its gradient scaled by ``scale`` on the way back (dueling heads)."""
    scaled: torch.Tensor = ScaleGrad.apply(tensor, scale)  # type: ignore[no-untyped-call]  # torch leaves apply unannotated
    return scaled


def unwrap_ddp(model: torch.nn.Module) -> torch.nn.Module:
    """The module inside a ``DistributedDataParallel`` wrapper, or ``model`` itself when not wrapped."""
    if isinstance(model, torch.nn.parallel.DistributedDataParallel):
        result: torch.nn.Module = model.module
        return result
    return model


def strip_ddp_state_dict(state_dict: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Keys without the ``module.`` prefix DistributedDataParallel adds, to load into a bare model."""
    prefix = "module."
    return {(k[len(prefix) :] if k.startswith(prefix) else k): v for k, v in state_dict.items()}


@torch.no_grad()
def update_state_dict(
    model: torch.nn.Module, state_dict: Mapping[str, torch.Tensor], tau: float = 1, strip_ddp: bool = True
) -> None:
    """Move ``model``'s state toward ``state_dict``: a copy for ``tau=1``, else Polyak averaging.

    Floating tensors become ``tau * new + (1 - tau) * old``; integer buffers (counters) are copied.
    """
    if not 0 < tau <= 1:
        raise ValueError(f"tau must be in (0, 1] (1 copies, smaller values average softly), got {tau}.")
    if strip_ddp:
        state_dict = strip_ddp_state_dict(state_dict)
    if tau == 1:
        model.load_state_dict(state_dict)
        return
    own = model.state_dict()
    missing = set(own) ^ set(state_dict)
    if missing:
        raise KeyError(f"update_state_dict: the state dicts differ in keys {sorted(missing)}.")
    for key, target in own.items():
        source = state_dict[key].to(target.device)
        if target.is_floating_point():
            target.lerp_(source, tau)
        else:
            target.copy_(source)


@torch.no_grad()
def polyak_update(target: torch.nn.Module, source: torch.nn.Module, tau: float) -> None:
    """``target <- tau * source + (1 - tau) * target`` over parameters and float buffers, in place.

    The same result as ``update_state_dict(target, source.state_dict(), tau)`` for two modules of one
    architecture, without building state dicts: one fused lerp over all tensors, cheap enough to run
    after every gradient step (DDPG, TD3, SAC). Integer buffers are copied.
    """
    if not 0 < tau <= 1:
        raise ValueError(f"tau must be in (0, 1] (1 copies, smaller values average softly), got {tau}.")
    targets = [*target.parameters(), *target.buffers()]
    sources = [*source.parameters(), *source.buffers()]
    if len(targets) != len(sources):
        raise ValueError(
            f"polyak_update: {type(target).__name__} has {len(targets)} tensors, {type(source).__name__} "
            f"{len(sources)}; the target must be a copy of the source's architecture."
        )
    floats = [(t, s) for t, s in zip(targets, sources) if t.is_floating_point()]
    if floats and hasattr(torch, "_foreach_lerp_"):
        torch._foreach_lerp_([t for t, _ in floats], [s for _, s in floats], tau)
    else:  # torch < 2.0
        for t, s in floats:
            t.lerp_(s, tau)
    for t, s in zip(targets, sources):
        if not t.is_floating_point():
            t.copy_(s)
