"""Puts this directory and the PG tests' (masked_cartpole) on sys.path, so tests and sampler workers
import the helper modules by name."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
for path in (HERE, HERE.parent / "pg"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
