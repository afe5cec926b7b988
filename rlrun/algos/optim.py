"""Optimisers and gradient clipping for every algorithm.

On the small networks of classic and continuous control, a gradient step costs more in per-tensor
overhead than in arithmetic: torch's default CPU optimisers loop over the parameters in Python. The
helpers here pick torch's multi-tensor kernels unless the user chose an implementation, and clip
gradients without reading the norm back to the host (on a GPU that read waits for the backward pass,
every step). The updates are the same; ``benchmarks/pg_update_speed.py`` measures what they save.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable
from typing import Any, overload

import torch
from torch.optim.optimizer import ParamsT

__all__ = [
    "RMSpropTF",
    "clip_grad_norm",
    "clip_grad_norm_tensor",
    "clipped_step",
    "fast_optim_kwargs",
    "fused_adam_kwargs",
    "make_optimizer",
    "optimizer_parameters",
]

_FUSED = (torch.optim.Adam, torch.optim.AdamW)  # fused on the CPU and CUDA since torch 2.4
_TORCH_HAS_CPU_FUSED = tuple(int(part) for part in torch.__version__.split(".")[:2]) >= (2, 4)


class RMSpropTF(torch.optim.Optimizer):
    """RMSprop as TensorFlow 1 computes it, which OpenAI Baselines' A2C and ACKTR settings were tuned with.

    Per parameter: ``ms = alpha * ms + (1 - alpha) * g^2`` with ``ms`` starting at 1, then
    ``buf = momentum * buf + lr * g / sqrt(ms + eps)`` and ``p -= buf``. torch's RMSprop starts ``ms`` at 0
    and adds ``eps`` outside the square root, so its first steps are about ``lr / sqrt(1 - alpha)`` (ten
    times ``lr`` at alpha 0.99) in every parameter, and a parameter with tiny gradients moves by up to
    ``lr`` each step: enough, at Baselines' learning rate of 7e-4, to silence every unit of a small Atari
    network's first layer within the first million frames (``docs/performance.md``). Use it for Baselines'
    settings: ``OptimCls=RMSpropTF, optim_kwargs=dict(alpha=0.99, eps=1e-5)``.
    """

    def __init__(
        self,
        params: ParamsT,  # torch's: tensors, or parameter groups (dicts)
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-10,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
    ) -> None:
        for name, value in (("lr", lr), ("eps", eps), ("momentum", momentum), ("weight_decay", weight_decay)):
            if value < 0:
                raise ValueError(f"RMSpropTF: {name} must be >= 0, got {value}.")
        if not 0 <= alpha < 1:
            raise ValueError(f"RMSpropTF: alpha must be in [0, 1), got {alpha}.")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, momentum=momentum, weight_decay=weight_decay))

    @overload
    def step(self, closure: None = None) -> None: ...

    @overload
    def step(self, closure: Callable[[], float]) -> float: ...

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            grads = [p.grad for p in params]
            if group["weight_decay"]:
                grads = list(torch._foreach_add(grads, params, alpha=group["weight_decay"]))
            states = [self.state[p] for p in params]
            for p, state in zip(params, states):
                if not state:
                    state["step"] = 0
                    state["square_avg"] = torch.ones_like(p, memory_format=torch.preserve_format)
                    if group["momentum"] > 0:
                        state["momentum_buffer"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["step"] += 1
            square_avgs = [state["square_avg"] for state in states]
            torch._foreach_mul_(square_avgs, group["alpha"])
            torch._foreach_addcmul_(square_avgs, grads, grads, value=1 - group["alpha"])
            denominators = torch._foreach_add(square_avgs, group["eps"])
            torch._foreach_sqrt_(denominators)
            if group["momentum"] > 0:
                buffers = [state["momentum_buffer"] for state in states]
                torch._foreach_mul_(buffers, group["momentum"])
                torch._foreach_addcdiv_(buffers, grads, denominators, value=group["lr"])
                torch._foreach_sub_(params, buffers)
            else:
                torch._foreach_addcdiv_(params, grads, denominators, value=-group["lr"])
        return loss


def fused_adam_kwargs(OptimCls: Callable[..., torch.optim.Optimizer], optim_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``optim_kwargs`` plus ``fused=True`` for torch's Adam and AdamW unless they choose an
    implementation (``fused`` or ``foreach``): one kernel for all of a network's tensors (torch >= 2.4,
    on the CPU and CUDA)."""
    if OptimCls not in _FUSED or {"fused", "foreach"} & set(optim_kwargs) or not _TORCH_HAS_CPU_FUSED:
        return optim_kwargs
    return {**optim_kwargs, "fused": True}


