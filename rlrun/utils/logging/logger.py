"""The process-wide logger: text messages, rows of diagnostics and snapshots, as module functions.

Usage, as in rlpyt::

    from rlrun.utils.logging import logger
    logger.log("starting")
    logger.record_tabular("Loss", 0.5)
    logger.record_tabular_misc_stat("Return", returns)   # ReturnAverage, ReturnStd, ...
    logger.dump_tabular()                                 # one row to progress.csv and the console

With no :func:`~rlrun.utils.logging.context.logger_context` open, everything goes to the console only
and snapshots are not saved. A context pushes a fresh logger state (its own files, snapshot folder and
TensorBoard writer) and restores the previous one on exit, so runs can follow or nest in one process.

``progress.csv`` gets a column for every key ever recorded: a key first recorded in a later row adds a
column at the end (the header is rewritten, earlier rows have empty cells there), and a column missing
from a row is left empty.

The console table is shorter than the row: it leaves out ``nan`` values and the keys recorded with
``console=False`` (the runners record their detail that way), while ``progress.csv`` and TensorBoard
get everything; :func:`set_full_console_table` shows it all.
"""

from __future__ import annotations

import datetime
import enum
import json
import logging
import math
import numbers
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO, TypeVar

import numpy as np
import torch
from numpy.typing import ArrayLike

from rlrun.utils.logging import progress
from rlrun.utils.logging.tabular import CsvOutput, format_table, to_scalar

_Value = TypeVar("_Value")  # a row's values, which console_row passes through

SNAPSHOT_MODES = ("none", "last", "all", "gap", "last+gap")
MISC_STATS = ("Average", "Std", "Median", "Min", "Max")

_COLORS = {"gray": 30, "red": 31, "green": 32, "yellow": 33, "blue": 34, "magenta": 35, "cyan": 36, "white": 37}


@dataclass
class _State:
    prefixes: list[str] = field(default_factory=list)
    tabular_prefixes: list[str] = field(default_factory=list)
    tabular: dict[str, Any] = field(default_factory=dict)  # CSV key -> value, in recording order
    tb_tags: dict[str, str] = field(default_factory=dict)  # CSV key -> TensorBoard tag, where they differ
    console_hidden: set[str] = field(default_factory=set)  # keys of the next row left out of the console table
    full_console_table: bool = False
    text_files: dict[str, TextIO] = field(default_factory=dict)
    csv_outputs: dict[str, CsvOutput] = field(default_factory=dict)
    held_csv_outputs: dict[str, CsvOutput] = field(default_factory=dict)  # open, but not written to
    snapshot_dir: str | None = None
    snapshot_mode: str = "all"
    snapshot_gap: int = 1
    log_tabular_only: bool = False
    disabled: bool = False
    tabular_disabled: bool = False
    disable_prefix: bool = False
    console: bool = True
    summary_writer: ScalarWriter | None = None
    trackers: list[Tracker] = field(default_factory=list)  # W&B and the like: every row, at the iteration
    tf_summary_dir: str | None = None
    iteration: int = 0
    started: bool = False  # a runner finished its start-up, or a row was written


_state = _State()
_saved_states: list[_State] = []


# ---- state stack (used by logger_context) ----


def push_state() -> None:
    """Start a fresh logger state with no outputs; message prefixes, snapshot gap and disabling carry over.

    :func:`~rlrun.utils.logging.context.logger_context` calls this on entry and :func:`pop_state` on exit.
    """
    global _state
    _saved_states.append(_state)
    _state = _State(
        prefixes=list(_state.prefixes),
        snapshot_gap=_state.snapshot_gap,
        disabled=_state.disabled,
        tabular_disabled=_state.tabular_disabled,
        disable_prefix=_state.disable_prefix,
        console=_state.console,
        full_console_table=_state.full_console_table,
    )


def pop_state() -> None:
    """Close the current state's files and TensorBoard writer, and go back to the state before :func:`push_state`."""
    global _state
    if not _saved_states:
        raise RuntimeError("logger.pop_state() was called more often than logger.push_state().")
    _close_outputs(_state)
    _state = _saved_states.pop()


