"""Running a grid of experiments on one machine: one process per run, one run per run slot (rlpyt's launcher).

:func:`run_experiments` starts ``python script <slot_affinity_code> <log_dir> <run_ID> *args`` for every
variant and run, at most as many at once as the affinity code has run slots, each given a free slot,
and waits for them all. Failed runs are collected and reported at the end. ``resume=True`` launches the
grid again into an earlier launch's folder, each run told to continue its run folder
(:func:`resume_requested`). See docs/experiments.md.
"""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rlrun.utils.launching.affinity_codes import affinity_from_code, get_n_run_slots, prepend_run_slot
from rlrun.utils.launching.variant import _jsonable, save_variant
from rlrun.utils.logging.context import get_log_dir

__all__ = [
    "RunRecord",
    "RunsFailedError",
    "log_exps_tree",
    "log_num_launched",
    "launch_experiment",
    "run_experiments",
    "resume_requested",
    "RESUME_ENV",
]

EXPS_TREE = "experiments_tree.txt"
NUM_LAUNCHED = "num_launched.txt"
SUMMARY = "experiments_summary.txt"
RESUME_ENV = "RLRUN_RESUME"  # "1" in the environment of a run launched with resume


def resume_requested() -> bool:
    """Whether ``run_experiments(..., resume=...)`` launched this run to continue its run folder. A train
    script passes it on as ``resume`` to ``logger_context`` and its runner, so that the run continues
    ``<log_dir>/run_<run_ID>`` from its newest checkpoint (or starts there, if it never ran)."""
    return os.environ.get(RESUME_ENV) == "1"


@dataclass
class RunRecord:
    """One run of a grid and how it ended.

    ``returncode`` is None for a run that never finished: stopped (timeout, Ctrl-C) or never started.
    """

    log_dir: str
    run_ID: int
    variant: Mapping[str, Any]
    args: tuple[str, ...]
    run_slot: int | None = None
    cmd: list[str] = field(default_factory=list)
    returncode: int | None = None
    started: float | None = None
    ended: float | None = None
    stopped: bool = False

    @property
    def ok(self) -> bool:
        """Whether the run finished with exit code 0."""
        return self.returncode == 0

    def describe(self) -> str:
        """How the run ended, in words."""
        if self.started is None:
            return "not started"
        if self.stopped:
            return "stopped by the launcher"
        if self.returncode is None:
            return "still running"
        if self.returncode < 0:
            try:
                return f"killed by {signal.Signals(-self.returncode).name}"
            except ValueError:
                return f"killed by signal {-self.returncode}"
        return f"exit code {self.returncode}"


class RunsFailedError(RuntimeError):
    """Some runs of a grid did not finish with exit code 0; ``failed`` lists them, ``runs`` all."""

    def __init__(self, message: str, failed: list[RunRecord], runs: list[RunRecord]):
        super().__init__(message)
        self.failed = failed
        self.runs = runs


def log_exps_tree(exp_dir: str, log_dirs: Sequence[str], runs_per_setting: int) -> None:
    """Write ``experiments_tree.txt`` in ``exp_dir``: the launcher's PID and every setting's folder."""
    os.makedirs(exp_dir, exist_ok=True)
    with open(os.path.join(exp_dir, EXPS_TREE), "w", encoding="utf-8") as f:
        f.write(f"Launcher process ID: {os.getpid()}.\n")
        f.write(
            f"Settings: {len(log_dirs)}; runs per setting: {runs_per_setting}; "
            f"runs in all: {runs_per_setting * len(log_dirs)}.\n\n"
        )
        f.writelines(f"{log_dir}\n" for log_dir in log_dirs)


def log_num_launched(exp_dir: str, n: int, total: int) -> None:
    """Write ``num_launched.txt`` in ``exp_dir``: how many of the runs have been started."""
    with open(os.path.join(exp_dir, NUM_LAUNCHED), "w", encoding="utf-8") as f:
        f.write(f"Runs launched: {n} of {total}.\n")


