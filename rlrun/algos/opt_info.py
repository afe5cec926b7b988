"""Per-gradient-step diagnostics kept on the device until the iteration ends.

A ``.item()`` per loss and per gradient norm makes the host wait for the device at every gradient step
(about a dozen waits per SAC step). The algorithms append 0-dim tensors to ``opt_info``'s lists
instead, and :func:`opt_info_to_host` reads them all back with one copy at the end of
``optimize_agent``, so the runner still gets lists of floats, with the same values.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias, cast

import torch

from rlrun.algos.base import OptInfoTuple

__all__ = ["StepValue", "opt_info_to_host"]

# One gradient step's figure in an ``opt_info`` list while the iteration runs: a 0-dim tensor, or a float.
StepValue: TypeAlias = "float | torch.Tensor"


def opt_info_to_host(opt_info: Iterable[list[StepValue]]) -> OptInfoTuple:
    """Replace, in place, every tensor in ``opt_info``'s lists by its float value (a tensor of several
    values, e.g. a step's priorities, by its values in order), and return ``opt_info``.

    The tensors are gathered on one device (a GPU's when any is there; CPU values are copied to it) and
    read with a single ``.tolist()``: one device-to-host transfer per iteration. Floats already in the
    lists (a subclass's ``append_opt_info_`` may append them) stay as they are."""
    tensors = [value for values in opt_info for value in values if isinstance(value, torch.Tensor)]
    if not tensors:
        return cast(OptInfoTuple, opt_info)  # nothing but floats in its lists
    device = next((t.device for t in tensors if t.device.type != "cpu"), tensors[0].device)
    dtype = tensors[0].dtype
    tensors = [t.detach() for t in tensors]
    if all(t.dim() == 0 and t.device == device and t.dtype == dtype for t in tensors):
        host_values: list[float] = torch.stack(tensors).tolist()  # the common case: one op
    else:
        dtype = torch.float64  # exact for float32 and float16 values
        host_values = torch.cat([t.detach().reshape(-1).to(device=device, dtype=dtype) for t in tensors]).tolist()
    position = 0
    for values in opt_info:
        if not any(isinstance(value, torch.Tensor) for value in values):
            continue
        on_host: list[StepValue] = []
        for value in values:
            if isinstance(value, torch.Tensor):
                n = value.numel()
                on_host.extend(host_values[position : position + n])
                position += n
            else:
                on_host.append(value)
        values[:] = on_host
    return cast(OptInfoTuple, opt_info)  # the same tuple, whose lists now hold floats only