def close_outputs() -> None:
    """Close the current state's files and TensorBoard writer and stop writing to them (messages still
    reach the console); used before a failed run's folder is removed."""
    _close_outputs(_state)
    _state.snapshot_dir = None


def mark_run_started() -> None:
    """Say that the run got past its start-up: a failure from now on is the run's, not its set-up's.

    Runners call it at the end of ``startup()``; writing a row to ``progress.csv`` says it too.
    :func:`~rlrun.utils.logging.context.logger_context` keeps the folder of a started run that fails.
    """
    _state.started = True


def run_started() -> bool:
    return _state.started


def _close_outputs(state: _State) -> None:
    for f in state.text_files.values():
        f.close()
    for out in [*state.csv_outputs.values(), *state.held_csv_outputs.values()]:
        out.close()
    if state.summary_writer is not None and hasattr(state.summary_writer, "close"):
        state.summary_writer.close()
    for tracker in state.trackers:
        tracker.close()
    state.trackers.clear()
    state.text_files.clear()
    state.csv_outputs.clear()
    state.held_csv_outputs.clear()
    state.summary_writer = None


# ---- text ----


def log(
    s: object, with_prefix: bool = True, with_timestamp: bool = True, color: str | None = None, console: bool = True
) -> None:
    """Write one message line to the console and every text output (``debug.log``).

    Skipped while the logger is disabled or set to log tabular output only. ``color`` (one of
    gray, red, green, yellow, blue, magenta, cyan, white) colours the console copy on a terminal.
    ``console=False`` writes the line to the text outputs only (routine detail such as saved files).
    """
    if color is not None and color not in _COLORS:
        raise ValueError(f"Unknown log color {color!r}; use one of {sorted(_COLORS)} or None.")
    if _state.disabled or _state.log_tabular_only:
        return
    text = str(s)
    if with_prefix and not _state.disable_prefix:
        text = "".join(_state.prefixes) + text
    if with_timestamp:
        text = f"{datetime.datetime.now():%Y-%m-%d %H:%M:%S} | {text}"
    _emit(text, color, console=console)


def _emit(line: str, color: str | None = None, console: bool = True) -> None:
    console_line = line
    if color is not None and sys.stdout.isatty():
        console_line = f"\x1b[{_COLORS[color]}m{line}\x1b[0m"
    for f in _state.text_files.values():  # first: debug.log keeps the line even if the console is gone
        f.write(line + "\n")
        f.flush()
    if _state.console and console:
        try:
            progress.console_print(console_line)  # above the progress bar, when one is on screen
        except (BrokenPipeError, ValueError):  # a closed stdout: `| tee` or `| head` ended, ssh dropped
            _console_lost()


def _console_lost() -> None:
    """Stop writing to a stdout that is gone, so that a run goes on (and records its end in debug.log)
    instead of failing on its next message; stdout then points at /dev/null, so that Python's flush at
    exit does not raise either."""
    for state in (_state, *_saved_states):
        state.console = False
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout has no file descriptor (closed, or replaced by a test)
        pass
    for f in _state.text_files.values():
        f.write(
            f"{datetime.datetime.now():%Y-%m-%d %H:%M:%S} | The console (stdout) was closed; logging goes on here only.\n"
        )
        f.flush()


class RunLogHandler(logging.Handler):
    """Routes the library's stdlib ``logging`` records (the ``rlrun`` logger) into this logger: every
    record into the text outputs (``debug.log``), warnings and errors to the console as well.

    :func:`~rlrun.utils.logging.context.logger_context` attaches one for the run, so that a module's
    ``_log.info(...)`` lands in the run's log beside the runner's messages.
    """

    def emit(self, record: logging.LogRecord) -> None:
        if _state.disabled:
            return
        try:
            text = self.format(record)
        except Exception:
            self.handleError(record)
            return
        if record.levelno >= logging.WARNING:
            text = f"{record.levelname}: {text}"
        prefix_text = "" if _state.disable_prefix else "".join(_state.prefixes)
        stamp = f"{datetime.datetime.now():%Y-%m-%d %H:%M:%S} | {prefix_text}"
        _emit(stamp + text, console=record.levelno >= logging.WARNING)


