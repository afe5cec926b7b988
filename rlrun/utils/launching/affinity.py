"""Which CPUs and GPUs the processes of a run use: rlpyt's affinity dicts, built from keywords.

Runners and samplers read these dicts: ``master_cpus`` / ``master_torch_threads`` / ``cuda_idx``
for the training process, ``workers_cpus`` (one tuple of CPU ids per sampler worker) and
``worker_torch_threads`` for workers, ``set_affinity`` (False: only the counts matter, nothing is
pinned) and ``alternating``. Asynchronous runs get ``{"optimizer": [...], "sampler": ...}`` and
multi-GPU runs a list with one dict per rank.

Cores are counted ``0 .. n_cpu_core - 1`` and map, in order, onto the CPU ids this process may use
(``os.sched_getaffinity``), so a run restricted to CPUs {4, 5} gets 4 and 5, not 0 and 1. A
hyperthread sibling is core ``c + hyperthread_offset``; the default offset 0 counts every usable
logical CPU as a core of its own. ``encode_affinity`` / ``affinity_from_code`` keep rlpyt's string
codes (``"0slt_8cpu_1gpu"``) for launch scripts that pass them around; prefer keywords otherwise.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlrun.utils.collections import AttrDict

__all__ = [
    "Machine",
    "make_affinity",
    "default_affinity",
    "affinity_for_sampler",
    "encode_affinity",
    "affinity_from_code",
    "decode_affinity",
    "prepend_run_slot",
    "remove_run_slot",
    "get_n_run_slots",
    "quick_affinity_code",
]

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

# Keyword -> rlpyt's three-letter code, in the order rlpyt writes them.
_ABBREV = {
    "n_cpu_core": "cpu",
    "n_gpu": "gpu",
    "contexts_per_gpu": "cxg",
    "gpu_per_run": "gpr",
    "cpu_per_run": "cpr",
    "cpu_per_worker": "cpw",
    "hyperthread_offset": "hto",
    "n_socket": "skt",
    "cpu_reserved": "res",
    "async_sample": "ass",
    "sample_gpu_per_run": "sgr",
    "optim_sample_share_gpu": "oss",
    "alternating": "alt",
    "set_affinity": "saf",
}
_KEYWORD = {abbrev: keyword for keyword, abbrev in _ABBREV.items()}
_FLAGS = ("async_sample", "optim_sample_share_gpu", "alternating", "set_affinity")
_RUN_SLOT = "slt"
# What a code without the part means (hyperthread_offset and cpu_reserved depend on other parts).
_ABSENT = dict(
    contexts_per_gpu=1,
    gpu_per_run=1,
    cpu_per_worker=1,
    n_socket=1,
    async_sample=False,
    sample_gpu_per_run=0,
    optim_sample_share_gpu=False,
    alternating=False,
    set_affinity=True,
)
_TOKEN = re.compile(r"^(\d+)([a-z]{3})$")


@dataclass(frozen=True)
class _Request:
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


def _int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value or value < minimum:
        raise ValueError(f"Affinity: {name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def _resolve(machine: Machine | None, keywords: Mapping[str, Any]) -> _Request:
    """Fill the defaults (reading ``machine``, detected only when a default needs it) and check the request.

    ``keywords`` are make_affinity's layout keywords; missing or None ones take their defaults.
    """

    def get(name: str, default: int, minimum: int) -> int:
        value = keywords.get(name)
        return _int(name, default if value is None else value, minimum)

    if keywords.get("n_cpu_core") is None or keywords.get("n_gpu") is None:
        machine = machine or Machine.current()
    hto = get("hyperthread_offset", 0, 0)
    async_sample = bool(keywords.get("async_sample", False))
    req = _Request(
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


def _check_structure(req: _Request) -> None:
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


def _positions(req: _Request, ranks: range) -> list[Core]:
    """Indices into the usable CPUs of cores ``ranks``: ``(core,)`` or ``(core, sibling)``.

    Cores fill socket 0 first; with siblings at an offset above ``n_cpu_core`` the sockets' first
    cores lie ``max(n_cpu_core, offset) / n_socket`` apart, as Linux numbers them.
    """
    per_socket = req.n_cpu_core // req.n_socket
    stride = max(req.n_cpu_core, req.hyperthread_offset) // req.n_socket
    positions = []
    for k in ranks:
        p = (k // per_socket) * stride + k % per_socket
        positions.append((p, p + req.hyperthread_offset) if req.hyperthread_offset else (p,))
    return positions


def _block(req: _Request, machine: Machine | None, index: int, size: int) -> list[Core]:
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


def _cpu_dict(cores: Sequence[Core], req: _Request, cuda_idx: int | None, reserved: int) -> AttrDict:
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


def _layout(
    req: _Request,
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


def _async_layout(req: _Request, run_slot: int, cores: Callable[..., list[Core]]) -> AttrDict:
    """Optimizers on ``cpu_reserved`` cores each (and their GPUs), the sampler on the rest of the run."""
    opt_gpus: list[int | None]
    if req.n_gpu > 0:
        first = run_slot * (req.gpu_per_run + req.sample_gpus)
        opt_gpus = list(range(first, first + req.gpu_per_run))
        smp_gpus = (
            opt_gpus
            if req.optim_sample_share_gpu
            else list(range(opt_gpus[-1] + 1, opt_gpus[-1] + 1 + req.sample_gpus))
        )
        run_cores = cores(list(dict.fromkeys(opt_gpus + smp_gpus)), run_slot, req.n_cpu_core // req.n_run_slots)
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
    req = _resolve(
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
        run_slot_cpus = listed["run_slot_cpus"] = [_int("a run_slot_cpus entry", c, 0) for c in run_slot_cpus]
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
    return _layout(req, _int("run_slot", run_slot, 0), machine, run_slot_cpus, gpu_cpu_affinity_assignment)


def default_affinity(
    n_worker: int | None = None, *, alternating: bool = False, machine: Machine | None = None
) -> AttrDict:
    """What samplers use for ``affinity=None``: one worker per usable CPU (or ``n_worker``), nothing pinned.

    ``alternating`` doubles the workers into two sets that take turns (AlternatingSampler).
    """
    cpus = (machine or Machine.current()).cpus
    n = len(cpus) if n_worker is None else _int("n_worker", n_worker, 1)
    workers = tuple((cpus[i % len(cpus)],) for i in range(n))
    return AttrDict(
        all_cpus=cpus,
        master_cpus=cpus,
        workers_cpus=workers * 2 if alternating else workers,
        master_torch_threads=len(cpus),
        worker_torch_threads=1,
        cuda_idx=None,
        alternating=bool(alternating),
        set_affinity=False,
    )


def affinity_for_sampler(
    affinity: Mapping[str, Any] | str | None, *, alternating: bool = False, machine: Machine | None = None
) -> AttrDict:
    """A sampler's affinity made complete, for samplers to call in ``initialize``.

    ``None`` gives :func:`default_affinity`; a code string is decoded; a dict is copied with
    ``workers_cpus`` as tuples of ints (rlpyt accepted bare ints) and missing keys filled. A dict
    without ``workers_cpus`` (e.g. ``dict(cuda_idx=0)``) gets one unpinned worker per usable CPU.
    ``alternating``: the sampler needs two worker sets. Refuses SyncRl lists and async dicts.
    """
    if affinity is None:
        return default_affinity(alternating=alternating, machine=machine)
    if isinstance(affinity, str):
        affinity = affinity_from_code(affinity, machine=machine)
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
            tuple(_int("a CPU id in affinity['workers_cpus']", c, 0) for c in ((w,) if isinstance(w, int) else w))
            for w in out.workers_cpus
        )
        if not out.workers_cpus or not all(out.workers_cpus):
            raise ValueError(f"affinity['workers_cpus']={affinity['workers_cpus']!r} needs a CPU for each worker.")
    out.worker_torch_threads = _int("affinity['worker_torch_threads']", out.get("worker_torch_threads", 1), 1)
    for key, value in (("set_affinity", True), ("alternating", False), ("cuda_idx", None)):
        out.setdefault(key, value)
    if alternating and (not out.alternating or len(out.workers_cpus) % 2):
        raise ValueError("This sampler needs an alternating affinity: make_affinity(..., alternating=True).")
    return out


# ------------------------------------------------------------------------------------ string codes


def encode_affinity(
    n_cpu_core: int | None = None,
    n_gpu: int | None = None,
    cpu_reserved: int | None = None,
    contexts_per_gpu: int = 1,
    gpu_per_run: int = 1,
    cpu_per_run: int = 1,
    cpu_per_worker: int = 1,
    async_sample: bool = False,
    sample_gpu_per_run: int = 0,
    optim_sample_share_gpu: bool = False,
    hyperthread_offset: int | None = None,
    n_socket: int | None = None,
    run_slot: int | None = None,
    alternating: bool = False,
    set_affinity: bool = True,
    machine: Machine | None = None,
) -> str:
    """rlpyt's string code for these keywords (``"0slt_8cpu_1gpu_0hto"``); ``affinity_from_code`` reverses it.

    Same keywords and meanings as :func:`make_affinity`; ``None`` counts are read from this machine.
    Checks that the layout is possible, not that this machine holds it (the code may be for another).
    """
    keywords = dict(
        n_cpu_core=n_cpu_core,
        n_gpu=n_gpu,
        cpu_reserved=cpu_reserved,
        contexts_per_gpu=contexts_per_gpu,
        gpu_per_run=gpu_per_run,
        cpu_per_run=cpu_per_run,
        cpu_per_worker=cpu_per_worker,
        async_sample=async_sample,
        sample_gpu_per_run=sample_gpu_per_run,
        optim_sample_share_gpu=optim_sample_share_gpu,
        hyperthread_offset=hyperthread_offset,
        n_socket=n_socket,
        alternating=alternating,
        set_affinity=set_affinity,
    )
    req = _resolve(machine, keywords)
    _layout(req, 0 if run_slot is None else _int("run_slot", run_slot, 0), None)
    # A part is written only where its value differs from what its absence means to the decoder
    # (rlpyt's reading: no "hto" puts siblings at +n_cpu_core; no "res" means 1 when async, else 0).
    absent = dict(_ABSENT, hyperthread_offset=req.n_cpu_core, cpu_reserved=int(req.async_sample))
    parts = [f"{req.n_cpu_core}cpu", f"{req.n_gpu}gpu"]
    for keyword, abbrev in list(_ABBREV.items())[2:]:
        value = getattr(req, keyword)
        # CPU-only codes always carry cpu_per_run, as rlpyt writes them; GPU runs derive it.
        if (req.n_gpu == 0) if keyword == "cpu_per_run" else value != absent[keyword]:
            parts.append(f"{int(value)}{abbrev}")
    code = "_".join(parts)
    return code if run_slot is None else prepend_run_slot(run_slot, code)


def decode_affinity(affinity_code: str) -> dict[str, int]:
    """The code's values by rlpyt's abbreviations (``{"cpu": 8, "gpu": 1, ...}``), without a run slot."""
    values: dict[str, int] = {}
    for part in str(affinity_code).split("_"):
        match = _TOKEN.match(part)
        if match is None or match.group(2) not in _KEYWORD:
            raise ValueError(
                f"Unrecognized part {part!r} in affinity code {affinity_code!r}: each part is a number and one of "
                f"{sorted(_KEYWORD)}. Build codes with encode_affinity(), or use make_affinity() keywords."
            )
        values[match.group(2)] = int(match.group(1))
    return values


def prepend_run_slot(run_slot: int, affinity_code: str) -> str:
    """The code with a run slot in front, as a launcher assigns one per run."""
    return f"{_int('run_slot', run_slot, 0)}{_RUN_SLOT}_{affinity_code}"


def remove_run_slot(run_slot_affinity_code: str) -> tuple[int, str]:
    """``(run_slot, code)`` from ``"3slt_..."``."""
    head, _, rest = str(run_slot_affinity_code).partition("_")
    match = _TOKEN.match(head)
    if match is None or match.group(2) != _RUN_SLOT or not rest:
        raise ValueError(
            f"Affinity code {run_slot_affinity_code!r} does not start with a run slot such as '0slt_'. Add one "
            "with prepend_run_slot(), or pass run_slot to encode_affinity()."
        )
    return int(match.group(1)), rest


def _code_keywords(affinity_code: str) -> tuple[int, dict[str, Any]]:
    """The run slot (0 when the code has none) and the make_affinity keywords of a code."""
    code, run_slot = str(affinity_code), 0
    if code.split("_", 1)[0].endswith(_RUN_SLOT):
        run_slot, code = remove_run_slot(code)
    values = decode_affinity(code)
    if "cpu" not in values or "gpu" not in values:
        raise ValueError(f"Affinity code {affinity_code!r} needs its 'cpu' and 'gpu' parts, e.g. '8cpu_1gpu'.")
    keywords: dict[str, Any] = {_KEYWORD[a]: bool(v) if _KEYWORD[a] in _FLAGS else v for a, v in values.items()}
    keywords.setdefault("hyperthread_offset", keywords["n_cpu_core"])
    return run_slot, keywords


def affinity_from_code(run_slot_affinity_code: str, machine: Machine | None = None) -> Affinity:
    """The affinity a code stands for, on this machine (or ``machine``): make_affinity's, same keywords."""
    run_slot, keywords = _code_keywords(run_slot_affinity_code)
    return make_affinity(run_slot, machine=machine, **keywords)


