"""The test sets the README names: pyproject's addopts leave the ``slow`` and ``learning`` tests out of a
plain ``pytest`` run, and a ``-m`` on the command line replaces that selection (pytest keeps the last ``-m``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MARKED = '''
import pytest

def test_plain():
    pass

@pytest.mark.slow
def test_long():
    pass

@pytest.mark.learning
def test_learns():
    pass
'''


def collected(tmp_path, *args: str) -> list[str]:
    """The names of the tests that ``pytest [args]`` with the project's configuration selects in MARKED."""
    (tmp_path / "test_marked.py").write_text(MARKED)
    command = [sys.executable, "-m", "pytest", "-c", os.path.join(ROOT, "pyproject.toml"), "--rootdir", str(tmp_path)]
    command += ["--strict-markers", "--collect-only", "-q", "-p", "no:cacheprovider", *args, str(tmp_path)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode in (0, 5), result.stdout + result.stderr  # 5: every test deselected
    return sorted(line.rsplit("::", 1)[1] for line in result.stdout.splitlines() if "::" in line)


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    "args, expected",
    [
        ((), ["test_plain"]),
        (("-m", "learning"), ["test_learns"]),
        (("-m", "slow"), ["test_long"]),
        (("-m", "slow or learning"), ["test_learns", "test_long"]),
    ],
)
def test_the_default_run_leaves_out_slow_and_learning_and_a_command_line_m_replaces_it(tmp_path, args, expected):
    assert collected(tmp_path, *args) == expected
