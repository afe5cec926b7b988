"""Checkpoints of a training run: what they hold, how they are written, found and loaded.

A checkpoint is two files in ``<run folder>/checkpoints/``:

- ``itr_<itr>.ckpt``: the state, written with ``torch.save``;
- ``itr_<itr>.json``: its manifest (iteration, steps, size and SHA-256 of the ``.ckpt``).

Each is written to a temporary name, flushed to disk (``fsync``), renamed into place and the folder
fsynced, data first, manifest last. A checkpoint counts only once its manifest exists and the data
file matches it, so a crash at any moment (also ``kill -9`` or a power cut) leaves either the new
checkpoint complete or the previous one as the latest; a truncated or corrupt file is never loaded.

What goes in is assembled by :meth:`Checkpointer.run_state <rlrun.runners.checkpointer.Checkpointer.run_state>`
from the runner's parts; this module holds the file handling, the policy of when to write and how many
to keep, and the process-wide RNG states.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypedDict

import numpy as np
import torch

from rlrun.runners.diagnostics import DiagnosticsState
from rlrun.utils.logging.context import RunNotStartedError

if TYPE_CHECKING:  # the components' types, for annotations only
    from rlrun.runners.contracts import AgentT, AlgorithmContract, SamplerContract

__all__ = [
    "CheckpointState",
    "TrainingState",
    "RngState",
    "CheckpointPolicy",
    "CheckpointInfo",
    "CheckpointError",
    "NothingToResumeError",
    "CHECKPOINT_DIR_NAME",
    "checkpoint_dir",
    "checkpoint_path",
    "write_checkpoint",
    "list_checkpoints",
    "load_checkpoint",
    "load_latest_checkpoint",
    "prune_checkpoints",
    "capture_rng_state",
    "restore_rng_state",
    "training_state",
    "load_training_state",
]

_log = logging.getLogger(__name__)

CHECKPOINT_DIR_NAME = "checkpoints"
FORMAT_VERSION = 1
_NAME = re.compile(r"^itr_(\d+)\.json$")


class RngState(TypedDict):
    """The process-wide random generators, as :func:`capture_rng_state` takes them."""

    python: tuple[Any, ...]  # random.getstate(): (version, the Mersenne Twister's words, gauss_next)
    numpy: tuple[Any, ...] | dict[str, Any]  # np.random.get_state(): legacy tuple or a bit generator's dict
    torch: torch.Tensor
    cuda: list[torch.Tensor] | None  # one state per device; None when CUDA was not initialised


class TrainingState(TypedDict):
    """The components' part of a checkpoint: what each one's ``state_dict`` gave (see :func:`training_state`)."""

    agent: dict[str, Any]
    algo: dict[str, Any]
    sampler: dict[str, Any]


class _AsyncRunFields(TypedDict, total=False):
    """What an asynchronous run's checkpoint adds (:mod:`rlrun.runners.async_checkpoint`)."""

    runner_kind: str  # "async"; absent in a synchronous runner's checkpoint
    opt_itr: int  # the optimiser's calls so far


