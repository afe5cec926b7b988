"""The two renderings of a row of diagnostics: a CSV file with fixed columns and a console table.

Used by :mod:`rlrun.utils.logging.logger`; nothing here keeps global state.
"""

from __future__ import annotations

import csv
import math
import numbers
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
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.columns: list[str] | None = None
        self._column_set: set[str] = set()
        self._dropped: set[str] = set()
        self._file = open(path, "w", newline="", encoding="utf-8")  # closed in close()
        self._writer = csv.writer(self._file)

    def write_row(self, row: dict[str, Any]) -> list[str]:
        """Append ``row`` (key -> value) and flush; return keys dropped here for the first time."""
        if self.columns is None:
            self.columns = list(row)
            self._column_set = set(self.columns)
            self._writer.writerow(self.columns)
        newly_dropped = [k for k in row if k not in self._column_set and k not in self._dropped]
        self._dropped.update(newly_dropped)
        self._writer.writerow([format_value(row[c]) if c in row else "" for c in self.columns])
        self._file.flush()
        return newly_dropped

    def close(self) -> None:
        self._file.close()
