"""``rlrun doctor``: what a user needs to know about this machine before a long run.

Each check prints one line, ``ok``, ``warn`` or ``fail``, with what it found and, when it is not ok,
what to do. Nothing here changes the machine. The exit status is 1 when a check failed, else 0.
"""

from __future__ import annotations

import argparse
import importlib
import multiprocessing
import os
import platform
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

__all__ = ["Check", "run_checks", "main", "config_memory_needs"]

GIB = 1024**3


@dataclass(frozen=True)
class Check:
    """One finding: ``status`` is ``"ok"``, ``"warn"`` or ``"fail"``."""

    name: str
    status: str
    detail: str


def _version(module: str) -> str | None:
    try:
        importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a broken install is a finding, not a crash
        return None
    try:
        return metadata.version(module)  # the installed distribution's version, whether or not it sets __version__
    except metadata.PackageNotFoundError:  # importable from a path (PYTHONPATH, a checkout), not installed
        return "installed"


def check_python() -> Check:
    ok = sys.version_info >= (3, 10)
    detail = f"Python {platform.python_version()} on {platform.system()} {platform.machine()}"
    return Check("python", "ok" if ok else "fail", detail if ok else detail + "; rlrun needs Python >= 3.10")


def _nvidia_driver_present() -> bool:
    return os.path.exists("/proc/driver/nvidia/version") or shutil.which("nvidia-smi") is not None


def check_torch() -> list[Check]:
    import torch

    build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "CPU-only build"
    checks = [Check("torch", "ok", f"torch {torch.__version__} ({build}), {torch.get_num_threads()} threads")]
    if torch.cuda.is_available():
        try:
            names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
            x = torch.ones(256, 256, device="cuda:0")
            float((x @ x).sum())  # a real kernel, not just a visible device
            checks.append(Check("gpu", "ok", f"{len(names)} usable: {', '.join(names)}"))
        except Exception as error:  # noqa: BLE001
            checks.append(Check("gpu", "fail", f"CUDA is visible but a test kernel failed: {error}"))
    elif _nvidia_driver_present() and not torch.version.cuda:
        checks.append(
            Check(
                "gpu",
                "warn",
                "an NVIDIA driver is present but this torch is a CPU-only build, so runs will not use the GPU; "
                "install a CUDA build (see docs/installation.md, linux_cuda12.yml)",
            )
        )
    elif torch.version.cuda:
        checks.append(Check("gpu", "warn", "a CUDA build of torch, but no usable GPU is visible (driver? CUDA_VISIBLE_DEVICES?)"))  # fmt: skip
    else:
        checks.append(Check("gpu", "ok", "none (CPU-only build; cuda_idx must stay None)"))
    return checks


def check_packages() -> list[Check]:
    found = {name: _version(name) for name in ("numpy", "gymnasium", "psutil")}
    missing = [name for name, version in found.items() if version is None]
    detail = ", ".join(f"{name} {version}" for name, version in found.items() if version)
    checks = [Check("core packages", "fail" if missing else "ok", detail + (f"; missing {missing}" if missing else ""))]
    for name, extra in (("tensorboard", "tensorboard"), ("matplotlib", "plotting")):
        version = _version(name)
        if version:
            checks.append(Check(name, "ok", f"{name} {version}"))
        else:
            checks.append(Check(name, "warn", f"not installed: pip install rlrun[{extra}]"))
    return checks


def check_atari() -> Check:
    version = _version("ale_py")
    if version is None:
        if _version("atari_py"):
            return Check(
                "atari", "warn", "atari-py only (its ROMs are usually missing); pip install rlrun[atari] for ale-py"
            )
        return Check("atari", "warn", "ale-py not installed: pip install rlrun[atari] (its wheel bundles the ROMs)")
    try:
        from ale_py import roms

        path = roms.get_rom_path("pong")
        n_roms = len(roms.get_all_rom_ids()) if hasattr(roms, "get_all_rom_ids") else None
    except Exception as error:  # noqa: BLE001
        return Check("atari", "fail", f"ale-py {version} is installed but its ROMs cannot be found: {error}")
    if path is None or not os.path.exists(str(path)):
        return Check("atari", "fail", f"ale-py {version} has no Pong ROM; reinstall ale-py")
    count = f", {n_roms} ROMs" if n_roms is not None else ""
    return Check("atari", "ok", f"ale-py {version}{count} (Pong found)")


def check_mujoco() -> Check:
    version = _version("mujoco")
    if version is None:
        return Check("mujoco", "warn", "not installed: pip install rlrun[mujoco] for MuJoCo tasks")
    try:
        import gymnasium

        env = gymnasium.make("HalfCheetah-v5")
        env.reset(seed=0)
        env.close()
    except Exception as error:  # noqa: BLE001
        return Check("mujoco", "fail", f"mujoco {version}, but Gymnasium's HalfCheetah-v5 does not start: {error}")
    return Check("mujoco", "ok", f"mujoco {version} (HalfCheetah-v5 starts)")