class CheckpointState(TrainingState, _AsyncRunFields):
    """Everything one checkpoint file holds (:meth:`Checkpointer.run_state
    <rlrun.runners.checkpointer.Checkpointer.run_state>` assembles it): the format, the counters, the
    components' states, the runner's (its diagnostics), where the CSV outputs stood, the RNGs."""

    format: int
    itr: int
    cum_steps: int
    batch_size: int
    runner: DiagnosticsState
    logger: dict[str, dict[str, Any]]  # logger.tabular_outputs_state()
    rng: RngState


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be used: missing, corrupt, or saved by an incompatible run."""


class NothingToResumeError(CheckpointError, RunNotStartedError):
    """A resume found no usable checkpoint in a folder that holds an earlier attempt (its checkpoint
    files, or rows in its ``progress.csv``): the run refuses to start rather than log over that history."""


@dataclass(frozen=True)
class CheckpointPolicy:
    """When a runner writes checkpoints and how many it keeps.

    - ``every_itrs``: write after every that many iterations; None: go by ``every_logs``;
    - ``every_logs``: write after every that many log intervals (the default: at each log row);
    - ``keep_last``: how many checkpoints stay on disk (older ones are deleted after a new one is in place);
    - ``replay``: put the algorithm's replay buffer in (large for big replays; without it a resumed
      run refills an empty replay, and is not bit-identical).

    A checkpoint is also written after the last iteration and when a signal stops the run.
    """

    every_itrs: int | None = None
    every_logs: int = 1
    keep_last: int = 2
    replay: bool = True

    def __post_init__(self) -> None:
        for name in ("every_itrs", "every_logs", "keep_last"):
            value = getattr(self, name)
            if value is None and name == "every_itrs":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"CheckpointPolicy.{name} must be a positive integer, got {value!r}.")

    @classmethod
    def from_arg(
        cls, checkpoint: CheckpointPolicy | bool | None, resume: object = False, owner: str = "runner"
    ) -> CheckpointPolicy | None:
        """The policy a runner's ``checkpoint`` argument asks for: True is the default policy, and so is None
        when the run resumes (``resume`` not False); False and None are no checkpoints."""
        if not isinstance(checkpoint, (CheckpointPolicy, bool, type(None))):
            raise TypeError(f"{owner}: checkpoint must be a CheckpointPolicy, True, False or None; got {checkpoint!r}.")
        if checkpoint is True or (checkpoint is None and resume is not False):
            return cls()
        return checkpoint or None

    def due(self, itr: int, log_interval_itrs: int) -> bool:
        """Whether to write a checkpoint after iteration ``itr`` (0-based)."""
        every = self.every_itrs if self.every_itrs is not None else self.every_logs * log_interval_itrs
        return (itr + 1) % every == 0


@dataclass(frozen=True)
class CheckpointInfo:
    """One checkpoint on disk, as its manifest describes it."""

    itr: int
    path: Path  # the .ckpt file
    manifest: Path  # the .json file
    size: int
    sha256: str
    cum_steps: int


def checkpoint_dir(run_dir: str | os.PathLike[str]) -> Path:
    """The folder a run keeps its checkpoints in."""
    return Path(run_dir) / CHECKPOINT_DIR_NAME


def checkpoint_path(folder: str | os.PathLike[str], itr: int) -> Path:
    """The data file of iteration ``itr``'s checkpoint in ``folder`` (its manifest: the same name in ``.json``)."""
    return Path(folder) / f"itr_{itr:09d}.ckpt"


# ---- writing ----


