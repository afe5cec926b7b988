"""Puts this directory and the parallel sampler tests' helpers on sys.path (spawned children import
modules from here by name) and offers the leak check."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "samplers" / "parallel"))

from parallel_helpers import LeakCheck  # noqa: E402


@pytest.fixture
def leak_check():
    """Checks at teardown that no process or /dev/shm entry outlived the test."""
    check = LeakCheck()
    yield check
    # Under spawn and forkserver, multiprocessing names its semaphores in /dev/shm until their objects
    # are collected (they may sit in reference cycles): collect first, then look.
    gc.collect()
    check.assert_clean()
