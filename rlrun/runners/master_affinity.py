"""Pinning the training (master) process to the CPUs and torch threads an affinity dict names, and its
torch threads beside a parallel sampler's workers when the dict names none."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import psutil
import torch

from rlrun.utils.launching.layout import master_threads_beside_workers
from rlrun.utils.launching.pinning import pin_to_cpus
from rlrun.utils.logging import logger

__all__ = ["check_affinity", "apply_master_affinity", "fit_master_threads_to_workers"]


def check_affinity(affinity: Mapping[str, Any] | None, runner_name: str) -> dict[str, Any]:
    """The affinity as a dict (empty for None); refuses a per-rank list or anything that is not a mapping."""
    if affinity is None:
        return {}
    if not isinstance(affinity, Mapping):
        kind = "a list of per-rank dicts, which is SyncRl's form" if isinstance(affinity, list) else type(affinity)
        raise TypeError(
            f"{runner_name} takes one affinity dict (keys such as master_cpus, master_torch_threads, cuda_idx), "
            f"got {kind}. Pass a dict, e.g. from rlrun.utils.launching.affinity.make_affinity(), or None."
        )
    return dict(affinity)


def apply_master_affinity(
    master_cpus: Sequence[int] | None, master_torch_threads: int | None, set_affinity: bool = True
) -> Callable[[], None]:
    """Pin this process to ``master_cpus`` (unless ``set_affinity`` is False) and set ``master_torch_threads``,
    an affinity dict's keys of those names (None: leave as is).

    Returns a function that puts back the CPU affinity and torch thread count found before, so a
    process can run several trainings one after another without the first one's pinning leaking.
    """
    process = psutil.Process()
    has_cpu_affinity = hasattr(process, "cpu_affinity")  # missing on macOS
    previous_cpus = process.cpu_affinity() if has_cpu_affinity else None
    previous_threads = torch.get_num_threads()

    if master_cpus is not None and set_affinity:
        pin_to_cpus(master_cpus, "affinity['master_cpus'] names CPUs")
    threads = master_torch_threads
    if threads is not None:
        if int(threads) < 1:
            raise ValueError(f"affinity['master_torch_threads'] must be at least 1, got {threads!r}.")
        torch.set_num_threads(int(threads))
    cpus_now = process.cpu_affinity() if has_cpu_affinity else "unavailable on this OS"
    logger.log(f"Runner master CPU affinity: {cpus_now}; torch threads: {torch.get_num_threads()}.")

    def restore() -> None:
        if has_cpu_affinity and previous_cpus is not None:
            process.cpu_affinity(previous_cpus)
        torch.set_num_threads(previous_threads)

    return restore


def fit_master_threads_to_workers(master_torch_threads: int | None, n_worker: int) -> None:
    """Lower torch's threads in this process to the CPUs that ``n_worker`` sampler workers leave (at
    least 1), unless the affinity names ``master_torch_threads`` (not None) or there are no workers.

    The runner calls it once the sampler has started. It never raises torch's own count, which
    follows this process's CPU mask. More threads than free CPUs made a CartPole run with
    CpuSampler 3x slower on a busy machine (docs/parallel_sampling.md, "Sharing a machine").
    """
    if master_torch_threads is not None or n_worker < 1:
        return
    threads = min(torch.get_num_threads(), master_threads_beside_workers(n_worker))
    if threads != torch.get_num_threads():
        torch.set_num_threads(threads)
        logger.log(
            f"Runner master torch threads: {threads}, the CPUs left beside {n_worker} sampler workers "
            "(name affinity['master_torch_threads'] to choose another count)."
        )
