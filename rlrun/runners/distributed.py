"""The torch.distributed side of SyncRl: which launcher started this process, and the process group.

Two launchers:

- forked ranks (``"fork"`` mode): the script runs once; its process is rank 0 and starts ranks
  1..N-1 itself, N being the length of the affinity list. They meet at a ``TCPStore`` rank 0 opens
  on 127.0.0.1 (a free port the OS picks), so several runs on one machine never collide.
- ``torchrun`` (``"env"`` mode): the launcher starts every rank as its own process and sets
  ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``; the group is
  initialised from those through the launcher's store (as ``init_method="env://"`` would), on one
  machine or across machines.

Every collective (gradient averages, the gather of trajectory infos, the rendezvous itself) waits at
most ``timeout`` seconds, so a rank that is stuck or gone never hangs the others for ever.

Restarts (``torchrun --max-restarts``): the ranks of every attempt meet in a fresh namespace of the
launcher's store (:func:`round_store`). torchrun keeps one store for the whole job, and gloo's
rendezvous finds each peer's address under a fixed key in it; without a fresh namespace, a restarted
rank read the address its killed predecessor had left there and failed with "Connection refused" in
``connectFullMesh``, or waited for a peer that was looking elsewhere (about half of the restarts).
"""

from __future__ import annotations

import datetime
import os
import platform
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
import torch.distributed as dist

__all__ = [
    "TORCHRUN_VARS",
    "launched_by_torchrun",
    "LaunchEnv",
    "launch_env",
    "choose_backend",
    "init_group",
    "launcher_store",
    "round_store",
    "leave_group",
    "gloo_workers_idle",
]

TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
ROUND_PREFIX = "rlrun/sync_rl/"
ROUND_POLL_S = 0.02
GLOO_WORKER_THREAD = "pt_gloo_runloop"  # the name torch gives ProcessGroupGloo's worker threads
FUTEX_SYSCALLS = {"x86_64": "202", "aarch64": "98", "arm64": "98"}  # futex's number in /proc/.../syscall
SETTLE_POLL_S = 0.002
SETTLE_TIMEOUT_S = 2.0


def launched_by_torchrun(environ: Mapping[str, str] | None = None) -> bool:
    """True when a launcher (``torchrun``, or one setting the same variables) started this process."""
    environ = os.environ if environ is None else environ
    return all(name in environ for name in TORCHRUN_VARS)


@dataclass(frozen=True)
class LaunchEnv:
    """This process's place in a launcher-started job: global ``rank`` of ``world_size``, and its
    ``local_rank`` of ``local_world_size`` on this machine."""

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int


def launch_env(environ: Mapping[str, str] | None = None) -> LaunchEnv:
    """Read the launcher's variables; refuses values that do not make a rank of a world."""
    environ = os.environ if environ is None else environ
    try:
        rank, world_size = int(environ["RANK"]), int(environ["WORLD_SIZE"])
        local_rank = int(environ.get("LOCAL_RANK", environ["RANK"]))
        local_world_size = int(environ.get("LOCAL_WORLD_SIZE", environ["WORLD_SIZE"]))
    except (KeyError, ValueError) as e:
        raise RuntimeError(
            f"SyncRl under torchrun needs integer {', '.join(TORCHRUN_VARS)} (and LOCAL_RANK) in the environment: "
            f"{e}. Start the script with `torchrun --nproc_per_node N script.py`."
        ) from e
    if not (0 <= rank < world_size and 0 <= local_rank < local_world_size):
        raise RuntimeError(
            f"The launcher set RANK={rank}, WORLD_SIZE={world_size}, LOCAL_RANK={local_rank}, "
            f"LOCAL_WORLD_SIZE={local_world_size}: a rank must lie in [0, world size)."
        )
    return LaunchEnv(rank, world_size, local_rank, local_world_size)


