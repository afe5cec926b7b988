"""The Python blocks of the docs pages other than the tutorials: each one defines every name it uses
(checked on every test run, by ruff, in a fraction of a second), and each one runs as written (run
under ``pytest -m slow``: some train for a minute). The conventions are in ``doc_blocks``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from doc_blocks import DOCS, python_blocks, run_block  # noqa: E402

PAGES = sorted(DOCS.glob("*.md"))  # the tutorials too: the static check is cheap
GUIDE_PAGES = [p for p in PAGES if not p.name.startswith("tutorial_") and python_blocks(p)]


def _write_page_blocks(page: Path, folder: Path) -> list[Path]:
    """Each runnable block of ``page`` as a file in ``folder`` (titled blocks under their titles)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for block in python_blocks(page):
        if block.is_fragment:
            continue
        path = folder / (block.title or f"block_{block.line}.py")
        path.write_text(block.code, encoding="utf-8")
        files.append(path)
    return files


def test_every_runnable_block_defines_the_names_it_uses(tmp_path):
    files = []
    for page in PAGES:
        files += _write_page_blocks(page, tmp_path / page.stem)
    assert len(files) > 30
    # F821: undefined name (the NameError a reader would meet); E9: the block does not parse.
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", "F821,E9", *map(str, files)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    # Name each failure by page and line, as a writer finds it.
    report = result.stdout.replace(str(tmp_path) + "/", "")
    assert result.returncode == 0, f"docs blocks use names they never define (docs/<page>/block_<line>.py):\n{report}"


def test_fragments_parse_and_are_few():
    fragments = [block for page in PAGES for block in python_blocks(page) if block.is_fragment]
    for block in fragments:
        compile(block.code, block.id, "exec")  # a SyntaxError names the page and line
    assert len(fragments) <= 7, [b.id for b in fragments]  # a fragment is the exception, not the rule


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("page", GUIDE_PAGES, ids=[p.stem for p in GUIDE_PAGES])
def test_every_block_of_the_page_runs_and_exits_0(page, tmp_path):
    for block in python_blocks(page):
        if block.is_fragment:
            continue
        result = run_block(block, tmp_path, timeout=900)
        assert result.returncode == 0, (
            f"{block.id} exited with {result.returncode}.\n--- stdout (end) ---\n{result.stdout[-3000:]}"
            f"\n--- stderr (end) ---\n{result.stderr[-5000:]}"
        )
