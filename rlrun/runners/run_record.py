"""``run.json``: what a run is and how it was started, written by the runner into its run folder.

``params.json`` holds what the script chose to log; ``run.json`` holds what every run has, whatever
door it came in by (``rlrun train``, a bundled example, a user's script): the classes of its parts,
its env, its planned steps, and the command line that started it. ``rlrun info RUN_DIR`` reads it to
say what the run is, how far it got and which command continues it.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import shlex
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from rlrun.utils.logging.context import jsonable

__all__ = [
    "RunRecord",
    "RUN_RECORD_FILE",
    "AGENT_FILE",
    "write_run_record",
    "read_run_record",
    "qualified_name",
    "resume_advice",
    "import_qualified",
    "code_version",
]

AGENT_FILE = "agent.pt"  # the agent object as built, for `rlrun play` of any run (weights: params.pkl)

RUN_RECORD_FILE = "run.json"


def qualified_name(obj: object) -> str:
    """``module.QualName`` of a class or function, else of the object's class."""
    target = obj if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__") else type(obj)
    return f"{target.__module__}.{target.__qualname__}"


@functools.cache
def code_version() -> str:
    """Which rlrun ran: ``rlrun 0.1.0``, plus ``git <commit>`` (and ``+ local changes`` when ``rlrun/`` differs
    from it) when the package is imported from a git checkout, so a curve can name the code that made it."""
    import rlrun

    package = os.path.dirname(os.path.abspath(rlrun.__file__))
    version = f"rlrun {rlrun.__version__}"
    try:
        head = subprocess.run(
            ["git", "-C", package, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5
        )
        if head.returncode != 0:
            return version  # an installed copy, not a checkout
        changes = subprocess.run(
            ["git", "-C", package, "status", "--porcelain", "--untracked-files=no", "--", "."],
            capture_output=True, text=True, timeout=5,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return version  # no git on this machine, or a checkout too slow to ask
    dirty = " + local changes" if changes.returncode == 0 and changes.stdout.strip() else ""
    return f"{version}, git {head.stdout.strip()}{dirty}"


@dataclass
class RunRecord:
    """One run's description; every field is plain JSON."""

    runner: str
    algo: str
    agent: str
    sampler: str
    env: str  # the sampler's EnvCls
    env_kwargs: dict[str, Any]
    n_steps: int
    n_itr: int
    itr_batch_size: int
    log_interval_steps: int
    checkpoints: bool  # whether the runner writes checkpoints (so the run can resume)
    argv: list[str] = field(default_factory=lambda: list(sys.argv))
    cwd: str = field(default_factory=os.getcwd)
    python: str = sys.executable
    started: str = field(default_factory=lambda: datetime.datetime.now().isoformat(timespec="seconds"))
    code: str = field(default_factory=code_version)


SITTING_KEYS = ("argv", "cwd", "started", "code")


def write_run_record(run_dir: str | os.PathLike[str], record: RunRecord) -> str:
    """Write ``run.json`` into ``run_dir``; return its path.

    A resumed run rewrites it and keeps its history: ``first_start`` is the command line of the run's very
    first start, however often it was resumed, and ``sittings`` lists every start (command, time and code
    version), oldest first, so a curve trained over several sittings says which code made each part.
    """
    path = os.path.join(run_dir, RUN_RECORD_FILE)
    data = jsonable(asdict(record))
    assert isinstance(data, dict)  # a dataclass as JSON is an object
    this_sitting = {k: data[k] for k in SITTING_KEYS}
    earlier = read_run_record(run_dir)
    if earlier is None:
        data["sittings"] = [this_sitting]
    else:
        first = earlier.get("first_start") or {k: earlier[k] for k in SITTING_KEYS if k in earlier}
        data["first_start"] = first
        if "sittings" in earlier:
            before = earlier["sittings"]
        else:  # written before sittings were kept: it knows its first start and, if resumed, its latest
            latest = {k: earlier[k] for k in SITTING_KEYS if k in earlier}
            before = [first] if latest == first else [first, latest]
        data["sittings"] = [*before, this_sitting]
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
    os.replace(path + ".tmp", path)
    return path


def read_run_record(run_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The ``run.json`` of ``run_dir`` as a dict, or None when there is none (a run of an older rlrun)."""
    path = os.path.join(run_dir, RUN_RECORD_FILE)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def started_by_rlrun_train(argv: list[str]) -> bool:
    """Whether ``argv`` is an ``rlrun train`` (or ``python -m rlrun train``) command line."""
    return len(argv) > 1 and argv[1] == "train" and os.path.basename(argv[0]) in ("rlrun", "__main__.py")


def resume_advice(run_dir: str | os.PathLike[str] | None, checkpoints: bool, argv: list[str] | None = None) -> str:
    """The sentence that tells how to continue this run, for the door it came in by."""
    if not checkpoints:
        return "This run writes no checkpoints, so it cannot be resumed; give the runner checkpoint=True next time."
    argv = list(sys.argv if argv is None else argv)
    if started_by_rlrun_train(argv):
        return f"Continue it with: rlrun train --resume {shlex.quote(os.fspath(run_dir or '.'))}"
    script = shlex.join(["python", *argv])
    return (
        f"Continue it by running `{script}` again with resume (the bundled examples take --resume; a script "
        "passes resume=True to logger_context and the runner: docs/checkpoints.md)."
    )


def import_qualified(name: str) -> Any:
    """The object a :func:`qualified_name` names (``package.module.Name``), imported."""
    import importlib

    module_name, _, attribute = name.rpartition(".")
    while module_name:
        try:
            target: Any = importlib.import_module(module_name)
        except ImportError:
            module_name, _, outer = module_name.rpartition(".")
            attribute = f"{outer}.{attribute}"
            continue
        for part in attribute.split("."):
            target = getattr(target, part)
        return target
    raise ImportError(f"cannot import {name!r}")