def get_n_run_slots(affinity_code: str) -> int:
    """How many runs the code's layout holds side by side (run slots ``0 .. n - 1``)."""
    return _resolve(None, _code_keywords(affinity_code)[1]).n_run_slots


def quick_affinity_code(n_parallel: int | None = None, use_gpu: bool = True, machine: Machine | None = None) -> str:
    """A code that splits this machine into ``n_parallel`` equal runs (one per GPU when ``use_gpu``)."""
    machine = machine or Machine.current()
    n_cpu, n_gpu = len(machine.cpus), machine.n_gpu if use_gpu else 0
    if n_gpu > 0:
        n_gpu = n_gpu if n_parallel is None else min(_int("n_parallel", n_parallel, 1), n_gpu)
        return encode_affinity(n_cpu_core=n_cpu // n_gpu * n_gpu, n_gpu=n_gpu, machine=machine)
    if not n_parallel:
        raise ValueError("quick_affinity_code: pass n_parallel > 0 (runs side by side) when no GPU is used.")
    cpu_per_run = n_cpu // min(_int("n_parallel", n_parallel, 1), n_cpu)
    return encode_affinity(
        n_cpu_core=n_cpu // cpu_per_run * cpu_per_run, n_gpu=0, cpu_per_run=cpu_per_run, machine=machine
    )