def choose_backend(cuda_idxs: Sequence[int | None], backend: str | None, gpu_per_local_rank: bool = False) -> str:
    """``backend`` if given, else NCCL when the ranks train on CUDA devices (``cuda_idxs``: each rank's
    affinity's ``cuda_idx``), else gloo.

    ``gpu_per_local_rank``: under torchrun with one dict for all ranks, NCCL may leave ``cuda_idx`` out;
    each rank then takes the GPU of its ``LOCAL_RANK``.
    """
    on_gpu = [cuda_idx is not None or (gpu_per_local_rank and backend == "nccl") for cuda_idx in cuda_idxs]
    if backend is None:
        if any(on_gpu) and not all(on_gpu):
            raise ValueError(
                "SyncRl: some ranks' affinities set cuda_idx and others do not; give every rank a GPU "
                "(NCCL) or none (gloo)."
            )
        return "nccl" if any(on_gpu) else "gloo"
    if backend not in ("gloo", "nccl"):
        raise ValueError(f"SyncRl: backend must be 'gloo' (CPU) or 'nccl' (CUDA), got {backend!r}.")
    if backend == "nccl" and not all(on_gpu):
        raise ValueError(
            "SyncRl: backend='nccl' averages gradients on CUDA devices; give every rank's affinity a cuda_idx "
            "(or use backend='gloo' for CPU training)."
        )
    return backend


def init_group(
    backend: str,
    rank: int,
    world_size: int,
    timeout: float,
    store: dist.Store | None = None,
    cuda_idx: int | None = None,
) -> None:
    """Join the process group through ``store``: rank 0's (forked ranks), or, None, the launcher's
    (``MASTER_ADDR``, ``MASTER_PORT``), in a namespace of this attempt's own (:func:`round_store`).

    ``timeout`` (seconds) bounds the rendezvous and every collective after it. With NCCL the rank's
    device is made current first, as NCCL's object collectives need.
    """
    if not dist.is_available():
        raise RuntimeError("SyncRl needs torch.distributed, which this torch build lacks.")
    if backend == "nccl":
        if not torch.cuda.is_available():
            raise RuntimeError("SyncRl: backend 'nccl' needs CUDA, which this torch build does not see; use gloo.")
        torch.cuda.set_device(cuda_idx if cuda_idx is not None else 0)
    if store is None:
        store = round_store(launcher_store(rank, world_size, timeout), rank, world_size, timeout)
    td = datetime.timedelta(seconds=timeout)
    dist.init_process_group(backend, store=store, rank=rank, world_size=world_size, timeout=td)


def launcher_store(rank: int, world_size: int, timeout: float, environ: Mapping[str, str] | None = None) -> dist.Store:
    """The store a launcher set up at ``MASTER_ADDR:MASTER_PORT``, as ``init_method="env://"`` opens it:
    a client of the launcher's own store when torchrun shares it (``TORCHELASTIC_USE_AGENT_STORE``), else
    hosted by rank 0."""
    environ = os.environ if environ is None else environ
    host, port = environ["MASTER_ADDR"], int(environ["MASTER_PORT"])
    td = datetime.timedelta(seconds=timeout)
    if environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True":
        return dist.TCPStore(host, port, world_size, is_master=False, timeout=td)
    return dist.TCPStore(host, port, world_size, is_master=rank == 0, timeout=td, multi_tenant=True)


def round_store(store: dist.Store, rank: int, world_size: int, timeout: float) -> dist.PrefixStore:
    """A namespace of ``store`` that only this attempt's ranks use, agreed on through ``store``.

    Every process of an earlier attempt has exited before torchrun starts the next, but what they wrote
    stays in its store, so no key shared by all attempts can tell a fresh value from a stale one. So
    each rank writes a random name of its own under its hello key and waits for the answer under that
    name, which no earlier process can have written; rank 0 answers whatever hello it finds (a stale
    one too, harmlessly) with its own random token until each rank confirms under that token. The
    ranks then share ``<prefix><token>/``.
    """
    deadline = time.monotonic() + timeout
    if world_size == 1:
        return dist.PrefixStore(f"{ROUND_PREFIX}{uuid.uuid4().hex}/", store)
    if rank != 0:
        me = uuid.uuid4().hex
        store.set(f"{ROUND_PREFIX}hello/{rank}", me)
        store.wait([f"{ROUND_PREFIX}welcome/{me}"], datetime.timedelta(seconds=timeout))
        token = store.get(f"{ROUND_PREFIX}welcome/{me}").decode()
        store.set(f"{ROUND_PREFIX}{token}/ready/{rank}", "1")
        return dist.PrefixStore(f"{ROUND_PREFIX}{token}/", store)
    token = uuid.uuid4().hex
    answered: dict[int, bytes] = {}
    waiting = set(range(1, world_size))
    while waiting:
        for r in sorted(waiting):
            if store.check([f"{ROUND_PREFIX}{token}/ready/{r}"]):
                waiting.discard(r)
            elif store.check([f"{ROUND_PREFIX}hello/{r}"]):
                hello = store.get(f"{ROUND_PREFIX}hello/{r}")
                if answered.get(r) != hello:
                    store.set(f"{ROUND_PREFIX}welcome/{hello.decode()}", token)
                    answered[r] = hello
        if waiting and time.monotonic() > deadline:
            raise RuntimeError(
                f"SyncRl rank 0: ranks {sorted(waiting)} did not join within {timeout:g} s (the rendezvous timed "
                "out); the launcher's output says why they did not start."
            )
        if waiting:
            time.sleep(ROUND_POLL_S)
    return dist.PrefixStore(f"{ROUND_PREFIX}{token}/", store)