def _cuda_idx(affinity: Any) -> int | None:
    """The GPU of a run's affinity: its dict's, the first rank's (a list), or the first optimizer's (async)."""
    if isinstance(affinity, list):
        affinity = affinity[0] if affinity else {}
    if isinstance(affinity, Mapping) and "optimizer" in affinity:
        optimizers = affinity["optimizer"]
        affinity = optimizers[0] if optimizers else {}
    return affinity.get("cuda_idx") if isinstance(affinity, Mapping) else None


def launch_experiment(
    script: str,
    run_slot: int,
    affinity_code: str,
    log_dir: str,
    variant: Mapping[str, Any],
    run_ID: int,
    args: Sequence[Any],
    python_executable: str | None = None,
    set_egl_device: bool = False,
    *,
    resume: bool = False,
) -> subprocess.Popen[bytes]:
    """Save ``variant`` in ``log_dir`` and start ``python script <slot_code> <log_dir> <run_ID> *args``.

    Returns at once with the process handle. The child inherits this process's stdout, stderr,
    working directory and environment. Unlike rlpyt, it is not started under ``taskset``: rlrun
    lays a code out on the CPUs the child may use, so the run pins itself from its affinity
    (``set_affinity``). ``set_egl_device=True`` sets ``EGL_DEVICE_ID`` to the run's ``cuda_idx``
    (for headless rendering on the run's GPU). ``resume=True`` sets ``RLRUN_RESUME=1`` for the child
    (:func:`resume_requested`).
    """
    slot_affinity_code = prepend_run_slot(run_slot, affinity_code)
    python = python_executable or sys.executable or "python"
    cmd = [python, os.fspath(script), slot_affinity_code, os.fspath(log_dir), str(run_ID)]
    cmd += [str(a) for a in args]
    save_variant(variant, log_dir)
    env = dict(os.environ, **{RESUME_ENV: "1"}) if resume else None
    if set_egl_device:
        cuda_idx = _cuda_idx(affinity_from_code(slot_affinity_code))
        if cuda_idx is not None:
            env = dict(env or os.environ, EGL_DEVICE_ID=str(cuda_idx))
            print(f"EGL_DEVICE_ID={cuda_idx} for run slot {run_slot}.", flush=True)
    print(f"Launching run slot {run_slot}: {' '.join(cmd)}", flush=True)
    return subprocess.Popen(cmd, env=env)


