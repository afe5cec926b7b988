"""Puts this directory on sys.path (spawned workers import faulty_envs by name) and checks for leaks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from parallel_helpers import LeakCheck  # noqa: E402


@pytest.fixture
def leak_check():
    """Use ``leak_check.assert_clean()`` after shutting a sampler down; also checked at teardown."""
    check = LeakCheck()
    yield check
    check.assert_clean()
