"""Pinning the calling process to CPUs, for the runner's master process and sampler workers alike."""

from __future__ import annotations

from collections.abc import Sequence

import psutil

__all__ = ["pin_to_cpus"]


def pin_to_cpus(cpus: Sequence[int] | None, setting: str) -> list[int] | None:
    """Pin this process to ``cpus`` (None leaves it as it is); return the CPUs it may use now.

    Returns None where the OS cannot pin processes (macOS). ``setting`` says where the CPUs came from
    (e.g. ``"affinity['master_cpus'] names CPUs"``); the error for CPUs this process cannot use starts with it.
    """
    process = psutil.Process()
    if not hasattr(process, "cpu_affinity"):
        return None
    if cpus is not None:
        cpus = [int(c) for c in cpus]
        try:
            process.cpu_affinity(cpus)
        except (ValueError, OSError) as e:
            raise ValueError(
                f"{setting} {cpus}, which this process cannot use ({e}). Choose among "
                f"{process.cpu_affinity()}, or set affinity['set_affinity']=False."
            ) from e
    cpus_now: list[int] = process.cpu_affinity()  # psutil has no type stubs
    return cpus_now