@contextmanager
def prefix(key: str) -> Iterator[None]:
    """Prepend ``key`` to log messages inside the block."""
    push_prefix(key)
    try:
        yield
    finally:
        pop_prefix()


def push_prefix(prefix: str) -> None:  # rlpyt's parameter name, though it hides the function here
    _state.prefixes.append(str(prefix))


def pop_prefix() -> None:
    _state.prefixes.pop()


def set_disable_prefix(disable_prefix: bool) -> None:
    """When True, messages and console tables are written without the pushed prefixes (which are kept)."""
    _state.disable_prefix = bool(disable_prefix)


def get_disable_prefix() -> bool:
    return _state.disable_prefix


def add_text_output(file_name: str) -> None:
    """Also append log messages to ``file_name`` (its folder is created)."""
    path = os.path.abspath(file_name)
    if path not in _state.text_files:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _state.text_files[path] = open(path, "a", encoding="utf-8")  # closed by remove_text_output / pop_state


def remove_text_output(file_name: str) -> None:
    f = _state.text_files.pop(os.path.abspath(file_name), None)
    if f is not None:
        f.close()


def set_log_tabular_only(log_tabular_only: bool) -> None:
    """When True, :func:`log` messages are dropped and only :func:`dump_tabular` tables are shown."""
    _state.log_tabular_only = bool(log_tabular_only)


def get_log_tabular_only() -> bool:
    return _state.log_tabular_only


def set_console_output(enabled: bool) -> None:
    """Turn printing to the console on or off; files (debug.log, progress.csv) are still written."""
    _state.console = bool(enabled)


@contextmanager
def quiet_console() -> Iterator[None]:
    """Print nothing to the console inside the block, as for runs inside a sweep or a benchmark; files
    (``debug.log``, ``progress.csv``) are still written. The console's setting before the block comes back
    after it, also when the block raises::

        with logger.quiet_console(), logger_context(log_dir, run_ID, name, config):
            runner.train()
    """
    previous = _state.console
    _state.console = False
    try:
        yield
    finally:
        _state.console = previous


def disable() -> None:
    """Silence messages and tabular rows (e.g. on every rank but one)."""
    _state.disabled = True


def enable() -> None:
    _state.disabled = False


def is_disabled() -> bool:
    """Whether :func:`disable` silenced the logger."""
    return _state.disabled


def disable_tabular() -> None:
    """Stop writing rows to the CSV outputs (``progress.csv``); the console table and TensorBoard go on."""
    _state.tabular_disabled = True


def enable_tabular() -> None:
    _state.tabular_disabled = False


# ---- tabular ----


def record_tabular(key: str, val: object, *args: object, console: bool = True, **kwargs: object) -> None:
    """Record ``val`` under ``key`` (after the current tabular prefix) for the next :func:`dump_tabular`.

    Numpy and torch scalars become Python numbers. Recording a key twice before a dump keeps the last value.
    ``console=False`` keeps the value out of the console table (it still goes to ``progress.csv`` and
    TensorBoard). Further arguments are accepted and ignored, as rlpyt did.
    """
    _record(_tabular_key(key), val, tb_tag=None, console=console)