def fast_optim_kwargs(
    OptimCls: Callable[..., torch.optim.Optimizer], optim_kwargs: dict[str, Any], device_type: str = "cpu"
) -> dict[str, Any]:
    """``optim_kwargs`` with torch's fastest implementation of ``OptimCls`` for parameters on
    ``device_type``, unless ``optim_kwargs`` chooses one: fused Adam and AdamW, and ``foreach=True``
    for torch's other optimisers that take it (RMSprop, SGD, ...), which on the CPU default to a
    Python loop over the tensors. Other classes, and devices other than the CPU and CUDA, are left as
    given."""
    if device_type not in ("cpu", "cuda") or {"fused", "foreach"} & set(optim_kwargs):
        return optim_kwargs
    if OptimCls in _FUSED and _TORCH_HAS_CPU_FUSED:
        return {**optim_kwargs, "fused": True}
    is_torch_optimizer = OptimCls.__module__.startswith("torch.optim")
    if is_torch_optimizer and "foreach" in inspect.signature(OptimCls).parameters:
        return {**optim_kwargs, "foreach": True}
    return optim_kwargs


def make_optimizer(
    OptimCls: Callable[..., torch.optim.Optimizer],
    parameters: Iterable[torch.Tensor],
    learning_rate: float,
    optim_kwargs: dict[str, Any],
) -> torch.optim.Optimizer:
    """``OptimCls(parameters, lr=learning_rate, **optim_kwargs)`` with :func:`fast_optim_kwargs` for
    the parameters' device."""
    parameters = list(parameters)
    device_type = parameters[0].device.type if parameters else "cpu"
    return OptimCls(parameters, lr=learning_rate, **fast_optim_kwargs(OptimCls, optim_kwargs, device_type))


def optimizer_parameters(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    """The tensors ``optimizer`` steps, in order. Cheaper than ``agent.parameters()``, which walks every
    module of the model again on each call (about 4% of an A2C update on CartPole's two small MLPs)."""
    return [p for group in optimizer.param_groups for p in group["params"]]


# Device types whose tensors sit in host memory: reading the norm there is no transfer and no sync, and
# rescaling only above the limit saves the three small ops of the unconditional scale (about 30 us of a
# small MLP's step). Tests empty it to run the path every other device takes.
HOST_DEVICE_TYPES: tuple[str, ...] = ("cpu",)


def clip_grad_norm_tensor(parameters: Iterable[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Rescale the gradients of ``parameters`` so that their joint 2-norm is at most ``max_norm``, as
    ``torch.nn.utils.clip_grad_norm_`` does, and return the norm before clipping as a 0-dim tensor on the
    gradients' device. On a GPU nothing is read back to the host (a Python comparison of the norm would
    wait for the whole backward pass): the gradients are scaled by ``min(1, max_norm / norm)``, exactly 1
    below the limit. On the CPU they are only touched above the limit. ``max_norm=inf`` never clips."""
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.zeros(())
    grad_norm: torch.Tensor = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
    if math.isinf(max_norm):
        return grad_norm
    if grad_norm.device.type in HOST_DEVICE_TYPES:
        norm = grad_norm.item()
        if norm > max_norm:
            torch._foreach_mul_(grads, max_norm / (norm + 1e-6))
    else:
        torch._foreach_mul_(grads, (max_norm / (grad_norm + 1e-6)).clamp(max=1.0))
    return grad_norm


def clip_grad_norm(parameters: Iterable[torch.Tensor], max_norm: float) -> float:
    """:func:`clip_grad_norm_tensor`, with the norm read back as a float (one host transfer)."""
    return float(clip_grad_norm_tensor(parameters, max_norm))


def clipped_step(
    optimizer: torch.optim.Optimizer,
    loss: torch.Tensor,
    parameters: Iterable[torch.nn.Parameter],
    clip_grad_norm: float,
) -> torch.Tensor:
    """One optimiser step on ``loss`` with the gradient norm of ``parameters`` clipped; returns that
    norm before clipping, a 0-dim tensor on the parameters' device (for logging: see
    :func:`rlrun.algos.opt_info.opt_info_to_host`).

    Only ``parameters`` get gradients: a policy loss that runs through the critics leaves theirs
    alone, and autograd skips computing those (the critics' weight gradients in a policy step).
    """
    parameters = list(parameters)
    optimizer.zero_grad()
    torch.autograd.backward(loss, inputs=parameters)
    grad_norm = clip_grad_norm_tensor(parameters, clip_grad_norm)
    optimizer.step()
    return grad_norm
