"""Which CPUs and GPUs the processes of a run use (rlpyt's module path).

The layouts live in :mod:`rlrun.utils.launching.layout` (``make_affinity`` and the affinity dicts
that runners and samplers read) and rlpyt's string codes in
:mod:`rlrun.utils.launching.affinity_codes`; both are importable from here, as in rlpyt. This module
adds :func:`affinity_for_sampler`, which turns whatever a user passed (None, a dict or a code) into
one complete sampler affinity.
"""

from collections.abc import Mapping
from typing import Any

from rlrun.utils.collections import AttrDict
from rlrun.utils.launching.affinity_codes import (
    affinity_from_code,
    decode_affinity,
    encode_affinity,
    get_n_run_slots,
    prepend_run_slot,
    quick_affinity_code,
    remove_run_slot,
)
from rlrun.utils.launching.layout import (
    Affinity,
    Machine,
    default_affinity,
    int_at_least,
    make_affinity,
    master_threads_beside_workers,
)

__all__ = [
    "Affinity",
    "Machine",
    "make_affinity",
    "default_affinity",
    "master_threads_beside_workers",
    "affinity_for_sampler",
    "encode_affinity",
    "affinity_from_code",
    "decode_affinity",
    "prepend_run_slot",
    "remove_run_slot",
    "get_n_run_slots",
    "quick_affinity_code",
]


def affinity_for_sampler(
    affinity: Mapping[str, Any] | str | None, *, alternating: bool = False, machine: Machine | None = None
) -> AttrDict:
    """A sampler's affinity made complete, for samplers to call in ``initialize``.

    ``None`` gives :func:`default_affinity`; a code string is decoded; a dict is copied with
    ``workers_cpus`` as tuples of ints (rlpyt accepted bare ints) and missing keys filled. A dict
    without ``workers_cpus`` (e.g. ``dict(cuda_idx=0)``) gets one unpinned worker per usable CPU.
    Without ``worker_torch_threads`` it stays None: each worker then runs one torch thread per CPU it
    is pinned to, or one when unpinned (:func:`~rlrun.samplers.parallel.worker.initialize_worker`).
    ``alternating``: the sampler needs two worker sets. Refuses SyncRl lists and async dicts.
    """
    if affinity is None:
        return default_affinity(alternating=alternating, machine=machine)
    if isinstance(affinity, str):
        decoded: Any = affinity_from_code(affinity, machine=machine)
        affinity = decoded
    if not isinstance(affinity, Mapping) or "sampler" in affinity:
        raise ValueError(
            "A sampler takes one affinity dict (workers_cpus, worker_torch_threads, ...). Pass a multi-GPU "
            "run's ranks their own dicts, and an asynchronous run's sampler its affinity['sampler']."
        )
    out = AttrDict(affinity)
    if out.get("workers_cpus") is None:
        out.workers_cpus = default_affinity(alternating=alternating, machine=machine).workers_cpus
        out.setdefault("set_affinity", False)  # pin only CPUs the user named
    else:
        out.workers_cpus = tuple(
            tuple(
                int_at_least("a CPU id in affinity['workers_cpus']", c, 0) for c in ((w,) if isinstance(w, int) else w)
            )
            for w in out.workers_cpus
        )
        if not out.workers_cpus or not all(out.workers_cpus):
            raise ValueError(f"affinity['workers_cpus']={affinity['workers_cpus']!r} needs a CPU for each worker.")
    for key, value in (("set_affinity", True), ("alternating", False), ("cuda_idx", None)):
        out.setdefault(key, value)
    # None (not given): each worker decides, one torch thread per CPU it is pinned to, else one.
    threads = out.get("worker_torch_threads")
    out.worker_torch_threads = None if threads is None else int_at_least("affinity['worker_torch_threads']", threads, 1)
    if alternating and (not out.alternating or len(out.workers_cpus) % 2):
        raise ValueError("This sampler needs an alternating affinity: make_affinity(..., alternating=True).")
    return out