def record_tabular_misc_stat(
    key: str, values: ArrayLike | torch.Tensor, placement: str = "back", console: bool | Iterable[str] = True
) -> None:
    """Record Average, Std, Median, Min and Max of ``values`` as ``<key>Average`` ... (``placement="back"``).

    With ``placement="front"`` the names are ``Average<key>`` ... Empty ``values`` record ``nan`` for
    each, so the columns exist from the first row. TensorBoard groups them as ``<key>/Average`` ...
    ``console`` says which of the five the console table shows: all (True), none (False), or the
    names given (e.g. ``("Average", "Max")``); the files get all five either way.
    """
    if placement not in ("back", "front"):
        raise ValueError(f"placement must be 'back' or 'front', got {placement!r}.")
    if isinstance(console, bool):
        shown = set(MISC_STATS) if console else set()
    else:
        shown = set(console)
        if not shown <= set(MISC_STATS):
            raise ValueError(f"console names statistics not among {MISC_STATS}: {sorted(shown - set(MISC_STATS))}.")
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu()
    array = np.asarray([to_scalar(v) for v in values] if isinstance(values, list) else values, dtype=np.float64)
    array = array.ravel()
    stats: tuple[float, ...] = (np.nan,) * len(MISC_STATS)
    if array.size:
        stats = tuple(float(f(array)) for f in (np.mean, np.std, np.median, np.min, np.max))
    base = _tabular_key(key)
    for name, value in zip(MISC_STATS, stats):
        if placement == "back":
            csv_key, tb_tag = base + name, f"{base}/{name}"
        else:
            csv_key, tb_tag = _tabular_key(name + str(key)), f"{base}/{name}"
        _record(csv_key, float(value), tb_tag=tb_tag, console=name in shown)


def _tabular_key(key: str) -> str:
    return "".join(_state.tabular_prefixes) + str(key)


def _record(csv_key: str, val: Any, tb_tag: str | None, console: bool = True) -> None:
    _state.tabular[csv_key] = to_scalar(val)
    if tb_tag is not None:
        _state.tb_tags[csv_key] = tb_tag
    if console:
        _state.console_hidden.discard(csv_key)
    else:
        _state.console_hidden.add(csv_key)


def set_full_console_table(full: bool) -> None:
    """When True, the console table shows every recorded value, ``nan`` included, as ``progress.csv`` has them.

    By default it leaves out the values recorded with ``console=False`` and those that are ``nan``
    (nothing to read yet), so that a person sees the few figures that matter at each log row.
    """
    _state.full_console_table = bool(full)


def get_full_console_table() -> bool:
    return _state.full_console_table


def console_row(row: Mapping[str, _Value], hidden: set[str] | frozenset[str] = frozenset()) -> dict[str, _Value]:
    """The part of ``row`` the console table shows: without the ``hidden`` keys and ``nan`` values."""
    return {k: v for k, v in row.items() if k not in hidden and not _is_nan(v)}


