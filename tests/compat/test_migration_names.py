"""The inventory of rlpyt's public names in docs/migration.md matches rlrun.

The section "rlpyt's public names in rlrun" is the source of truth: every module it marks present must
import from ``rlrun.<same path>`` and have every name it lists (renamed names included), and its module
count must add up. Nothing of rlpyt itself is read here.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

DOC = Path(__file__).resolve().parents[2] / "docs" / "migration.md"
SECTION = "## rlpyt's public names in rlrun"
MODULE_HEADER = ["rlpyt module", "status", "names in rlrun", "notes"]
GROUP_HEADER = ["rlpyt package", "modules", "status", "instead"]
STATUS = re.compile(r"^(present|removed|later \(#\d+\))$")
DOTTED = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*$")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# One note entry of a present module: "`A`, `B`: renamed `C`" | "...: later (#n)" | "...: removed..."
ENTRY = re.compile(r"^(?P<names>`\w+`(?:, `\w+`)*): (?P<fate>renamed `(?P<new>\w+)`|later \(#\d+\)|removed\b.*)$")


@dataclass
class Row:
    module: str  # rlpyt path
    status: str
    names: list[str] = field(default_factory=list)  # present in rlrun under the same name
    renamed: dict[str, str] = field(default_factory=dict)  # rlpyt name -> rlrun name
    accounted: list[str] = field(default_factory=list)  # rlpyt names listed as later or removed
    notes: str = ""

    @property
    def rlrun_module(self) -> str:
        return "rlrun" + self.module[len("rlpyt") :]


def _section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end != -1 else len(text)]


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _backticked(cell: str) -> list[str]:
    """The names of a cell made only of backticked names separated by commas (or "—" for none)."""
    if cell in ("—", ""):
        return []
    items = [i.strip() for i in cell.split(",")]
    assert all(i.startswith("`") and i.endswith("`") and i.count("`") == 2 for i in items), cell
    return [i[1:-1] for i in items]


def _parse() -> tuple[list[Row], str]:
    section = _section()
    rows: list[Row] = []
    header = None
    for line in section.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            assert cells in (MODULE_HEADER, GROUP_HEADER), f"unknown table header: {line}"
            header = cells
            continue
        if set("".join(cells)) <= set("-: "):
            continue  # the |---| rule
        assert len(cells) == 4, f"expected 4 cells: {line}"
        if header == MODULE_HEADER:
            (module,), status, names, notes = _backticked(cells[0]), cells[1], cells[2], cells[3]
            row = Row(module, status, _backticked(names), notes=notes)
            if status == "present" and notes:
                for entry in notes.split("; "):
                    m = ENTRY.match(entry)
                    assert m, f"{module}: note {entry!r} is not '`Name`: renamed `New` | later (#n) | removed ...'"
                    listed = _backticked(m["names"])
                    if m["new"]:
                        assert len(listed) == 1, f"{module}: rename one name at a time: {entry!r}"
                        row.renamed[listed[0]] = m["new"]
                    else:
                        row.accounted += listed
            rows.append(row)
        else:
            (package,), modules, status, notes = _backticked(cells[0]), cells[1], cells[2], cells[3]
            rows += [Row(f"{package}.{m}", status, notes=notes) for m in _backticked(modules)]
    return rows, section


ROWS, SECTION_TEXT = _parse()
PRESENT = [r for r in ROWS if r.status == "present"]


def test_every_module_is_listed_once_with_a_valid_status():
    modules = [r.module for r in ROWS]
    assert len(modules) == len(set(modules)), sorted({m for m in modules if modules.count(m) > 1})
    for r in ROWS:
        assert r.module.startswith("rlpyt.") and DOTTED.match(r.module), r.module
        assert STATUS.match(r.status), f"{r.module}: status {r.status!r}"
        if r.status == "removed":
            assert r.notes, f"{r.module}: a removed module needs what to write instead"
        if r.status != "present":
            assert not r.names, f"{r.module}: only present modules list names in rlrun"


def test_module_count_matches_the_summary_line():
    m = re.search(r"The inventory lists (\d+) modules: (\d+) present, (\d+) later, (\d+) removed\.", SECTION_TEXT)
    assert m, "the summary line 'The inventory lists N modules: P present, L later, R removed.' is missing"
    total, present, later, removed = map(int, m.groups())
    assert len(ROWS) == total
    assert len(PRESENT) == present
    assert sum(r.status.startswith("later") for r in ROWS) == later
    assert sum(r.status == "removed" for r in ROWS) == removed
    assert present + later + removed == total


def test_present_modules_list_each_name_once():
    for r in PRESENT:
        listed = r.names + list(r.renamed) + r.accounted
        assert all(NAME.match(n) for n in listed), r.module
        assert len(listed) == len(set(listed)), f"{r.module}: a name is listed twice"
        assert listed, f"{r.module}: a present module lists no rlpyt names"


@pytest.mark.parametrize("row", PRESENT, ids=[r.module for r in PRESENT])
def test_present_module_imports_with_its_names(row):
    module = importlib.import_module(row.rlrun_module)
    missing = [n for n in row.names if not hasattr(module, n)]
    assert not missing, f"{row.rlrun_module} lacks {missing}, which docs/migration.md lists as present"
    missing_new = {old: new for old, new in row.renamed.items() if not hasattr(module, new)}
    assert not missing_new, f"{row.rlrun_module} lacks the new names of {missing_new}"