def check_processes() -> list[Check]:
    methods = multiprocessing.get_all_start_methods()
    checks = [Check("start methods", "ok", f"{', '.join(methods)}; default {multiprocessing.get_start_method(allow_none=True) or methods[0]}")]  # fmt: skip
    cores = os.cpu_count() or 1
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = cores
    try:
        import psutil

        psutil.Process().cpu_affinity()
        affinity = "CPU pinning supported"
    except Exception:  # noqa: BLE001
        affinity = "CPU pinning not supported here (workers run unpinned)"
    status = "ok" if usable > 1 else "warn"
    note = "" if usable > 1 else "; parallel samplers will not be faster than SerialSampler"
    checks.append(Check("cores", status, f"{cores} cores, {usable} usable by this process; {affinity}{note}"))
    return checks


def check_memory(need_shm: int = 0, need_ram: int = 0) -> list[Check]:
    import psutil

    checks = []
    ram = psutil.virtual_memory()
    ram_detail = f"{ram.total / GIB:.1f} GiB, {ram.available / GIB:.1f} GiB available"
    if need_ram:
        ram_detail += f"; the config needs about {need_ram / GIB:.2f} GiB"
    checks.append(Check("memory", "fail" if need_ram > ram.available else "ok", ram_detail))
    if os.path.isdir("/dev/shm"):
        usage = shutil.disk_usage("/dev/shm")
        detail = f"/dev/shm {usage.total / GIB:.1f} GiB, {usage.free / GIB:.1f} GiB free"
        status = "ok"
        if need_shm:
            detail += f"; the config's shared sample buffers need about {need_shm / GIB:.3f} GiB"
            if need_shm > usage.free:
                status = "fail"
                detail += " (too little: enlarge /dev/shm, e.g. docker run --shm-size, or shrink batch_B)"
        checks.append(Check("shared memory", status, detail))
    return checks


def config_memory_needs(spec: str) -> tuple[int, int, str]:
    """``(shared bytes, RAM bytes, what was counted)`` for a ready-made config ``"MODULE:NAME"``
    (``MODULE`` under ``rlrun.experiments.configs``, e.g. ``atari.dqn.atari_dqn:dqn``).

    Estimated from one env built with the config's ``env`` section: the sampler's ``[T, B]``
    observations, actions, rewards and dones (in shared memory for the parallel samplers), and a
    replay of ``replay_size`` steps (in the training process's memory; Atari replays store each frame
    once). Agent outputs and small fields are left out, so read it as a lower bound.
    """
    module_name, _, name = spec.partition(":")
    module = importlib.import_module(f"rlrun.experiments.configs.{module_name}")
    config = module.configs[name] if name else module.config
    env_kwargs = dict(config.get("env", {}))
    if "game" in env_kwargs:
        from rlrun.envs.atari.atari_env import AtariEnv

        env: Any = AtariEnv(**env_kwargs)
    else:
        from rlrun.envs.gym import make

        env = make(**env_kwargs)
    observation = env.reset()
    action = env.action_space.sample()
    import numpy as np

    step_bytes = np.asarray(observation).nbytes + np.asarray(action).nbytes + 4 + 1
    env.close()
    sampler = config.get("sampler", {})
    shared = int(sampler.get("batch_T", 1)) * int(sampler.get("batch_B", 1)) * step_bytes
    replay_size = int(config.get("algo", {}).get("replay_size", 0))
    replay_step = step_bytes
    if "game" in env_kwargs:  # frame replay: one frame of the stack per step
        obs = np.asarray(observation)
        replay_step = step_bytes - obs.nbytes + obs.nbytes // max(1, obs.shape[0])
    ram = replay_size * replay_step
    counted = f"{spec}: sampler batch {shared / 1e6:.1f} MB shared" + (
        f", replay of {replay_size} steps {ram / GIB:.2f} GiB" if replay_size else ""
    )
    return shared, ram, counted


def run_checks(config: str | None = None) -> list[Check]:
    checks = [check_python(), *check_torch(), *check_packages(), check_atari(), check_mujoco(), *check_processes()]
    need_shm = need_ram = 0
    if config:
        try:
            need_shm, need_ram, counted = config_memory_needs(config)
            checks.append(Check("config", "ok", counted))
        except Exception as error:  # noqa: BLE001
            checks.append(Check("config", "fail", f"{config}: {type(error).__name__}: {error}"))
    checks.extend(check_memory(need_shm, need_ram))
    return checks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        help="a ready-made config to size memory for, MODULE:NAME under rlrun.experiments.configs "
        "(e.g. atari.dqn.atari_dqn:dqn)",
    )


def main(args: argparse.Namespace, write: Callable[[str], object] = print) -> int:
    checks = run_checks(args.config)
    width = max(len(c.name) for c in checks)
    for check in checks:
        write(f"{check.status:4}  {check.name:<{width}}  {check.detail}")
    failed = [c.name for c in checks if c.status == "fail"]
    write(f"\n{len(failed)} failed: {', '.join(failed)}" if failed else "\nall checks passed (warnings are advice)")
    return 1 if failed else 0