def open_store(world_size: int, timeout: float, port: int | None = None) -> dist.TCPStore:
    """Rank 0's rendezvous store on 127.0.0.1 (``port=None``: any free port), or a rank's client of one."""
    td = datetime.timedelta(seconds=timeout)
    if port is None:
        return dist.TCPStore("127.0.0.1", 0, world_size, is_master=True, timeout=td, wait_for_workers=False)
    return dist.TCPStore("127.0.0.1", port, world_size, is_master=False, timeout=td)


def leave_group(settle_timeout_s: float = SETTLE_TIMEOUT_S) -> bool:
    """Destroy the default process group, then wait (at most ``settle_timeout_s``) until gloo's worker
    threads are idle, so that the process can exit; returns whether they were.

    Why the wait: a gloo worker drops its last reference to a finished collective a moment after the
    caller's ``wait()`` has returned, and dropping it can release Python objects (tensors that Python saw,
    DDP's hooks), which takes the GIL. If the main thread has begun to shut the interpreter down by then,
    that worker thread is killed inside a C++ destructor and the process aborts with "terminate called
    without an active exception" (SIGABRT; torch 2.13 with Python 3.11). ``destroy_process_group()`` does
    not join the workers: DDP keeps the group alive. Without the wait (2026-12-05, 2-core VM), 10% to 27%
    of the runs of a bare two-rank gloo script with DDP aborted so, and 1 of 65 runs of
    ``examples/sync_rl_elastic.py`` beside two busy processes; torchrun took the abort for a failure and
    restarted a job that had finished.
    """
    if dist.is_initialized():
        dist.destroy_process_group()
    deadline = time.monotonic() + settle_timeout_s
    idle_polls = 0
    while time.monotonic() < deadline:
        idle = gloo_workers_idle()
        if idle is None:
            return False  # this system does not show threads' system calls: nothing to wait on
        idle_polls = idle_polls + 1 if idle else 0
        if idle_polls >= 2:
            return True
        time.sleep(SETTLE_POLL_S)  # lets a worker that waits for the GIL take it
    return False


def gloo_workers_idle(task_dir: str = "/proc/self/task") -> bool | None:
    """True when every gloo worker thread of this process waits for work with no time limit (a futex
    wait without a timeout: its condition variable), False while one runs or waits for something else
    (the GIL's waits are timed), None where ``task_dir`` or a thread's ``syscall`` file cannot be read
    (not Linux, or a sandbox that hides them)."""
    futex = FUTEX_SYSCALLS.get(platform.machine())
    try:
        tids = os.listdir(task_dir)
    except OSError:
        return None
    for tid in tids:
        try:
            with open(os.path.join(task_dir, tid, "comm")) as f:
                if f.read().strip() != GLOO_WORKER_THREAD:
                    continue
            with open(os.path.join(task_dir, tid, "syscall")) as f:
                fields = f.read().split()
        except FileNotFoundError:
            continue  # the thread has exited
        except OSError:
            return None
        if futex is None:
            return None  # a machine whose system call numbers this function does not know
        # "<nr> <arg1> ... <arg6> <sp> <pc>", "running", or "-1 <sp> <pc>" outside a system call
        if len(fields) < 5 or fields[0] != futex or fields[4] != "0x0":
            return False
    return True
