"""The test sets the README names: pyproject's addopts leave the ``slow``, ``learning`` and ``integration``
tests out of a plain ``pytest`` run, and a ``-m`` on the command line replaces that selection (pytest keeps the last ``-m``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MARKED = """
import pytest

def test_plain():
    pass

@pytest.mark.slow
def test_long():
    pass

@pytest.mark.learning
def test_learns():
    pass

@pytest.mark.integration
def test_script():
    pass
"""


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
        (("-m", "integration"), ["test_script"]),
        (("-m", "slow or learning"), ["test_learns", "test_long"]),
    ],
)
def test_the_default_run_leaves_out_slow_and_learning_and_a_command_line_m_replaces_it(tmp_path, args, expected):
    assert collected(tmp_path, *args) == expected


MIXED = """
import pytest

@pytest.mark.integration
@pytest.mark.parametrize("case", ["short", pytest.param("long", marks=pytest.mark.slow)])
def test_script(case):
    pass
"""

# The project's conftest.py, loaded by path: its hook is what is under test.
CONFTEST = f"""
import importlib.util
spec = importlib.util.spec_from_file_location("project_conftest", {os.path.join(ROOT, "tests", "conftest.py")!r})
project_conftest = importlib.util.module_from_spec(spec)
spec.loader.exec_module(project_conftest)
pytest_collection_modifyitems = project_conftest.pytest_collection_modifyitems
"""


@pytest.mark.timeout(90)
def test_a_slow_case_of_an_integration_test_is_in_the_slow_set_only(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_mixed.py").write_text(MIXED)
    command = [sys.executable, "-m", "pytest", "-c", os.path.join(ROOT, "pyproject.toml"), "--rootdir", str(tmp_path)]
    command += ["--strict-markers", "--collect-only", "-q", "-p", "no:cacheprovider", str(tmp_path)]
    runs = {}
    for selection in ("integration", "slow"):
        result = subprocess.run([*command, "-m", selection], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        runs[selection] = sorted(line.rsplit("::", 1)[1] for line in result.stdout.splitlines() if "::" in line)
    assert runs == {"integration": ["test_script[short]"], "slow": ["test_script[long]"]}


def _collected_count(*marker: str) -> int:
    """How many tests ``python -m pytest -q [marker]`` runs in this repository (collection only)."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *marker]
    result = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    tail = result.stdout.strip().splitlines()[-1]  # "1511/1698 tests collected (187 deselected) in 9.1s"
    return int(tail.split()[0].split("/")[0])


@pytest.mark.timeout(300)
def test_the_readme_test_counts_are_within_10_percent_of_what_pytest_collects():
    """The README's counts are measured numbers; this keeps them from drifting as tests are added."""
    import re

    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    pattern = r"the\s+{name}\s+(?:suite|set),\s+([\d,]+)\s+tests"
    stated = {
        name: int(re.search(pattern.format(name=name), text).group(1).replace(",", ""))
        for name in ("default", "integration", "learning")
    }
    actual = {
        "default": _collected_count(),
        "integration": _collected_count("-m", "integration"),
        "learning": _collected_count("-m", "learning"),
    }
    for name, count in actual.items():
        assert abs(stated[name] - count) <= 0.1 * count, (
            f"README says the {name} set has {stated[name]} tests, pytest collects {count}: measure again "
            "(`time python -m pytest -q ...`) and update README.md's Tests section."
        )
