"""Puts this directory on sys.path, so tests and sampler workers import masked_cartpole by name."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
