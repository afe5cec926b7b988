"""Catch the script without ``if __name__ == "__main__":`` that starts workers under spawn or forkserver.

A spawn (or forkserver) child imports the parent's main script again before it runs its target. A
script that builds and trains its runner at top level then starts training once more inside every
child, which tries to start workers of its own while it is still being set up. Python refuses that
deep inside, and the parent only sees its worker die.

The check is made where it cannot be wrong: in the child, at the moment the re-imported script asks
for workers (:func:`refuse_while_bootstrapping`, called by the parallel samplers before they start
anything). The child prints what is missing and exits with :data:`MAIN_GUARD_EXIT_CODE`; the parent,
seeing a worker end with that code during its start-up, raises an error naming the guard
(:func:`missing_guard_message`).
"""

from __future__ import annotations

import multiprocessing
import sys

__all__ = ["MAIN_GUARD_EXIT_CODE", "is_bootstrapping", "refuse_while_bootstrapping", "missing_guard_message"]

# The exit status of a child that found its parent's script without the guard. Python itself exits
# with 1 after an exception and 2 after a usage error; this one is rlrun's alone.
MAIN_GUARD_EXIT_CODE = 86

_FIX = (
    'Put the code that builds and trains the runner under `if __name__ == "__main__":` (or in a function '
    "called only from there), as every script that starts processes under spawn or forkserver must; or use "
    "start_method='fork' (Linux)."
)


def is_bootstrapping() -> bool:
    """True in a spawn or forkserver child while it imports the parent's main script again."""
    # multiprocessing marks the process so during its preparation, and checks the same flag itself
    # before it refuses to start a process from there.
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


def main_script() -> str:
    """The script the parent runs, as a child re-imports it (for messages)."""
    main = sys.modules.get("__mp_main__") or sys.modules.get("__main__")
    # An interactive __main__ (a REPL, a notebook) has no __file__ among its globals.
    script = vars(main).get("__file__") if main is not None else None
    return str(script or sys.argv[0] or "the main script")


def refuse_while_bootstrapping(what: str) -> None:
    """In a child that is re-importing its parent's script: print what is missing and exit with
    :data:`MAIN_GUARD_EXIT_CODE`, before ``what`` (e.g. "CpuSampler.initialize()") starts anything."""
    if not is_bootstrapping():
        return
    print(
        f"rlrun: {what} was called while a spawn or forkserver worker was importing the main script "
        f"{main_script()} again: the script starts training at import time. {_FIX}",
        file=sys.stderr,
        flush=True,
    )
    raise SystemExit(MAIN_GUARD_EXIT_CODE)


def missing_guard_message(start_method: str) -> str:
    """What the parent says when a worker ended with :data:`MAIN_GUARD_EXIT_CODE` during its start-up."""
    return (
        f'{main_script()} has no `if __name__ == "__main__":` guard around its training code. '
        f"A {start_method} worker imports the main script again before it runs, and that script started "
        f"training anew inside the worker. {_FIX}"
    )
