"""Laying out a run's processes on CPUs and GPUs: rlpyt's affinity dicts, built from keywords.

Runners and samplers read these dicts: ``master_cpus`` / ``master_torch_threads`` / ``cuda_idx``
for the training process, ``workers_cpus`` (one tuple of CPU ids per sampler worker) and
``worker_torch_threads`` for workers, ``set_affinity`` (False: only the counts matter, nothing is
pinned) and ``alternating``. Asynchronous runs get ``{"optimizer": [...], "sampler": ...}`` and
multi-GPU runs a list with one dict per rank.

Cores are counted ``0 .. n_cpu_core - 1`` and map, in order, onto the CPU ids this process may use
(``os.sched_getaffinity``), so a run restricted to CPUs {4, 5} gets 4 and 5, not 0 and 1. A
hyperthread sibling is core ``c + hyperthread_offset``; the default offset 0 counts every usable
logical CPU as a core of its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlrun.utils.collections import AttrDict

__all__ = ["Affinity", "Machine", "make_affinity", "default_affinity", "master_threads_beside_workers"]

Affinity = AttrDict | list[AttrDict]
Core = tuple[int, ...]  # a core's CPU id, then its hyperthread sibling's if any


@dataclass(frozen=True)
class Machine:
    """The hardware an affinity is laid out on: the CPU ids a process may use and the CUDA devices.

    ``Machine.current()`` describes this process; pass another to lay out a run for another host.
    """

    cpus: tuple[int, ...]
    n_gpu: int = 0

    def __post_init__(self) -> None:
        cpus = tuple(sorted({int(c) for c in self.cpus}))
        if not cpus or cpus[0] < 0 or int(self.n_gpu) < 0:
            raise ValueError(f"Machine needs CPU ids >= 0 (at least one) and n_gpu >= 0, got {self!r}.")
        object.__setattr__(self, "cpus", cpus)
        object.__setattr__(self, "n_gpu", int(self.n_gpu))

    @classmethod
    def current(cls) -> Machine:
        """This process: its usable CPUs (its affinity mask, not the host's count) and torch's CUDA count."""
        if hasattr(os, "sched_getaffinity"):
            cpus = tuple(os.sched_getaffinity(0))
        else:  # macOS, Windows
            cpus = tuple(range(os.cpu_count() or 1))
        import torch  # here, so that launch scripts which only write codes need not import it

        # device_count() does not initialise CUDA, so workers forked later can still use it.
        return cls(cpus, torch.cuda.device_count())


# ---------------------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class LayoutRequest:
    """Every layout keyword resolved to a concrete value."""

    n_cpu_core: int
    n_gpu: int
    contexts_per_gpu: int
    gpu_per_run: int
    cpu_per_run: int
    cpu_per_worker: int
    hyperthread_offset: int
    n_socket: int
    cpu_reserved: int
    async_sample: bool
    sample_gpu_per_run: int
    optim_sample_share_gpu: bool
    alternating: bool
    set_affinity: bool

    @property
    def sample_gpus(self) -> int:
        """GPUs per run used only by an async sampler (none when it shares the optimizer's)."""
        return 0 if self.optim_sample_share_gpu else self.sample_gpu_per_run

    @property
    def n_run_slots(self) -> int:
        if self.async_sample and self.n_gpu > 0:
            return self.n_gpu // (self.gpu_per_run + self.sample_gpus)
        if self.n_gpu > 0:
            return self.n_gpu * self.contexts_per_gpu // self.gpu_per_run
        return self.n_cpu_core // self.cpu_per_run


def int_at_least(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value or value < minimum:
        raise ValueError(f"Affinity: {name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def resolve_request(machine: Machine | None, keywords: Mapping[str, Any]) -> LayoutRequest:
    """Fill the defaults (reading ``machine``, detected only when a default needs it) and check the request.

    ``keywords`` are make_affinity's layout keywords; missing or None ones take their defaults.
    """

    def get(name: str, default: int, minimum: int) -> int:
        value = keywords.get(name)
        return int_at_least(name, default if value is None else value, minimum)

    if keywords.get("n_cpu_core") is None or keywords.get("n_gpu") is None:
        machine = machine or Machine.current()
    hto = get("hyperthread_offset", 0, 0)
    async_sample = bool(keywords.get("async_sample", False))
    req = LayoutRequest(
        # None: every usable CPU, or with siblings the cores whose sibling exists
        n_cpu_core=get("n_cpu_core", len(machine.cpus) - hto if machine else 0, 1),
        n_gpu=get("n_gpu", machine.n_gpu if machine else 0, 0),
        contexts_per_gpu=get("contexts_per_gpu", 1, 1),
        gpu_per_run=get("gpu_per_run", 1, 1),
        cpu_per_run=get("cpu_per_run", 1, 1),
        cpu_per_worker=get("cpu_per_worker", 1, 1),
        hyperthread_offset=hto,
        n_socket=get("n_socket", 1, 1),
        cpu_reserved=get("cpu_reserved", int(async_sample), 0),  # async: one core per optimizer
        async_sample=async_sample,
        sample_gpu_per_run=get("sample_gpu_per_run", 0, 0),
        optim_sample_share_gpu=bool(keywords.get("optim_sample_share_gpu", False)),
        alternating=bool(keywords.get("alternating", False)),
        set_affinity=bool(keywords.get("set_affinity", True)),
    )
    _check_structure(req)
    return req


def _check_structure(req: LayoutRequest) -> None:
    """Refuse requests no machine could satisfy, naming the keyword to change."""
    hto, n, n_ctx = req.hyperthread_offset, req.n_cpu_core, req.n_gpu * req.contexts_per_gpu
    sample_gpu = bool(req.sample_gpu_per_run or req.optim_sample_share_gpu)
    checks = [
        (
            0 < hto < n,
            f"hyperthread_offset={hto} is below n_cpu_core={n}, so cores and siblings would overlap. Siblings of "
            f"cores 0..{n - 1} start at an offset >= {n} (often the physical core count); 0 counts every "
            "logical CPU as a core.",
        ),
        (
            bool(n % req.n_socket or max(n, hto) % req.n_socket),
            f"n_socket={req.n_socket} must divide n_cpu_core={n} (and hyperthread_offset={hto}).",
        ),
        (sample_gpu and not req.async_sample, "sample_gpu_per_run and optim_sample_share_gpu need async_sample=True."),
        (req.async_sample and req.cpu_reserved < 1, "async_sample needs cpu_reserved >= 1 (optimizer cores)."),
        (req.gpu_per_run > 1 and req.contexts_per_gpu > 1, "gpu_per_run > 1 excludes contexts_per_gpu > 1."),
        (
            req.n_gpu == 0 and (req.gpu_per_run > 1 or sample_gpu),
            "gpu_per_run > 1, sample_gpu_per_run and optim_sample_share_gpu need GPUs, but n_gpu=0.",
        ),
        (
            req.n_gpu == 0 and req.cpu_per_run > n,
            f"cpu_per_run={req.cpu_per_run} exceeds n_cpu_core={n}; pass cpu_per_run <= {n}.",
        ),
        (
            req.n_gpu > 0 and req.n_run_slots < 1,
            f"n_gpu={req.n_gpu} is too few for one run of gpu_per_run={req.gpu_per_run} plus "
            f"sample_gpu_per_run={req.sample_gpu_per_run} GPUs.",
        ),
        (
            req.n_gpu > 0 and n < n_ctx,
            f"n_cpu_core={n} is fewer than the {n_ctx} GPU contexts (n_gpu * contexts_per_gpu); each needs a core.",
        ),
    ]
    for failed, message in checks:
        if failed:
            raise ValueError(message)


# ------------------------------------------------------------------------------------------ layout


def _positions(req: LayoutRequest, ranks: range) -> list[Core]:
    """Indices into the usable CPUs of cores ``ranks``: ``(core,)`` or ``(core, sibling)``.

    Cores fill socket 0 first; with siblings at an offset above ``n_cpu_core`` the sockets' first
    cores lie ``max(n_cpu_core, offset) / n_socket`` apart, as Linux numbers them.
    """
    per_socket = req.n_cpu_core // req.n_socket
    stride = max(req.n_cpu_core, req.hyperthread_offset) // req.n_socket
    positions: list[Core] = []
    for k in ranks:
        p = (k // per_socket) * stride + k % per_socket
        positions.append((p, p + req.hyperthread_offset) if req.hyperthread_offset else (p,))
    return positions


def _block(req: LayoutRequest, machine: Machine | None, index: int, size: int) -> list[Core]:
    """Cores ``index * size ..`` (``size`` of them) as CPU ids of ``machine`` (positions when it is None)."""
    cores = _positions(req, range(index * size, (index + 1) * size))
    n_needed = max(_positions(req, range(req.n_cpu_core - 1, req.n_cpu_core))[0]) + 1
    if machine is None or (n_needed > len(machine.cpus) and not req.set_affinity):
        return cores  # labels only: nothing gets pinned, so the ids need not exist
    if n_needed > len(machine.cpus):
        fits = len(machine.cpus) - req.hyperthread_offset
        fix = f"Pass n_cpu_core <= {fits} (None uses them all)" if fits > 0 else "Pass hyperthread_offset=0"
        siblings = f" with siblings at +{req.hyperthread_offset}" if req.hyperthread_offset else ""
        raise ValueError(
            f"The affinity asks for n_cpu_core={req.n_cpu_core}{siblings}, {n_needed} CPUs, but this process may "
            f"use {len(machine.cpus)}: {list(machine.cpus)}. {fix}, or set_affinity=False to size workers "
            "without pinning them."
        )
    return [tuple(machine.cpus[p] for p in core) for core in cores]


def _flat(cores: Sequence[Core]) -> tuple[int, ...]:
    """The cores' CPUs, then their siblings' (rlpyt's order)."""
    return tuple(c[0] for c in cores) + tuple(s for c in cores for s in c[1:])


def _cpu_dict(cores: Sequence[Core], req: LayoutRequest, cuda_idx: int | None, reserved: int) -> AttrDict:
    """A run's (or a sampler's) dict: the master on all ``cores``, workers on those after ``reserved``."""
    cpw = req.cpu_per_worker
    n_worker = (len(cores) - reserved) // cpw
    if n_worker < 1:
        raise ValueError(
            f"No sampler worker fits: the run has {len(cores)} core(s), {reserved} reserved, and cpu_per_worker="
            f"{cpw}. Give the run more cores (n_cpu_core, cpu_per_run) or lower cpu_per_worker / cpu_reserved."
        )
    groups = [cores[reserved + i * cpw : reserved + (i + 1) * cpw] for i in range(n_worker)]
    if not req.alternating:
        workers = tuple(_flat(g) for g in groups)
    elif any(len(c) > 1 for c in cores):  # two sets that take turns: cores first, then their siblings
        workers = tuple(_flat([c[:1] for c in g]) for g in groups) + tuple(_flat([c[1:] for c in g]) for g in groups)
    else:  # no siblings: both sets share the cores
        workers = tuple(_flat(g) for g in groups) * 2
    return AttrDict(
        all_cpus=_flat(cores),
        master_cpus=_flat(cores),
        workers_cpus=workers,
        master_torch_threads=len(cores),
        worker_torch_threads=cpw,
        cuda_idx=cuda_idx,
        alternating=req.alternating,
        set_affinity=req.set_affinity,
    )


def lay_out(
    req: LayoutRequest,
    run_slot: int,
    machine: Machine | None,
    run_slot_cpus: Sequence[int] | None = None,
    gpu_cpus: Mapping[int, Sequence[int]] | None = None,
) -> Affinity:
    """The affinity of ``run_slot``; with ``machine`` None, positions stand in for CPU ids (checks only)."""
    if run_slot >= req.n_run_slots:
        rule = (
            "n_gpu // (gpu_per_run + sample_gpu_per_run)"
            if req.async_sample and req.n_gpu
            else "n_gpu * contexts_per_gpu // gpu_per_run"
            if req.n_gpu
            else "n_cpu_core // cpu_per_run"
        )
        raise ValueError(
            f"run_slot={run_slot} does not exist: this layout has {req.n_run_slots} run slot(s) ({rule}). "
            f"Pass run_slot < {req.n_run_slots}."
        )
    if machine is not None and req.n_gpu > machine.n_gpu:
        raise ValueError(
            f"n_gpu={req.n_gpu}, but torch sees {machine.n_gpu} CUDA device(s) here. Pass n_gpu={machine.n_gpu} "
            "(or None), or machine=Machine(...) to lay out a run for another host."
        )

    def cores(gpus: Sequence[int], index: int, size: int, n_split: int = 1) -> list[Core]:
        """The run's cores: listed by the user, or block ``index`` of ``size`` cores."""
        if run_slot_cpus is not None:
            return [(c,) for c in run_slot_cpus]
        if gpu_cpus is None:
            return _block(req, machine, index, size)
        missing = [g for g in gpus if g not in gpu_cpus]
        if missing:
            raise ValueError(f"gpu_cpu_affinity_assignment lists no CPUs for GPU(s) {missing}; add them.")
        listed = list(dict.fromkeys(int(c) for g in gpus for c in gpu_cpus[g]))
        part = len(listed) // n_split
        return [(c,) for c in listed[(index % n_split) * part : (index % n_split + 1) * part]]

    if req.async_sample:
        return _async_layout(req, run_slot, cores)
    if req.n_gpu == 0:
        return _cpu_dict(cores([], run_slot, req.cpu_per_run), req, None, req.cpu_reserved)
    cpu_per_context = req.n_cpu_core // (req.n_gpu * req.contexts_per_gpu)

    def gpu_run(slot: int) -> AttrDict:
        cuda_idx, context = slot % req.n_gpu, slot // req.n_gpu  # contexts spread over GPUs first
        run_cores = cores([cuda_idx], cuda_idx * req.contexts_per_gpu + context, cpu_per_context, req.contexts_per_gpu)
        return _cpu_dict(run_cores, req, cuda_idx, req.cpu_reserved)

    if req.gpu_per_run == 1:
        return gpu_run(run_slot)
    if run_slot_cpus is not None:
        raise ValueError("run_slot_cpus names one process group; for gpu_per_run > 1 use gpu_cpu_affinity_assignment.")
    return [gpu_run(s) for s in range(run_slot * req.gpu_per_run, (run_slot + 1) * req.gpu_per_run)]


def _async_layout(req: LayoutRequest, run_slot: int, cores: Callable[..., list[Core]]) -> AttrDict:
    """Optimizers on ``cpu_reserved`` cores each (and their GPUs), the sampler on the rest of the run."""
    opt_gpus: list[int | None]
    if req.n_gpu > 0:
        first = run_slot * (req.gpu_per_run + req.sample_gpus)
        gpus = list(range(first, first + req.gpu_per_run))
        smp_gpus = gpus if req.optim_sample_share_gpu else list(range(gpus[-1] + 1, gpus[-1] + 1 + req.sample_gpus))
        run_cores = cores(list(dict.fromkeys(gpus + smp_gpus)), run_slot, req.n_cpu_core // req.n_run_slots)
        opt_gpus = list(gpus)
    else:  # CPU only: one optimizer without a GPU
        opt_gpus, smp_gpus = [None], []
        run_cores = cores([], run_slot, req.cpu_per_run)
    res = req.cpu_reserved
    n_opt = res * len(opt_gpus)
    if len(run_cores) <= n_opt:
        raise ValueError(
            f"The run has {len(run_cores)} core(s) and its {len(opt_gpus)} optimizer(s) reserve {n_opt} "
            "(cpu_reserved each), leaving none to sample. Give the run more cores or lower cpu_reserved."
        )
    optimizer = [
        AttrDict(
            cpus=_flat(run_cores[i * res : (i + 1) * res]), cuda_idx=g, torch_threads=res, set_affinity=req.set_affinity
        )
        for i, g in enumerate(opt_gpus)
    ]
    smp_cores = run_cores[n_opt:]
    if smp_gpus:  # one action-serving sampler per GPU, each on its share of the cores
        size = len(smp_cores) // len(smp_gpus)
        sampler: Any = [_cpu_dict(smp_cores[j * size : (j + 1) * size], req, g, 0) for j, g in enumerate(smp_gpus)]
    else:
        sampler = _cpu_dict(smp_cores, req, None, 0)
    return AttrDict(all_cpus=_flat(run_cores), optimizer=optimizer, sampler=sampler, set_affinity=req.set_affinity)


# -------------------------------------------------------------------------------------------- API


def make_affinity(
    run_slot: int = 0,
    *,
    n_cpu_core: int | None = None,
    n_gpu: int | None = None,
    contexts_per_gpu: int = 1,
    gpu_per_run: int = 1,
    cpu_per_run: int = 1,
    cpu_per_worker: int = 1,
    async_sample: bool = False,
    sample_gpu_per_run: int = 0,
    optim_sample_share_gpu: bool = False,
    hyperthread_offset: int | None = None,
    n_socket: int | None = None,
    run_slot_cpus: Sequence[int] | None = None,
    gpu_cpu_affinity_assignment: Mapping[int, Sequence[int]] | None = None,
    set_affinity: bool = True,
    alternating: bool = False,
    cpu_reserved: int | None = None,
    machine: Machine | None = None,
) -> Affinity:
    """The affinity of run ``run_slot`` among the runs that share this machine (rlpyt's keywords).

    - CPU only (``n_gpu=0``): runs of ``cpu_per_run`` cores (rlpyt's default 1: pass
      ``cpu_per_run=n_cpu_core`` for one run on every core), a worker per ``cpu_per_worker`` cores.
    - GPU: the cores split evenly over the ``n_gpu * contexts_per_gpu`` runs; ``cuda_idx`` is the
      run's GPU. ``gpu_per_run > 1`` gives a list with one dict per rank.
    - ``async_sample``: ``{"optimizer": [dict(cpus, cuda_idx, torch_threads)], "sampler": dict}``; each
      optimizer takes ``cpu_reserved`` (default 1) cores, the sampler the rest. With
      ``sample_gpu_per_run`` or ``optim_sample_share_gpu`` the sampler is a list, a dict per GPU.
    - ``run_slot_cpus`` (CPU ids) replaces the run's computed cores; ``gpu_cpu_affinity_assignment``
      (GPU index -> CPU ids, e.g. its NUMA node) replaces the even split of cores over GPUs.

    ``n_cpu_core=None`` means every CPU this process may use, ``n_gpu=None`` torch's CUDA device count.
    ``set_affinity=False`` keeps the layout (worker count, torch threads) but pins nothing.
    """
    machine = machine or Machine.current()
    req = resolve_request(
        machine,
        dict(
            n_cpu_core=n_cpu_core,
            n_gpu=n_gpu,
            contexts_per_gpu=contexts_per_gpu,
            gpu_per_run=gpu_per_run,
            cpu_per_run=cpu_per_run,
            cpu_per_worker=cpu_per_worker,
            async_sample=async_sample,
            sample_gpu_per_run=sample_gpu_per_run,
            optim_sample_share_gpu=optim_sample_share_gpu,
            hyperthread_offset=hyperthread_offset,
            n_socket=n_socket,
            set_affinity=set_affinity,
            alternating=alternating,
            cpu_reserved=cpu_reserved,
        ),
    )
    listed: dict[str, Sequence[int]] = {}
    if run_slot_cpus is not None:
        run_slot_cpus = listed["run_slot_cpus"] = [int_at_least("a run_slot_cpus entry", c, 0) for c in run_slot_cpus]
    if gpu_cpu_affinity_assignment is not None:
        if run_slot_cpus is not None or req.n_gpu == 0:
            raise ValueError("gpu_cpu_affinity_assignment needs n_gpu > 0 and excludes run_slot_cpus.")
        listed.update({f"gpu_cpu_affinity_assignment[{g}]": cpus for g, cpus in gpu_cpu_affinity_assignment.items()})
    for name, cpus in listed.items():
        unusable = sorted({int(c) for c in cpus} - set(machine.cpus)) if req.set_affinity else []
        if not cpus or unusable:
            raise ValueError(
                f"{name} must list CPUs this process may use ({list(machine.cpus)}); got {list(cpus)}. "
                "Pass set_affinity=False to use the list only as labels."
            )
    return lay_out(req, int_at_least("run_slot", run_slot, 0), machine, run_slot_cpus, gpu_cpu_affinity_assignment)


def master_threads_beside_workers(n_worker: int, machine: Machine | None = None) -> int:
    """Torch threads for the training process beside ``n_worker`` sampler workers: the usable CPUs
    they leave, at least 1.

    More would oversubscribe the CPUs: on a busy machine each parallel op then waits at OpenMP's
    barrier for a thread that other processes keep off the CPUs (docs/parallel_sampling.md,
    "Sharing a machine", measures it).
    """
    cpus = (machine or Machine.current()).cpus
    return max(1, len(cpus) - int_at_least("n_worker", n_worker, 0))


def default_affinity(
    n_worker: int | None = None, *, alternating: bool = False, machine: Machine | None = None
) -> AttrDict:
    """What samplers use for ``affinity=None``: one worker per usable CPU (or ``n_worker``), nothing pinned.

    ``alternating`` doubles the workers into two sets that take turns (AlternatingSampler).
    ``master_torch_threads`` is :func:`master_threads_beside_workers` of all the workers listed: 1
    when they fill the CPUs, as the runner uses when its affinity names no count.
    """
    machine = machine or Machine.current()
    cpus = machine.cpus
    n = len(cpus) if n_worker is None else int_at_least("n_worker", n_worker, 1)
    workers = tuple((cpus[i % len(cpus)],) for i in range(n))
    workers_cpus = workers * 2 if alternating else workers
    return AttrDict(
        all_cpus=cpus,
        master_cpus=cpus,
        workers_cpus=workers_cpus,
        master_torch_threads=master_threads_beside_workers(len(workers_cpus), machine),
        worker_torch_threads=1,
        cuda_idx=None,
        alternating=bool(alternating),
        set_affinity=False,
    )
