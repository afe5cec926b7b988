"""Helpers for the parallel sampler tests: a check that nothing outlives a test, and sampler builders.

A plain module (not conftest) so test files import it by name; the test directory is on sys.path.
"""

from __future__ import annotations

import multiprocessing.forkserver
import multiprocessing.resource_tracker
import os
import time
from pathlib import Path

import psutil
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.gym import make
from rlrun.samplers.parallel.cpu.sampler import CpuSampler

SHM = Path("/dev/shm")
# Names that multiprocessing (semaphores, shared_memory) and torch (file_system sharing) give /dev/shm entries.
SHM_PREFIXES = ("sem.mp-", "psm_", "mp-", "torch_", "pym-")
CARTPOLE = dict(id="CartPole-v1")


def _shm_entries() -> set[str]:
    if not SHM.is_dir():
        return set()
    return {name for name in os.listdir(SHM) if name.startswith(SHM_PREFIXES)}


def _infrastructure_pids() -> set[int]:
    """multiprocessing's own long-lived helpers (they outlive samplers by design)."""
    pids = set()
    tracker = getattr(multiprocessing.resource_tracker, "_resource_tracker", None)
    if getattr(tracker, "_pid", None):
        pids.add(tracker._pid)
    server = getattr(multiprocessing.forkserver, "_forkserver", None)
    if getattr(server, "_forkserver_pid", None):
        pids.add(server._forkserver_pid)
    return pids


def _new_children(before: set[int]) -> list[psutil.Process]:
    infra = _infrastructure_pids()
    return [p for p in psutil.Process().children(recursive=True) if p.pid not in before and p.pid not in infra]


class LeakCheck:
    """Records child processes and /dev/shm entries; :meth:`assert_clean` fails on anything new."""

    def __init__(self) -> None:
        self.children = {p.pid for p in psutil.Process().children(recursive=True)}
        self.shm = _shm_entries()

    def assert_clean(self) -> None:
        left = _new_children(self.children)
        assert not left, f"child processes left running: {[(p.pid, p.name(), p.status()) for p in left]}"
        # Other programs on this machine (another test run) may create entries meanwhile: give theirs a
        # moment to go, then ignore those a process outside this test's tree still has mapped.
        deadline = time.monotonic() + 1.0
        while (new := _shm_entries() - self.shm) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = new - _mapped_by_other_processes(new)
        assert not left, f"/dev/shm entries left behind: {sorted(left)}"


def _mapped_by_other_processes(names: set[str]) -> set[str]:
    if not names:
        return set()
    ours = {os.getpid()} | {p.pid for p in psutil.Process().children(recursive=True)}
    found = set()
    for pid in psutil.pids():
        if pid in ours:
            continue
        try:
            with open(f"/proc/{pid}/maps") as f:
                maps = f.read()
        except OSError:
            continue
        found |= {name for name in names if f"{SHM}/{name}" in maps}
    return found


def cpu_sampler(EnvCls=make, env_kwargs=None, T=20, B=4, decorrelation=0, **kwargs) -> CpuSampler:
    return CpuSampler(
        EnvCls=EnvCls,
        env_kwargs=CARTPOLE if env_kwargs is None else env_kwargs,
        batch_T=T,
        batch_B=B,
        max_decorrelation_steps=decorrelation,
        **kwargs,
    )


def workers(n: int) -> dict:
    """An affinity asking for ``n`` unpinned workers."""
    return dict(workers_cpus=[[0]] * n, set_affinity=False)


def start(sampler, seed: int = 7, n_workers: int = 2, **kwargs) -> CategoricalPgAgent:
    torch.manual_seed(seed)
    agent = CategoricalPgAgent()
    sampler.initialize(agent, affinity=workers(n_workers), seed=seed, **kwargs)
    return agent