class _HashingWriter:
    """A binary file that also hashes and counts what is written through it."""

    def __init__(self, file: BinaryIO) -> None:
        self.file = file
        self.digest = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        self.size += len(data)
        return self.file.write(data)

    def flush(self) -> None:
        self.file.flush()


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomically(path: Path, write: Any) -> Any:
    """``write(file)`` into a temporary file beside ``path``, fsync it, rename it to ``path``, fsync the
    folder. Returns what ``write`` returned. The temporary file is removed if anything fails."""
    tmp = path.with_name(f"{path.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            result = write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return result


def write_checkpoint(
    folder: str | os.PathLike[str], itr: int, state: CheckpointState, cum_steps: int
) -> CheckpointInfo:
    """Write ``state`` as the checkpoint of iteration ``itr`` in ``folder`` (made if missing), atomically."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = checkpoint_path(folder, itr)
    manifest = path.with_suffix(".json")
    start = time.perf_counter()

    def save(f: BinaryIO) -> _HashingWriter:
        writer = _HashingWriter(f)
        torch.save(state, writer)  # type: ignore[arg-type]  # any object with write() will do
        return writer

    writer = _write_atomically(path, save)
    meta = dict(
        format=FORMAT_VERSION,
        itr=int(itr),
        cum_steps=int(cum_steps),
        file=path.name,
        size=writer.size,
        sha256=writer.digest.hexdigest(),
        time=time.strftime("%Y-%m-%d %H:%M:%S"),
    )
    _write_atomically(manifest, lambda f: f.write(json.dumps(meta, indent=2).encode("utf-8")))
    _log.info(
        "Checkpoint of itr %d written to %s (%.1f MB, %.2f s).",
        itr,
        path,
        writer.size / 1e6,
        time.perf_counter() - start,
    )
    return CheckpointInfo(int(itr), path, manifest, writer.size, writer.digest.hexdigest(), int(cum_steps))


# ---- finding and loading ----


def _read_manifest(manifest: Path) -> CheckpointInfo | None:
    try:
        meta = json.loads(manifest.read_text(encoding="utf-8"))
        return CheckpointInfo(
            itr=int(meta["itr"]),
            path=manifest.with_name(str(meta["file"])),
            manifest=manifest,
            size=int(meta["size"]),
            sha256=str(meta["sha256"]),
            cum_steps=int(meta["cum_steps"]),
        )
    except (OSError, ValueError, KeyError, TypeError) as e:
        _log.warning("Skipping checkpoint manifest %s, which cannot be read: %s", manifest, e)
        return None


def list_checkpoints(folder: str | os.PathLike[str]) -> list[CheckpointInfo]:
    """The checkpoints in ``folder`` whose manifest is readable, oldest first (their data is checked on load)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    infos = [_read_manifest(p) for p in folder.iterdir() if _NAME.match(p.name)]
    return sorted((i for i in infos if i is not None), key=lambda i: i.itr)


def _verify(info: CheckpointInfo) -> None:
    try:
        size = info.path.stat().st_size
    except OSError as e:
        raise CheckpointError(f"{info.path} is missing: {e}") from e
    if size != info.size:
        raise CheckpointError(
            f"{info.path} has {size} bytes, its manifest says {info.size}: it is truncated or was changed."
        )
    digest = hashlib.sha256()
    with open(info.path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != info.sha256:
        raise CheckpointError(f"{info.path} does not match the SHA-256 of its manifest: it is corrupt.")


def load_checkpoint(info: CheckpointInfo) -> CheckpointState:
    """The state of one checkpoint, after checking its size and digest against the manifest.

    The file is unpickled (it holds envs and random generators, not only tensors): load only
    checkpoints you wrote yourself.
    """
    _verify(info)
    state: CheckpointState = torch.load(info.path, map_location="cpu", weights_only=False)
    if not isinstance(state, dict) or state.get("format") != FORMAT_VERSION:
        raise CheckpointError(f"{info.path} is not a checkpoint of format {FORMAT_VERSION}.")
    return state


def load_latest_checkpoint(source: str | os.PathLike[str]) -> tuple[CheckpointInfo, CheckpointState] | None:
    """The newest usable checkpoint of ``source`` and its state, or None when there is none.

    ``source`` is a run folder, a folder of checkpoints, or one checkpoint's ``.ckpt``/``.json`` file
    (which must then be usable). A corrupt newest checkpoint is skipped, with a warning, for the one before.
    """
    source = Path(source)
    if source.is_file() or source.suffix in (".ckpt", ".json"):
        info = _read_manifest(source.with_suffix(".json"))
        if info is None:
            raise CheckpointError(f"{source} has no readable manifest {source.with_suffix('.json').name}.")
        return info, load_checkpoint(info)
    folder = checkpoint_dir(source) if checkpoint_dir(source).is_dir() else source
    for info in reversed(list_checkpoints(folder)):
        try:
            return info, load_checkpoint(info)
        except Exception as e:
            _log.warning("Checkpoint of itr %d cannot be used (%s); trying the one before.", info.itr, e)
    return None


def prune_checkpoints(folder: str | os.PathLike[str], keep_last: int) -> None:
    """Delete all but the newest ``keep_last`` checkpoints, and files no manifest names (a write cut short).

    A manifest goes before its data, so what is left is always a valid checkpoint or an orphan file.
    """
    folder = Path(folder)
    infos = list_checkpoints(folder)
    for info in infos[: max(0, len(infos) - keep_last)]:
        info.manifest.unlink(missing_ok=True)
        info.path.unlink(missing_ok=True)
    named = {i.path.name for i in infos[-keep_last:]} | {i.manifest.name for i in infos[-keep_last:]}
    for path in folder.iterdir():
        if path.name not in named and (path.suffix in (".ckpt", ".tmp") or _NAME.match(path.name)):
            path.unlink(missing_ok=True)


# ---- random number generators ----


def capture_rng_state() -> RngState:
    """The states of Python's ``random``, numpy's global generator and torch's (CPU and initialised CUDA)."""
    state = RngState(python=random.getstate(), numpy=np.random.get_state(), torch=torch.get_rng_state(), cuda=None)
    if torch.cuda.is_available() and torch.cuda.is_initialized():  # type: ignore[no-untyped-call]  # torch leaves it unannotated
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: RngState) -> None:
    """Put back what :func:`capture_rng_state` returned."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    cuda_states = state.get("cuda")
    if cuda_states is not None and torch.cuda.is_available():
        if len(cuda_states) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(cuda_states)
        else:
            _log.warning(
                "Checkpoint: CUDA RNG states of %d devices, %d here; not restored.",
                len(cuda_states),
                torch.cuda.device_count(),
            )


# ---- the components' state ----


def training_state(
    agent: AgentT, algo: AlgorithmContract[AgentT], sampler: SamplerContract, replay: bool = True
) -> TrainingState:
    """The state of the three components: the agent's weights, the algorithm's optimiser, counters and
    (with ``replay``) replay, and the sampler's envs and collector (what each ``state_dict`` gives)."""
    return TrainingState(
        agent=dict(agent.state_dict()), algo=algo.state_dict(replay=replay), sampler=sampler.state_dict()
    )


def load_training_state(
    state: TrainingState, agent: AgentT, algo: AlgorithmContract[AgentT], sampler: SamplerContract
) -> None:
    """Put :func:`training_state`'s output back into initialized components (sampler workers read the
    weights from shared memory, which gets them too)."""
    agent.load_state_dict(state["agent"])
    agent.sync_shared_memory()
    algo.load_state_dict(state["algo"])
    sampler.load_state_dict(state["sampler"])