def run_experiments(
    script: str,
    affinity_code: str,
    experiment_title: str,
    runs_per_setting: int,
    variants: Sequence[Mapping[str, Any]],
    log_dirs: Sequence[str],
    common_args: Sequence[Any] | None = None,
    runs_args: Sequence[Sequence[Any]] | None = None,
    set_egl_device: bool = False,
    *,
    root_log_dir: str | None = None,
    python_executable: str | None = None,
    poll_interval: float = 1.0,
    timeout: float | None = None,
    shutdown_timeout: float = 10.0,
    raise_on_failure: bool = True,
    resume: bool | str | os.PathLike[str] = False,
) -> list[RunRecord]:
    """Run every variant ``runs_per_setting`` times, each run its own process, as many at once as there are slots.

    The experiment folder is ``get_log_dir(experiment_title, root_log_dir)``:
    ``<root_log_dir or ./data>/local/<YYYYMMDD>/<HHMMSS>/<experiment_title>``. Run ``run_ID`` of
    variant ``i`` is ``python script <slot_affinity_code> <exp_dir>/<log_dirs[i]> <run_ID>
    *common_args *runs_args[i]``, after the variant is saved in that folder; the script's
    ``logger_context`` then logs into ``run_<run_ID>`` below it. Runs start in order (run 0 of every
    variant, then run 1, ...), each on the lowest free run slot of ``affinity_code``
    (``get_n_run_slots``). A failed run does not stop the others.

    Returns a :class:`RunRecord` per run. After all runs end, failures are printed (and written to
    ``experiments_summary.txt``); with ``raise_on_failure`` (the default) they also raise
    :class:`RunsFailedError`. ``timeout`` (seconds, whole grid) stops what still runs (SIGTERM) and
    starts nothing more. On Ctrl-C the running children get SIGINT, on SIGTERM or an error SIGTERM;
    those left after ``shutdown_timeout`` seconds get SIGKILL, and the interrupt is re-raised.
    ``poll_interval``: seconds between checks for a free slot. ``root_log_dir`` replaces ``./data``.

    ``resume``: True (the newest earlier launch of ``experiment_title`` under the root) or an experiment
    folder: launch every run again into that folder's ``<log_dirs[i]>``, with ``RLRUN_RESUME=1`` so the
    script continues its ``run_<run_ID>`` (:func:`resume_requested`); a run that had finished logs nothing
    more, one that never started starts.
    """
    variants, log_dirs = list(variants), [os.fspath(d) for d in log_dirs]
    common = tuple(common_args) if common_args is not None else ()
    per_run = [tuple(a) for a in runs_args] if runs_args is not None else [()] * len(variants)
    _check_inputs(script, affinity_code, runs_per_setting, variants, log_dirs, per_run, poll_interval, timeout)
    n_run_slots = get_n_run_slots(affinity_code)
    for slot in range(n_run_slots):  # a code this machine cannot hold fails here, not in every run
        affinity_from_code(prepend_run_slot(slot, affinity_code))

    if resume is False:
        exp_dir = _claim_exp_dir(get_log_dir(experiment_title, root_log_dir=root_log_dir))
    else:
        exp_dir = _earlier_exp_dir(experiment_title, root_log_dir, None if resume is True else os.fspath(resume))
        print(f"Resuming the runs of {exp_dir}.", flush=True)
    log_exps_tree(exp_dir, log_dirs, runs_per_setting)
    runs = [
        RunRecord(
            log_dir=os.path.join(exp_dir, log_dir),
            run_ID=run_ID,
            variant=variant,
            args=tuple(str(a) for a in common + run_args),
        )
        for run_ID in range(runs_per_setting)
        for variant, log_dir, run_args in zip(variants, log_dirs, per_run)
    ]
    total = len(runs)
    log_num_launched(exp_dir, 0, total)
    print(f"Running {total} run(s) in {exp_dir}, at most {n_run_slots} at once.", flush=True)

    slots: list[tuple[subprocess.Popen[bytes], RunRecord] | None] = [None] * n_run_slots
    deadline = None if timeout is None else time.monotonic() + timeout
    n_launched = 0
    with _sigterm_as_exit():
        try:
            for run in runs:
                free = _wait_for_free_slot(slots, poll_interval, deadline)
                if free is None:
                    print(f"Timeout after {timeout} s: stopping the runs still going.", flush=True)
                    break
                os.makedirs(run.log_dir, exist_ok=True)
                proc = launch_experiment(
                    script=script,
                    run_slot=free,
                    affinity_code=affinity_code,
                    log_dir=run.log_dir,
                    variant=run.variant,
                    run_ID=run.run_ID,
                    args=run.args,
                    python_executable=python_executable,
                    set_egl_device=set_egl_device,
                    resume=resume is not False,
                )
                slots[free] = (proc, run)
                run.run_slot, run.started = free, time.time()
                run.cmd = [os.fspath(a) for a in proc.args] if isinstance(proc.args, list) else [str(proc.args)]
                n_launched += 1
                log_num_launched(exp_dir, n_launched, total)
            else:
                if not _wait_for_all(slots, poll_interval, deadline):
                    print(f"Timeout after {timeout} s: stopping the runs still going.", flush=True)
        except BaseException as e:
            print(f"Launcher stopped ({type(e).__name__}): stopping the runs still going.", file=sys.stderr, flush=True)
            # Ctrl-C: SIGINT lets a run clean up (its sampler workers, its log files); anything else: SIGTERM.
            try:
                _stop_all(
                    slots, shutdown_timeout, signal.SIGINT if isinstance(e, KeyboardInterrupt) else signal.SIGTERM
                )
            except KeyboardInterrupt:  # Ctrl-C again: no more waiting
                _stop_all(slots, 0.0, signal.SIGKILL)
            _report(exp_dir, runs)
            raise
        _stop_all(slots, shutdown_timeout, signal.SIGTERM)  # only runs left at a timeout

    failed = _report(exp_dir, runs, echo=not raise_on_failure)
    if failed and raise_on_failure:
        raise RunsFailedError(
            f"{len(failed)} of {total} run(s) failed; see {os.path.join(exp_dir, SUMMARY)}:\n"
            + "\n".join(_line(r) for r in failed),
            failed,
            runs,
        )
    return runs