def _is_nan(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and math.isnan(value)


@contextmanager
def tabular_prefix(key: str) -> Iterator[None]:
    """Prepend ``key`` (e.g. ``"Diagnostics/"``) to the keys recorded inside the block."""
    push_tabular_prefix(key)
    try:
        yield
    finally:
        pop_tabular_prefix()


def push_tabular_prefix(key: str) -> None:
    _state.tabular_prefixes.append(str(key))


def pop_tabular_prefix() -> None:
    _state.tabular_prefixes.pop()


def add_tabular_output(file_name: str, append: bool = False) -> None:
    """Write rows to the CSV file ``file_name`` (created or truncated; its folder is created).

    ``append=True`` continues the file if it exists, with the columns of its header (resumed runs).
    """
    path = os.path.abspath(file_name)
    if path in _state.held_csv_outputs:
        _state.csv_outputs[path] = _state.held_csv_outputs.pop(path)
    elif path not in _state.csv_outputs:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _state.csv_outputs[path] = CsvOutput(path, append=append)


def _output_key(path: str) -> str:
    folder = _state.snapshot_dir
    if folder is not None and os.path.commonpath([path, folder]) == folder:
        return os.path.relpath(path, folder)
    return path


def tabular_outputs_state() -> dict[str, dict[str, Any]]:
    """Where each CSV output (written or held) stands: ``{name: {"columns", "size"}}``, names relative to
    the snapshot folder. A checkpoint keeps it so that a resumed run can :func:`rewind_tabular_outputs`."""
    outputs = {**_state.csv_outputs, **_state.held_csv_outputs}
    return {_output_key(path): out.state() for path, out in outputs.items()}


def rewind_tabular_outputs(state: dict[str, dict[str, Any]]) -> None:
    """Cut every CSV output back to where ``state`` (from :func:`tabular_outputs_state`) left it, so rows
    logged after a checkpoint are not written twice by the resumed run; an output that ``state`` does
    not name is emptied. A file shorter than its state (another run's) is left alone, with a message."""
    for path, out in {**_state.csv_outputs, **_state.held_csv_outputs}.items():
        if not out.rewind(state.get(_output_key(path))):
            log(f"{path} is shorter than the checkpoint's copy of it; appending to it as it is.")


def remove_tabular_output(file_name: str) -> None:
    """Close the CSV output ``file_name`` (written or held)."""
    path = os.path.abspath(file_name)
    for outputs in (_state.csv_outputs, _state.held_csv_outputs):
        out = outputs.pop(path, None)
        if out is not None:
            out.close()


def hold_tabular_output(file_name: str) -> None:
    """Stop writing rows to the CSV output ``file_name`` but keep it open.

    :func:`add_tabular_output` with the same name resumes appending to the same file (e.g. to hold an evaluation's ``progress.csv`` while training logs elsewhere).
    """
    path = os.path.abspath(file_name)
    out = _state.csv_outputs.pop(path, None)
    if out is not None:
        _state.held_csv_outputs[path] = out


class ScalarWriter(Protocol):
    """What :func:`set_tf_summary_writer` takes: TensorBoard's ``SummaryWriter`` or anything with its
    ``add_scalar`` and ``flush`` (a ``close`` method, where it has one, is called when the logger resets)."""

    def add_scalar(self, tag: str, scalar_value: float, global_step: int | None = None) -> object: ...

    def flush(self) -> object: ...


class Tracker(Protocol):
    """An experiment tracker (:class:`~rlrun.utils.logging.tracking.WandbTracker`): gets every dumped row."""

    def log_row(self, row: Mapping[str, object], step: int) -> None: ...

    def log_video(self, path: str, step: int, key: str = "video") -> None: ...

    def close(self) -> None: ...


def add_tracker(tracker: Tracker) -> None:
    """Send every row :func:`dump_tabular` writes to ``tracker`` too, at the iteration; the current logger
    state closes it (``logger_context`` on exit)."""
    _state.trackers.append(tracker)


def get_trackers() -> list[Tracker]:
    return list(_state.trackers)


def set_tf_summary_writer(writer_name: ScalarWriter | None) -> None:
    """Send every numeric value of each dumped row to ``writer_name.add_scalar(tag, value, iteration)``
    (a ``SummaryWriter``; the parameter keeps rlpyt's name)."""
    _state.summary_writer = writer_name


def get_tf_summary_writer() -> ScalarWriter | None:
    return _state.summary_writer


def set_tf_summary_dir(dir_name: str | None) -> None:
    """Remember the folder of the TensorBoard files, for code that makes its own writer; nothing is written."""
    _state.tf_summary_dir = None if dir_name is None else str(dir_name)


def get_tf_summary_dir() -> str | None:
    return _state.tf_summary_dir


def set_iteration(iteration: int) -> None:
    """The step TensorBoard scalars are written at; runners set it to the training iteration."""
    _state.iteration = int(iteration)


def get_iteration() -> int:
    return _state.iteration


def dump_tabular(with_prefix: bool = True) -> dict[str, Any]:
    """Write the recorded values as one row (CSV outputs, console table, TensorBoard) and clear them.

    Returns the row (key -> value; empty when nothing was recorded), also while the logger is disabled
    and writes nothing. ``with_prefix`` puts the message prefix before each console line of the table.
    """
    row, tb_tags, hidden = _state.tabular, _state.tb_tags, _state.console_hidden
    _state.tabular, _state.tb_tags, _state.console_hidden = {}, {}, set()
    if _state.disabled or not row:
        return row
    line_prefix = "".join(_state.prefixes) if with_prefix and not _state.disable_prefix else ""
    table = format_table(row if _state.full_console_table else console_row(row, hidden))
    for line in table:
        _emit(line_prefix + line, console=True)
    for out in () if _state.tabular_disabled else _state.csv_outputs.values():
        _state.started = True
        added = out.write_row(row)
        if added:
            log(f"{out.path}: new column(s) {', '.join(added)}; earlier rows have empty cells there.", console=False)
    for tracker in _state.trackers:
        tracker.log_row(row, _state.iteration)
    writer = _state.summary_writer
    if writer is not None:
        for key, value in row.items():
            if isinstance(value, numbers.Real):
                writer.add_scalar(tb_tags.get(key, key), float(value), _state.iteration)
        if hasattr(writer, "flush"):
            writer.flush()
    return row


# ---- snapshots ----


def set_snapshot_dir(dir_name: str) -> None:
    """The folder :func:`save_itr_params` writes to (created here)."""
    path = os.path.abspath(dir_name)
    os.makedirs(path, exist_ok=True)
    _state.snapshot_dir = path


def get_snapshot_dir() -> str | None:
    return _state.snapshot_dir


def set_snapshot_mode(mode: str) -> None:
    """Which calls of :func:`save_itr_params` write a file.

    ``"none"``: never. ``"last"``: every call, overwriting ``params.pkl``. ``"all"``: every call, to
    ``itr_<itr>.pkl``. ``"gap"``: ``itr_<itr>.pkl`` when ``itr == 0`` or ``(itr + 1)`` is a multiple of the
    snapshot gap. ``"last+gap"``: both ``params.pkl`` every call and the ``"gap"`` files.
    """
    if mode not in SNAPSHOT_MODES:
        raise ValueError(f"Unknown snapshot_mode {mode!r}; use one of {list(SNAPSHOT_MODES)}.")
    _state.snapshot_mode = mode


def get_snapshot_mode() -> str:
    return _state.snapshot_mode


def set_snapshot_gap(gap: int) -> None:
    """Iterations between ``"gap"`` snapshots; a positive integer."""
    if isinstance(gap, bool) or not isinstance(gap, numbers.Integral) or gap < 1:
        raise ValueError(f"snapshot gap must be a positive integer, got {gap!r}.")
    _state.snapshot_gap = int(gap)


def get_snapshot_gap() -> int:
    return _state.snapshot_gap


def save_itr_params(itr: int, params: object) -> list[str]:
    """Save ``params`` with ``torch.save`` as the snapshot mode says; return the paths written.

    Does nothing without a snapshot folder (no logger context). Files are written to a temporary name
    and renamed, so a crash during the save never leaves a truncated snapshot behind.
    """
    folder, mode, gap = _state.snapshot_dir, _state.snapshot_mode, _state.snapshot_gap
    if folder is None or mode == "none":
        return []
    names = []
    on_gap = itr == 0 or (itr + 1) % gap == 0
    if mode == "all" or (mode in ("gap", "last+gap") and on_gap):
        names.append(f"itr_{itr}.pkl")
    if mode in ("last", "last+gap"):
        names.append("params.pkl")
    paths = []
    for name in names:
        path = os.path.join(folder, name)
        tmp_path = path + ".tmp"
        torch.save(params, tmp_path)
        os.replace(tmp_path, path)
        paths.append(path)
    return paths


# ---- variants ----


def _variant_json(obj: Any) -> Any:
    """``json`` fallback for :func:`log_variant`: classes and enums by dotted name, arrays as lists."""
    if isinstance(obj, type):
        return {"$class": f"{obj.__module__}.{obj.__qualname__}"}
    if isinstance(obj, enum.Enum):
        return {"$enum": f"{type(obj).__module__}.{type(obj).__qualname__}.{obj.name}"}
    if isinstance(obj, (np.ndarray, np.generic)):
        return obj.tolist()
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().tolist()
    if callable(obj) and hasattr(obj, "__qualname__"):
        return f"{obj.__module__}.{obj.__qualname__}"
    return repr(obj)


def log_variant(log_file: str, variant_data: object) -> None:
    """Write ``variant_data`` (a dict, or an object with a ``dump()`` method returning one) to ``log_file`` as JSON.

    The folder is created. Classes are written as ``{"$class": "module.Name"}`` and enums as
    ``{"$enum": "module.Enum.NAME"}``, as in rlpyt; other values JSON cannot hold are written as their
    ``repr``.
    """
    if hasattr(variant_data, "dump"):
        variant_data = variant_data.dump()
    path = os.path.abspath(log_file)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(variant_data, f, indent=2, sort_keys=True, default=_variant_json)
