"""Find the Python code blocks of the docs pages and run each one as a script, as a reader would.

The conventions (docs/writing_docs.md says the same for writers):

- Every ```` ```python ```` block runs on its own: ``python block.py`` in a fresh process, in an empty
  working folder, with nothing from the blocks before it.
- A block whose fence names a file, ```` ```python title="corridor.py" ````, is a file the page asks
  the reader to save. It is saved under that name in the page's working folder (and run, like every
  block), so the blocks below it may import it, as the reader's own scripts would. That is the only
  way one block may use another.
- A block that cannot run alone on purpose (a fragment of a larger script) starts with a comment line
  ``# fragment: <why>``, which the reader sees too. It is compiled, not run. Tutorials have none.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

# A fence at the start of a line: ```python, optional attributes (title="x.py"), the code, the closing ```.
_FENCE = re.compile(r"^```python(?P<attrs>[^\n]*)\n(?P<code>.*?)^```[ \t]*$", re.S | re.M)
_TITLE = re.compile(r'title="(?P<title>[^"]+)"')
FRAGMENT_MARK = "# fragment:"


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    code: str
    title: str | None  # the file name a titled block is saved as

    @property
    def is_fragment(self) -> bool:
        return self.code.lstrip().startswith(FRAGMENT_MARK)

    @property
    def id(self) -> str:
        return f"{self.page.name}:{self.line}"


def python_blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(text):
        title = _TITLE.search(match.group("attrs"))
        line = text.count("\n", 0, match.start()) + 1
        blocks.append(Block(page, line, match.group("code"), title.group("title") if title else None))
    return blocks


def run_block(block: Block, workdir: Path, timeout: float) -> subprocess.CompletedProcess:
    """Save the block (under its title, else a name of its own) in ``workdir`` and run it there.

    The repository goes first on ``PYTHONPATH`` and the inherited path is kept, so a run with extra
    packages on ``PYTHONPATH`` (the GPU machine's carried wheels) still finds them.
    """
    name = block.title or f"block_{block.line}.py"
    script = workdir / name
    script.write_text(block.code, encoding="utf-8")
    inherited = os.environ.get("PYTHONPATH")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), *([inherited] if inherited else [])]))
    env["MPLBACKEND"] = "Agg"  # plots go to files; no display here
    return subprocess.run([sys.executable, name], cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
