"""The two renderings of a row of diagnostics: a CSV file whose columns grow and a console table.

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


def to_scalar(value: object) -> object:
    """Turn numpy and torch scalars (and one-element arrays) into Python numbers; leave the rest as is."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return value.item()
    if isinstance(value, np.ndarray) and value.size == 1:
        return value.item()
    if isinstance(value, np.generic):
        return value.item()
    return value


def format_value(value: object) -> str:
    """The text of one CSV cell: ints exactly, floats round-trippable, anything else through ``str``."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return str(value)


def _console_value(value: object) -> str:
    if isinstance(value, bool) or isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        return "nan" if math.isnan(value) else f"{value:.6g}"
    return str(value)


def _csv_line(values: list[str]) -> bytes:
    text = io.StringIO()
    csv.writer(text).writerow(values)
    return text.getvalue().encode("utf-8")


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
    """``progress.csv``: one row per dump; a key first met in a later row adds a column.

    A new column goes at the end: the file is rewritten with the wider header and the earlier rows get
    an empty cell there, so nothing a user records is lost and every CSV tool reads the file. The
    rewrite goes to a temporary file that replaces the old one, so a crash leaves one whole file.
    A row without some column gets an empty cell.

    ``append=True`` continues an existing file (a resumed run): its header gives the columns. The file
    is written in binary, so :meth:`state` (columns, rows and size in bytes) and :meth:`rewind` are
    exact: a resumed run cuts the rows written after its checkpoint and appends from there.
    """

    def __init__(self, path: str, append: bool = False) -> None:
        self.path = path
        self.columns: list[str] | None = None
        self._column_set: set[str] = set()
        self._rows = 0
        exists = append and os.path.exists(path)
        self._file = open(path, "r+b" if exists else "w+b")  # closed in close(); read back to add columns
        if exists:
            self._file.seek(0)
            header = self._file.readline()
            if header.endswith(b"\n"):
                self._set_columns(next(csv.reader([header.decode("utf-8")])))
                self._rows = len(self._records()) - 1
            else:  # empty, or cut inside the header: start the file again
                self._file.truncate(0)
            self._file.seek(0, os.SEEK_END)

    def _set_columns(self, columns: list[str] | None) -> None:
        self.columns = None if columns is None else list(columns)
        self._column_set = set(self.columns or ())

    def _write_line(self, values: list[str]) -> None:
        self._file.write(_csv_line(values))

    def _records(self) -> list[list[str]]:
        """Every whole record in the file, header first (a line cut short by a crash is left out)."""
        self._file.flush()
        self._file.seek(0)
        data = self._file.read()
        self._file.seek(0, os.SEEK_END)
        whole = data[: data.rfind(b"\n") + 1].decode("utf-8")
        return list(csv.reader(io.StringIO(whole, newline="")))

    def _rewrite(self, columns: list[str], n_rows: int) -> None:
        """Write the file anew with ``columns`` and its first ``n_rows`` rows, through a temporary file."""
        records = self._records()
        old_columns, rows = records[0], records[1 : 1 + n_rows]
        temporary = f"{self.path}.rewrite"
        with open(temporary, "wb") as f:
            f.write(_csv_line(columns))
            for cells in rows:
                by_column = dict(zip(old_columns, cells))
                f.write(_csv_line([by_column.get(c, "") for c in columns]))
        self._file.close()
        os.replace(temporary, self.path)
        self._file = open(self.path, "r+b")
        self._file.seek(0, os.SEEK_END)
        self._set_columns(columns)
        self._rows = len(rows)

    def write_row(self, row: dict[str, Any]) -> list[str]:
        """Append ``row`` (key -> value) and flush; return the keys that added a column here."""
        if self.columns is None:
            self._set_columns(list(row))
            self._write_line(list(row))
        assert self.columns is not None
        added = [k for k in row if k not in self._column_set]
        if added:
            self._rewrite(self.columns + added, self._rows)
        self._write_line([format_value(row[c]) if c in row else "" for c in self.columns])
        self._rows += 1
        self._file.flush()
        return added

    def state(self) -> dict[str, Any]:
        """``{"columns": [...] or None, "rows": data rows, "size": bytes}``: where a checkpoint leaves the file."""
        self._file.flush()
        return dict(
            columns=None if self.columns is None else list(self.columns), rows=self._rows, size=self._file.tell()
        )

    def rewind(self, state: dict[str, Any] | None) -> bool:
        """Cut the file back to ``state`` (from :meth:`state`; None: back to empty) and append from there.

        Columns added after the state was taken are dropped with the rows that filled them. Returns
        False, leaving the file as it is, when it holds less than ``state`` says (it is not the file
        the state was taken from)."""
        self._file.flush()
        size = 0 if state is None else int(state["size"])
        if size == 0 or state is None:
            self._file.truncate(0)
            self._file.seek(0)
            self._set_columns(None)
            self._rows = 0
            return True
        if self.columns == state["columns"]:  # no column added since: cut at the byte
            if self._file.seek(0, os.SEEK_END) < size:
                return False
            self._file.truncate(size)
            self._file.seek(size)
            self._rows = len(self._records()) - 1
            return True
        rows = state.get("rows")  # checkpoints from before columns could grow have no row count
        if rows is None or self.columns is None or self._rows < rows or not set(state["columns"]) <= self._column_set:
            return False
        self._rewrite(list(state["columns"]), int(rows))
        return True

    def close(self) -> None:
        self._file.close()