def _claim_exp_dir(exp_dir: str) -> str:
    """``exp_dir``, or ``<exp_dir>-2``, ``-3``, ... if another launch took it (same title, same second).

    Two grids in one folder would overwrite each other's variant files; the claim is an exclusive
    create of ``experiments_tree.txt``.
    """
    for attempt in range(1, 1000):
        candidate = exp_dir if attempt == 1 else f"{exp_dir}-{attempt}"
        os.makedirs(candidate, exist_ok=True)
        try:
            with open(os.path.join(candidate, EXPS_TREE), "x", encoding="utf-8"):
                return candidate
        except FileExistsError:
            continue
    raise RuntimeError(f"{exp_dir} and {exp_dir}-2 .. -999 are all taken by other launches; use another title.")


def _earlier_exp_dir(experiment_title: str, root_log_dir: str | None, given: str | None) -> str:
    """The experiment folder a resumed launch goes back to: ``given``, or the newest launch of the title
    (``<root>/local/<date>/<time>/<title>[-N]``, latest date, time and N)."""
    if given is None:
        root = os.path.dirname(os.path.dirname(os.path.dirname(get_log_dir(experiment_title, root_log_dir))))
        found = glob.glob(os.path.join(root, "*", "*", experiment_title)) + glob.glob(
            os.path.join(root, "*", "*", f"{experiment_title}-*")
        )

        def order(path: str) -> tuple[str, int]:
            suffix = os.path.basename(path)[len(experiment_title) + 1 :]
            return os.path.dirname(path), int(suffix) if suffix.isdigit() else 1

        found = [p for p in found if os.path.isfile(os.path.join(p, EXPS_TREE))]
        if not found:
            raise FileNotFoundError(
                f"run_experiments(resume=True): no earlier launch of {experiment_title!r} under {root}; launch it "
                "without resume first, or pass resume=<experiment folder>."
            )
        return max(found, key=order)
    if not os.path.isfile(os.path.join(given, EXPS_TREE)):
        raise FileNotFoundError(
            f"run_experiments(resume={given!r}): that folder holds no {EXPS_TREE}, so no launch made it; pass the "
            "experiment folder an earlier run_experiments printed (Running ... run(s) in <folder>)."
        )
    return os.path.abspath(given)


def _check_inputs(
    script: str,
    affinity_code: str,
    runs_per_setting: int,
    variants: list[Mapping[str, Any]],
    log_dirs: list[str],
    per_run: list[tuple[Any, ...]],
    poll_interval: float,
    timeout: float | None,
) -> None:
    """Refuse a grid that would fail part-way, before any run starts."""
    if not os.path.isfile(script):
        raise FileNotFoundError(
            f"run_experiments: script {script!r} is not a file (relative paths start at the working directory "
            f"{os.getcwd()!r})."
        )
    if not isinstance(affinity_code, str):
        raise TypeError(f"affinity_code must be a code string from encode_affinity(); got {affinity_code!r}.")
    if isinstance(runs_per_setting, bool) or not isinstance(runs_per_setting, int) or runs_per_setting < 1:
        raise ValueError(f"runs_per_setting must be an int >= 1; got {runs_per_setting!r}.")
    if len(variants) != len(log_dirs):
        raise ValueError(
            f"run_experiments got {len(variants)} variants but {len(log_dirs)} log_dirs; pass the two lists "
            "make_variants() returns."
        )
    if len(per_run) != len(variants):
        raise ValueError(f"runs_args has {len(per_run)} entries but there are {len(variants)} variants: one each.")
    if len(set(log_dirs)) != len(log_dirs):
        raise ValueError("run_experiments: log_dirs repeat, so two settings would share a folder; make them unique.")
    for i, variant in enumerate(variants):
        _jsonable(variant, f"variants[{i}]")
    if poll_interval <= 0 or (timeout is not None and timeout <= 0):
        raise ValueError(f"poll_interval and timeout must be > 0; got {poll_interval!r} and {timeout!r}.")


