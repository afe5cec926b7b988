"""Functions that test child processes run.

They live apart from the test modules so that spawned and forkserver children import only numpy and
rlrun.utils (not torch or pytest) and start in a fraction of a second.
"""

from __future__ import annotations

import os


def write_columns(columns, value: float) -> None:
    """Fill every field of a namedarraytuple of column slices ``buf[:, i:i+1]`` with ``value``."""
    columns.observation[:] = value
    columns.reward[:] = value
    columns.info.count[:] = int(value)


def echo(obj, queue) -> None:
    """Send back what the child received in its Process arguments, with the child's pid."""
    queue.put((os.getpid(), obj))
