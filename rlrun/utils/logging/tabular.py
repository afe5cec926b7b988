"""The two renderings of a row of diagnostics: a CSV file with fixed columns and a console table.

Used by :mod:`rlrun.utils.logging.logger`; nothing here keeps global state.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import os
from typing import Any

import numpy as np
import torch

__all__ = ["CsvOutput", "to_scalar", "format_value", "format_table"]


def to_scalar(value: Any) -> Any:
    """Turn numpy and torch scalars (and one-element arrays) into Python numbers; leave the rest as is."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return value.item()
    if isinstance(value, np.ndarray) and value.size == 1:
        return value.item()
    if isinstance(value, np.generic):
        return value.item()
    return value


def format_value(value: Any) -> str:
    """The text of one CSV cell: ints exactly, floats round-trippable, anything else through ``str``."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return str(value)


def _console_value(value: Any) -> str:
    if isinstance(value, bool) or isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        return "nan" if math.isnan(value) else f"{value:.6g}"
    return str(value)


def format_table(row: dict[str, Any]) -> list[str]:
    """Lines of a two-column table (key, value) for the console and ``debug.log``."""
    if not row:
        return []
    cells = [(key, _console_value(value)) for key, value in row.items()]
    key_width = max(len(k) for k, _ in cells)
    value_width = max(len(v) for _, v in cells)
    rule = "-" * (key_width + 2 + value_width)
    return [rule, *(f"{k:<{key_width}}  {v:>{value_width}}" for k, v in cells), rule]


class CsvOutput:
    """``progress.csv``: one row per dump, with the columns fixed by the first row.

    Later rows write an empty cell for a column they lack. A key that was not in the first row is not
    written; :meth:`write_row` returns such keys the first time it meets them, so the caller can warn
    once. Fixed columns keep the file readable by every CSV tool without rewriting it mid-run.

    ``append=True`` continues an existing file (a resumed run): its header gives the columns. The file
    is written in binary, so :meth:`state` (columns and size in bytes) and :meth:`rewind` are exact:
    a resumed run cuts the rows written after its checkpoint and appends from there.
    """

    def __init__(self, path: str, append: bool = False) -> None:
        self.path = path
        self.columns: list[str] | None = None
        self._column_set: set[str] = set()
        self._dropped: set[str] = set()
        exists = append and os.path.exists(path)
        self._file = open(path, "r+b" if exists else "wb")  # closed in close()
        if exists:
            self._file.seek(0)
            header = self._file.readline()
            if header.endswith(b"\n"):
                self._set_columns(next(csv.reader([header.decode("utf-8")])))
            else:  # empty, or cut inside the header: start the file again
                self._file.truncate(0)
            self._file.seek(0, os.SEEK_END)

    def _set_columns(self, columns: list[str] | None) -> None:
        self.columns = None if columns is None else list(columns)
        self._column_set = set(self.columns or ())

    def _write_line(self, values: list[str]) -> None:
        text = io.StringIO()
        csv.writer(text).writerow(values)
        self._file.write(text.getvalue().encode("utf-8"))

    def write_row(self, row: dict[str, Any]) -> list[str]:
        """Append ``row`` (key -> value) and flush; return keys dropped here for the first time."""
        if self.columns is None:
            self._set_columns(list(row))
            self._write_line(list(row))
        assert self.columns is not None
        newly_dropped = [k for k in row if k not in self._column_set and k not in self._dropped]
        self._dropped.update(newly_dropped)
        self._write_line([format_value(row[c]) if c in row else "" for c in self.columns])
        self._file.flush()
        return newly_dropped

    def state(self) -> dict[str, Any]:
        """``{"columns": [...] or None, "size": bytes written}``: where a checkpoint leaves the file."""
        self._file.flush()
        return dict(columns=None if self.columns is None else list(self.columns), size=self._file.tell())

    def rewind(self, state: dict[str, Any] | None) -> bool:
        """Cut the file back to ``state`` (from :meth:`state`; None: back to empty) and append from there.

        Returns False, leaving the file as it is, when it is shorter than ``state`` says (it is not the
        file the state was taken from)."""
        self._file.flush()
        size = 0 if state is None else int(state["size"])
        if self._file.seek(0, os.SEEK_END) < size:
            return False
        self._file.truncate(size)
        self._file.seek(size)
        self._set_columns(None if state is None or size == 0 else state["columns"])
        self._dropped = set()
        return True

    def close(self) -> None:
        self._file.close()