def _reap(slots: list[tuple[subprocess.Popen[bytes], RunRecord] | None]) -> None:
    """Record the runs that have ended and free their slots."""
    for i, entry in enumerate(slots):
        if entry is None:
            continue
        proc, run = entry
        code = proc.poll()
        if code is None:
            continue
        run.returncode, run.ended, slots[i] = code, time.time(), None
        if code != 0:
            print(f"Run failed ({run.describe()}): {run.log_dir} run_ID {run.run_ID}.", file=sys.stderr, flush=True)


def _wait_for_free_slot(
    slots: list[tuple[subprocess.Popen[bytes], RunRecord] | None], poll_interval: float, deadline: float | None
) -> int | None:
    """The lowest free slot once there is one; None at the deadline."""
    while True:
        _reap(slots)
        if None in slots:
            return slots.index(None)
        if not _sleep_until(poll_interval, deadline):
            return None


def _wait_for_all(
    slots: list[tuple[subprocess.Popen[bytes], RunRecord] | None], poll_interval: float, deadline: float | None
) -> bool:
    """Wait until every run has ended; False at the deadline."""
    while True:
        _reap(slots)
        if all(entry is None for entry in slots):
            return True
        if not _sleep_until(poll_interval, deadline):
            return False


def _sleep_until(poll_interval: float, deadline: float | None) -> bool:
    """Sleep one poll interval (less if the deadline is nearer); False once the deadline has passed."""
    if deadline is None:
        time.sleep(poll_interval)
        return True
    left = deadline - time.monotonic()
    if left <= 0:
        return False
    time.sleep(min(poll_interval, left))
    return True


def _stop_all(
    slots: list[tuple[subprocess.Popen[bytes], RunRecord] | None], shutdown_timeout: float, first: signal.Signals
) -> None:
    """Send ``first`` to every running child, SIGKILL those left after ``shutdown_timeout`` s; wait for all."""
    running = [entry for entry in slots if entry is not None]
    for proc, run in running:
        if proc.poll() is None:
            run.stopped = True
            proc.send_signal(first)
    end = time.monotonic() + max(0.0, shutdown_timeout)
    for proc, _ in running:
        try:
            proc.wait(timeout=max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
    for proc, run in running:
        try:
            run.returncode = proc.wait(timeout=5.0)  # after SIGKILL: only an unkillable (D-state) child waits
        except subprocess.TimeoutExpired:
            print(f"Run of {run.log_dir} (PID {proc.pid}) did not die after SIGKILL.", file=sys.stderr, flush=True)
        run.ended = time.time()
    slots[:] = [None] * len(slots)


@contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """Make SIGTERM raise SystemExit meanwhile, so the children are stopped too (main thread only)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) not in (
        signal.SIG_DFL,
        None,
    ):
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _line(run: RunRecord) -> str:
    return f"  {run.describe():<26} run_ID {run.run_ID}  {run.log_dir}"


def _report(exp_dir: str, runs: list[RunRecord], echo: bool = True) -> list[RunRecord]:
    """Write (and with ``echo`` print) the outcome of the grid; return the runs that did not succeed."""
    failed = [r for r in runs if not r.ok]
    lines = [f"{len(runs) - len(failed)} of {len(runs)} run(s) succeeded."]
    if failed:
        lines.append("Runs that did not succeed (how, run_ID, log dir):")
        lines += [_line(r) for r in failed]
    text = "\n".join(lines)
    if echo or not failed:
        print(text, file=sys.stderr if failed else sys.stdout, flush=True)
    try:
        with open(os.path.join(exp_dir, SUMMARY), "w", encoding="utf-8") as f:
            f.write(text + "\n")
    except OSError as e:
        print(f"Could not write {SUMMARY} in {exp_dir}: {e}", file=sys.stderr, flush=True)
    return failed
