"""The run folder of one experiment, and the context manager that points the logger at it."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import enum
import json
import logging
import math
import os
import pathlib
import shutil
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeAlias

import numpy as np
import torch

from rlrun.utils.launching.main_guard import refuse_while_bootstrapping
from rlrun.utils.logging import logger
from rlrun.utils.logging.run_lock import LOCK_FILE, RunLock
from rlrun.utils.logging.tracking import WANDB_EXTRA, WandbTracker

# What json.dump writes: jsonable's results.
JSONValue: TypeAlias = "None | bool | int | float | str | list[JSONValue] | dict[str, JSONValue]"

__all__ = [
    "logger_context",
    "get_log_dir",
    "claim_run_dir",
    "add_exp_param",
    "check_progress",
    "LOG_DIR_NAME",
    "jsonable",
]

LOG_DIR_NAME = "data"


def get_log_dir(experiment_name: str, root_log_dir: str | None = None, date: bool = True) -> str:
    """``<root_log_dir>/local/<YYYYMMDD>/<HHMMSS>/<experiment_name>`` as an absolute path, as rlpyt's.

    ``root_log_dir`` defaults to ``./data`` of the current working directory (read at call time),
    never a folder inside the installed package. ``date=False`` leaves out the date and time folders.
    """
    root = os.path.join(os.getcwd(), LOG_DIR_NAME) if root_log_dir is None else root_log_dir
    parts = [root, "local"]
    if date:
        now = datetime.datetime.now()
        parts += [now.strftime("%Y%m%d"), now.strftime("%H%M%S")]
    parts.append(experiment_name)
    return os.path.abspath(os.path.join(*parts))


# The files that mark a folder as holding a run's logs.
RUN_FILES = ("params.json", "progress.csv", "debug.log")
# Written into the run folder when the run raised after its start-up: the error and its traceback.
FAILED_FILE = "FAILED"


def claim_run_dir(run_dir: str) -> str:
    """Make ``run_dir`` and take it for one run, or ``<run_dir>-2``, ``-3``, ... if a run holds it.

    A run's logs are never overwritten: a folder that already has a run's files is left alone. The
    claim is an exclusive create of ``params.json``, so two processes never take the same folder.
    """
    return _claim_run_dir(run_dir)[0]


def _claim_run_dir(run_dir: str) -> tuple[str, bool]:
    """``(folder, made)``: the folder claimed, and whether this call made it (it did not exist before)."""
    for attempt in range(1, 10_000):
        candidate = run_dir if attempt == 1 else f"{run_dir}-{attempt}"
        made = not os.path.isdir(candidate)
        os.makedirs(candidate, exist_ok=True)
        if any(os.path.exists(os.path.join(candidate, f)) for f in RUN_FILES[1:]):
            continue
        try:
            with open(os.path.join(candidate, RUN_FILES[0]), "x", encoding="utf-8"):
                return candidate, made
        except FileExistsError:
            continue
    raise RuntimeError(f"Every folder from {run_dir} to {run_dir}-9999 holds a run; choose another log_dir or run_ID.")


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([os.path.abspath(path), os.path.abspath(folder)]) == os.path.abspath(folder)


def jsonable(obj: object) -> JSONValue:
    """A JSON-serialisable copy of ``obj`` for ``params.json``.

    Containers are converted recursively; numpy and torch values become numbers or lists; classes and
    functions become their dotted names; anything else becomes its ``repr``.
    """
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)  # NaN/inf are not JSON
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return {f: jsonable(v) for f, v in zip(obj._fields, obj)}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((jsonable(v) for v in obj), key=repr)
    if isinstance(obj, (np.generic, np.ndarray)):
        return jsonable(obj.tolist())
    if isinstance(obj, torch.Tensor):
        return jsonable(obj.detach().cpu().tolist())
    if isinstance(obj, (torch.device, torch.dtype, pathlib.PurePath)):
        return str(obj)
    if isinstance(obj, enum.Enum):
        return obj.name
    if isinstance(obj, type) or (callable(obj) and hasattr(obj, "__qualname__")):
        return f"{obj.__module__}.{obj.__qualname__}"
    if dataclasses.is_dataclass(obj):
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    return repr(obj)


@contextmanager
def logger_context(
    log_dir: str,
    run_ID: int | str,
    name: str,
    log_params: Mapping[str, Any] | None = None,
    snapshot_mode: str = "none",
    override_prefix: bool = False,
    use_summary_writer: bool = False,
    snapshot_gap: int | None = None,
    resume: bool = False,
    wandb: bool | Mapping[str, Any] = False,
) -> Iterator[str]:
    """Log one run into its own folder; wrap ``runner.train()`` in it. Yields the run folder.

    The folder is ``./data/local/<YYYYMMDD>/<HHMMSS>/<log_dir>/run_<run_ID>`` under the current working
    directory, or ``<log_dir>/run_<run_ID>`` with ``override_prefix=True`` (an absolute ``log_dir``, or
    one already inside ``./data``, is always used as given). A folder that holds an earlier run's logs
    is never written over: the run takes ``run_<run_ID>-2`` (then ``-3``, ...) beside it, and says so. It gets ``params.json`` (``log_params`` plus ``name`` and ``run_ID``),
    ``progress.csv`` (one row per :func:`logger.dump_tabular`), ``debug.log`` (every message, appended)
    and the snapshots chosen by ``snapshot_mode`` (see :func:`logger.set_snapshot_mode`; ``snapshot_gap``
    sets the gap, else the logger's current gap is kept). Records of the library's stdlib loggers (``rlrun.*``)
    go to ``debug.log`` too, and warnings also to the console. ``use_summary_writer=True`` also writes
    TensorBoard event files there. ``wandb=True`` (or a dict of ``wandb.init`` keywords such as
    ``project``, ``entity``, ``tags``) sends the config and every row to Weights & Biases too
    (:class:`~rlrun.utils.logging.tracking.WandbTracker`; the ``wandb`` extra; ``WANDB_MODE=offline``
    without a network). On exit, also by an exception, files are closed and the logger
    state from before the context comes back.

    In a process a launcher started as rank ``RANK > 0`` (``torchrun``: ``RANK`` and ``WORLD_SIZE`` set),
    the context makes no folder and writes nothing, with the logger disabled: rank 0 logs the run.

    ``resume=True`` takes the folder as it is, an earlier run's logs included, to continue that run
    (``MinibatchRl(..., resume=True)``, see docs/checkpoints.md): ``progress.csv`` is appended to (the
    runner cuts the rows after its checkpoint) and ``debug.log`` goes on. A folder that does not exist
    yet is made, so the same script starts a run and continues it after an interruption.

    One process at a time logs into a folder: the context holds a lock on it (``.run.lock``, see
    :mod:`~rlrun.utils.logging.run_lock`) until it exits, and a resume of a folder whose run still goes
    on raises :class:`~rlrun.utils.logging.run_lock.RunFolderBusyError`, naming that run's process. The
    lock goes with its process, so a run killed by any signal leaves nothing to clean up.

    A run that raises leaves no folder that looks like a run (see docs/runners_and_logging.md): one
    that failed before it started (no runner finished :meth:`startup`, no row was logged: a wrong env
    id, a bad observation shape) has its folder removed, when the context made it and it holds nothing
    but the context's files, so the next attempt takes ``run_<run_ID>`` again. Otherwise the folder is
    kept and gets a ``FAILED`` file with the error and its traceback (also appended to ``debug.log``).
    A stop by a signal (``TrainingInterrupted``, ``KeyboardInterrupt``) is no failure: the run can
    resume. A resumed run removes the ``FAILED`` file of the attempt before it.
    """
    # A spawn or forkserver worker re-importing a script without the main guard: stop before it makes a folder.
    refuse_while_bootstrapping("logger_context()")
    if snapshot_mode not in logger.SNAPSHOT_MODES:
        raise ValueError(f"Unknown snapshot_mode {snapshot_mode!r}; use one of {list(logger.SNAPSHOT_MODES)}.")
    if _launcher_rank() > 0:
        # A rank other than 0 of a torchrun job: rank 0 logs for the run (see docs/sync_rl.md).
        yield from _silent_context(log_dir, run_ID, override_prefix)
        return
    summary_writer_cls = _summary_writer_cls() if use_summary_writer else None
    if wandb:
        _require_wandb()  # before any folder is made
    run_dir = os.path.join(str(log_dir), f"run_{run_ID}")
    data_dir = os.path.join(os.getcwd(), LOG_DIR_NAME)
    if not (override_prefix or os.path.isabs(run_dir) or _inside(run_dir, data_dir)):
        run_dir = get_log_dir(run_dir)
    wanted_dir = os.path.abspath(run_dir)

    logger.push_state()
    library_log = logging.getLogger("rlrun")
    handler, level_before = logger.RunLogHandler(level=logging.INFO), library_log.level
    library_log.addHandler(handler)
    if library_log.getEffectiveLevel() > logging.INFO:
        library_log.setLevel(logging.INFO)
    lock: RunLock | None = None
    try:
        if snapshot_gap is not None:
            logger.set_snapshot_gap(snapshot_gap)  # validated before any folder is made
        logger.set_snapshot_mode(snapshot_mode)
        if resume:
            made = False  # never removed: it may hold an earlier attempt
            made_parents = []
            os.makedirs(wanted_dir, exist_ok=True)
            run_dir = wanted_dir
            lock = RunLock(run_dir)  # a run still logging here refuses this one (RunFolderBusyError)
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(run_dir, FAILED_FILE))
        else:
            made_parents = _missing_parents(wanted_dir)  # <date>/<time>/<log_dir>: removed too if the run never starts
            run_dir, made = _claim_run_dir(wanted_dir)
            lock = RunLock(run_dir)  # so a --resume of this folder waits for this run to end
        logger.set_snapshot_dir(run_dir)
        logger.add_text_output(os.path.join(run_dir, "debug.log"))
        logger.add_tabular_output(os.path.join(run_dir, "progress.csv"), append=resume)
        if summary_writer_cls is not None:
            logger.set_tf_summary_writer(summary_writer_cls(run_dir))
        logger.push_prefix(f"{name}_{run_ID} ")
        params = {**(log_params or {}), "name": name, "run_ID": run_ID}
        params_path = os.path.join(run_dir, "params.json")
        with open(params_path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(jsonable(params), f, indent=2)
        os.replace(params_path + ".tmp", params_path)
        if wandb:
            init_kwargs = dict(wandb) if isinstance(wandb, Mapping) else {}
            config = jsonable(params)
            assert isinstance(config, dict)  # params is a dict, so its JSON form is one
            logger.add_tracker(WandbTracker(run_dir, f"{name}_{run_ID}", config, **init_kwargs))
        if run_dir != wanted_dir:
            logger.log(f"{wanted_dir} holds an earlier run's logs, which are kept; this run logs to {run_dir}.")
        logger.log(f"Logging to {run_dir}")
        try:
            yield run_dir
        except RunNotStartedError as error:  # nothing of the run's folder was changed: leave it as it was
            logger.log(f"The run did not start ({type(error).__name__}); {run_dir} is left as it was.", console=False)
            raise
        except Exception as error:
            _record_failure(run_dir, error, remove=made, made_parents=made_parents)
            raise
    finally:
        library_log.removeHandler(handler)
        library_log.setLevel(level_before)
        logger.pop_state()
        if lock is not None:
            lock.release()


class RunNotStartedError(Exception):
    """An error raised before a run changed its folder (a resume that finds nothing to resume from):
    :func:`logger_context` writes no ``FAILED`` file and removes nothing for it."""


def _missing_parents(path: str) -> list[str]:
    """The ancestors of ``path`` that do not exist yet, nearest first."""
    missing = []
    parent = os.path.dirname(os.path.abspath(path))
    while parent and not os.path.isdir(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    return missing


def _record_failure(run_dir: str, error: BaseException, remove: bool, made_parents: list[str]) -> None:
    """Remove the folder of a run that failed before it started (``remove``: the context made it), when
    it holds only the context's files, with the parents the context made for it once they are empty;
    else write ``FAILED`` with the traceback into it."""
    contents = set(os.listdir(run_dir))
    only_ours = all(name in (*RUN_FILES, LOCK_FILE) or name.startswith("events.out.tfevents") for name in contents)
    if remove and only_ours and not logger.run_started():
        logger.close_outputs()
        shutil.rmtree(run_dir, ignore_errors=True)
        for parent in made_parents:  # nearest first; one another run has used since is not empty
            with contextlib.suppress(OSError):
                os.rmdir(parent)
        logger.log(f"The run failed before it started ({type(error).__name__}); its folder {run_dir} is removed.")
        return
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    with open(os.path.join(run_dir, FAILED_FILE), "w", encoding="utf-8") as f:
        f.write(text)
    logger.log(f"The run failed; the error and its traceback are in {os.path.join(run_dir, FAILED_FILE)}:")
    logger.log(text.rstrip(), console=False)  # the console shows the traceback as the error propagates


def _launcher_rank() -> int:
    """This process's ``RANK`` when a launcher such as ``torchrun`` started it, else 0."""
    try:
        return int(os.environ["RANK"]) if "WORLD_SIZE" in os.environ else 0
    except (KeyError, ValueError):
        return 0


def _silent_context(log_dir: str, run_ID: int | str, override_prefix: bool) -> Iterator[str]:
    """What ranks other than 0 get: no folder, no files, the logger disabled; yields the path rank 0's
    folder would have without a clash (rank 0's own may differ by a suffix or a timestamp)."""
    run_dir = os.path.join(str(log_dir), f"run_{run_ID}")
    if not (override_prefix or os.path.isabs(run_dir)):
        run_dir = os.path.join(os.getcwd(), LOG_DIR_NAME, run_dir)
    logger.push_state()
    logger.disable()
    try:
        yield os.path.abspath(run_dir)
    finally:
        logger.pop_state()


def _require_wandb() -> None:
    try:
        import wandb  # noqa: F401
    except ImportError as e:
        raise ImportError(
            f"logger_context(wandb=...) needs Weights & Biases, which is not installed: {WANDB_EXTRA}, or pass wandb=False."
        ) from e


def _summary_writer_cls() -> type:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as e:
        raise ImportError(
            "logger_context(use_summary_writer=True) needs TensorBoard, which is not installed: "
            "run `pip install rlrun[tensorboard]` (or `pip install tensorboard`), or pass use_summary_writer=False."
        ) from e
    return SummaryWriter


def _run_files(exp_dir: str | None, name: str) -> Iterator[str]:
    """Every ``name`` file under ``exp_dir`` (default: the current directory), in sorted order."""
    for folder, dirs, files in os.walk(os.getcwd() if exp_dir is None else exp_dir):
        dirs.sort()
        if name in files:
            yield os.path.join(folder, name)


def add_exp_param(param_name: str, param_val: object, exp_dir: str | None = None, overwrite: bool = False) -> list[str]:
    """Write ``param_name = param_val`` into the ``params.json`` of every run under ``exp_dir``.

    For tagging finished runs after the fact (e.g. a label that combines several settings, to group
    curves by). A run that has the key keeps its value unless ``overwrite``; where both the old and
    the new value are dicts, the new one is merged in. Returns the files changed.
    """
    changed = []
    for path in _run_files(exp_dir, "params.json"):
        with open(path, encoding="utf-8") as f:
            params = json.load(f)
        old = params.get(param_name)
        if param_name in params and not overwrite:
            logger.log(f"{path}: keeps {param_name}={old!r} (overwrite=False).")
            continue
        new = jsonable(param_val)
        if isinstance(old, dict) and isinstance(param_val, dict) and isinstance(new, dict):
            params[param_name] = {**old, **new}
        else:
            params[param_name] = new
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(params, f, indent=2)
        os.replace(tmp, path)  # never a half-written params.json
        changed.append(path)
    return changed


def check_progress(exp_dir: str | None = None) -> dict[str, int]:
    """The number of logged rows in each ``progress.csv`` under ``exp_dir``, printed and returned.

    A quick look at how far each run of a grid has come.
    """
    rows = {}
    for path in _run_files(exp_dir, "progress.csv"):
        with open(path, encoding="utf-8") as f:
            rows[path] = max(0, sum(1 for _ in f) - 1)  # less the header
        print(f"{rows[path]:6d}  {path}")
    return rows
