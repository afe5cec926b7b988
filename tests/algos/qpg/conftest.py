"""Puts this directory on sys.path, so the tests import qpg_toy_models and pendulum_runs by name."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
