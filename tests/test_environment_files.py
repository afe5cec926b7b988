"""The conda environment files at the repository root: valid conda envs that install what setup.py needs.

setup.py is read with ``ast`` rather than imported, so these tests do not run its side effects and
keep working while setup.py cannot run (for example without a README).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
# Top-level YAML files that are not conda environments.
NOT_CONDA_ENVS = {"mkdocs.yml"}
EXPECTED_ENV_FILES = {"linux_cpu.yml", "linux_cuda10.yml", "linux_cuda12.yml"}
# conda package name -> the PyPI distribution it provides.
CONDA_TO_PYPI = {"pytorch": "torch"}

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_CONDA_SPEC = re.compile(
    r"^(?:(?P<channel>[^:\s]+)::)?(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)"
    r"(?:\s*(?P<op>==|=|>=|<=|>|<|!=|~=)?\s*(?P<version>[^=\s]+)(?:=(?P<build>\S+))?)?$"
)


def normalize(name: str) -> str:
    """PEP 503 name: case-insensitive, runs of ``-``, ``_`` and ``.`` are equal."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _module_literal(setup_path: Path, variable: str):
    tree = ast.parse(setup_path.read_text(encoding="utf-8"), filename=str(setup_path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == variable for t in node.targets):
            return ast.literal_eval(node.value)
    raise LookupError(f"{setup_path}: no top-level literal assignment to {variable}; the test reads it from there.")


def core_requirements(setup_path: Path) -> set[str]:
    """Normalized distribution names in setup.py's ``CORE`` list."""
    return {normalize(_NAME.match(req).group(1)) for req in _module_literal(setup_path, "CORE")}


def extra_names(setup_path: Path) -> set[str]:
    """Names of setup.py's extras: the keys of the ``EXTRAS`` literal plus any ``EXTRAS["x"] = ...``."""
    names = set(_module_literal(setup_path, "EXTRAS"))
    tree = ast.parse(setup_path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "EXTRAS"
                    and isinstance(target.slice, ast.Constant)
                ):
                    names.add(target.slice.value)
    return names


def parse_conda_spec(spec: str) -> dict[str, str | None]:
    """Split a conda match spec such as ``pytorch::pytorch=1.12.1=py3.10_cuda10.2_cudnn7.6.5_0``."""
    match = _CONDA_SPEC.match(spec.strip())
    if match is None:
        raise ValueError(f"not a conda match spec this test understands: {spec!r}")
    return match.groupdict()


def conda_specs(env: dict) -> list[str]:
    return [d for d in env["dependencies"] if isinstance(d, str)]


def pip_lines(env: dict) -> list[str]:
    return [line for d in env["dependencies"] if isinstance(d, dict) for line in d.get("pip", [])]


def structure_problems(env: object) -> list[str]:
    """Why ``env`` is not a conda environment file that conda can create (empty if it is)."""
    if not isinstance(env, dict):
        return [f"top level is a {type(env).__name__}, not a mapping"]
    problems = []
    if not isinstance(env.get("name"), str) or not env["name"]:
        problems.append("missing 'name'")
    channels = env.get("channels")
    if not isinstance(channels, list) or not channels or not all(isinstance(c, str) for c in channels):
        problems.append("'channels' must be a non-empty list of channel names")
    deps = env.get("dependencies")
    if not isinstance(deps, list) or not deps:
        problems.append("'dependencies' must be a non-empty list")
        return problems
    for dep in deps:
        if isinstance(dep, dict):
            if set(dep) != {"pip"} or not isinstance(dep["pip"], list):
                problems.append(f"a mapping in dependencies must be {{pip: [...]}}, got {dep!r}")
            elif "pip" not in {parse_conda_spec(d)["name"] for d in conda_specs(env)}:
                problems.append("a pip: section needs 'pip' itself among the conda dependencies")
        elif not isinstance(dep, str):
            problems.append(f"dependency {dep!r} is neither a spec string nor a pip: section")
    return problems


def named_distributions(env: dict) -> set[str]:
    """Normalized PyPI names the file installs by name, from conda specs and pip lines."""
    names = set()
    for spec in conda_specs(env):
        name = parse_conda_spec(spec)["name"]
        names.add(normalize(CONDA_TO_PYPI.get(name, name)))
    for line in pip_lines(env):
        if not line.startswith("-"):  # options (-e ., --extra-index-url) name no distribution
            names.add(normalize(_NAME.match(line).group(1)))
    return names


def missing_core(env: dict, core: set[str]) -> set[str]:
    return core - named_distributions(env)


def cuda10_problems(env: dict) -> list[str]:
    """Why ``env`` could end up without a CUDA 10 build of pytorch (empty if it cannot)."""
    specs = {parse_conda_spec(s)["name"]: parse_conda_spec(s) for s in conda_specs(env)}
    problems = []
    toolkit = specs.get("cudatoolkit")
    if toolkit is None or not (toolkit["version"] or "").startswith("10."):
        problems.append("cudatoolkit must be pinned to a 10.x version")
    torch = specs.get("pytorch")
    if torch is None:
        return [*problems, "pytorch must be a conda dependency"]
    if torch["channel"] != "pytorch":
        problems.append("pytorch must be taken from the pytorch channel (pytorch::pytorch=...)")
    if env["channels"][0] != "pytorch":
        problems.append("the pytorch channel must come first in 'channels'")
    if "cuda10" not in (torch["build"] or ""):
        problems.append("pytorch needs an exact build string of a CUDA 10 build (e.g. py3.10_cuda10.2_...)")
    python = specs.get("python")
    build_python = re.match(r"py(\d+\.\d+)_", torch["build"] or "")
    if python is None or build_python is None or python["version"] != build_python.group(1):
        problems.append("python must be pinned to the version in the pytorch build string")
    return problems


def top_level_env_files() -> list[Path]:
    return sorted(p for p in ROOT.glob("*.yml") if p.name not in NOT_CONDA_ENVS)


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


ENV_FILES = top_level_env_files()


def test_expected_environment_files_are_present():
    assert EXPECTED_ENV_FILES <= {p.name for p in ENV_FILES}


def test_core_requirements_are_read_from_setup_py_without_running_it(tmp_path):
    setup = tmp_path / "setup.py"
    setup.write_text('raise SystemExit("importing me is a bug")\nCORE = ["Torch>=1.12", "gym_nasium[extra]<2"]\n')
    assert core_requirements(setup) == {"torch", "gym-nasium"}
    assert {"torch", "numpy", "gymnasium", "psutil"} <= core_requirements(ROOT / "setup.py")


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_file_is_a_conda_environment(path):
    assert structure_problems(load(path)) == []


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_file_names_every_core_requirement_of_setup_py(path):
    assert missing_core(load(path), core_requirements(ROOT / "setup.py")) == set()


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_file_installs_rlrun_editable_with_extras_setup_py_defines(path):
    editable = [line for line in pip_lines(load(path)) if re.fullmatch(r"-e\s+\.(\[[\w,\s-]+\])?", line)]
    assert len(editable) == 1, "expected exactly one '-e .[extras]' line in the pip: section"
    extras = set(re.findall(r"[\w-]+", editable[0].partition("[")[2]))
    assert extras, "install rlrun with extras, e.g. '-e .[all]'"
    assert extras <= extra_names(ROOT / "setup.py")


def test_checker_reports_a_core_requirement_dropped_from_an_environment():
    core = {"torch", "numpy", "gymnasium", "psutil"}
    complete = {
        "name": "x",
        "channels": ["pytorch"],
        "dependencies": [
            "pytorch::pytorch=1.12.1=py3.10_cuda10.2_cudnn7.6.5_0",
            "NumPy>=1.21,<2",
            "pip",
            {"pip": ["--extra-index-url https://example.invalid", "Gymnasium>=1.0", "psutil", "-e .[all]"]},
        ],
    }
    assert structure_problems(complete) == []
    assert missing_core(complete, core) == set()
    broken = {**complete, "dependencies": [d for d in complete["dependencies"] if d != "NumPy>=1.21,<2"]}
    assert missing_core(broken, core) == {"numpy"}
    assert structure_problems({"name": "x", "dependencies": ["python"]}) == [
        "'channels' must be a non-empty list of channel names"
    ]


def test_cuda10_file_pins_cudatoolkit_10_and_a_cuda10_pytorch_build_from_the_pytorch_channel():
    env = load(ROOT / "linux_cuda10.yml")
    assert cuda10_problems(env) == []
    torch = next(parse_conda_spec(s) for s in conda_specs(env) if parse_conda_spec(s)["name"] == "pytorch")
    assert torch["version"].startswith("1.12")


def test_cuda10_file_keeps_numpy_below_2_for_conda_and_pip():
    env = load(ROOT / "linux_cuda10.yml")
    numpy_conda = [parse_conda_spec(s) for s in conda_specs(env) if parse_conda_spec(s)["name"] == "numpy"]
    assert [s["version"].split(".")[0] for s in numpy_conda] == ["1"]
    assert any(re.fullmatch(r"numpy\b.*<\s*2(\.0)*", line) for line in pip_lines(env))


@pytest.mark.parametrize(
    "replace, expected",
    [
        (("pytorch::pytorch=1.12.1=py3.10_cuda10.2_cudnn7.6.5_0", "pytorch=1.12.1"), "pytorch channel"),
        (("pytorch::pytorch=1.12.1=py3.10_cuda10.2_cudnn7.6.5_0", "pytorch::pytorch=1.12.1"), "build string"),
        (("pytorch::pytorch=1.12.1=py3.10_cuda10.2_cudnn7.6.5_0", "pytorch::pytorch=1.12.1=py3.10_cpu_0"), "build"),
        (("cudatoolkit=10.2", "cudatoolkit=11.3"), "cudatoolkit"),
        (("python=3.10", "python=3.11"), "python"),
    ],
)
def test_cuda10_checker_rejects_environments_that_could_get_another_build(replace, expected):
    env = load(ROOT / "linux_cuda10.yml")
    old, new = replace
    assert old in env["dependencies"], f"fixture out of date: {old!r} is no longer in linux_cuda10.yml"
    env["dependencies"] = [new if d == old else d for d in env["dependencies"]]
    problems = cuda10_problems(env)
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize(
    "name, local_version, index",
    [("linux_cpu.yml", "+cpu", "/whl/cpu"), ("linux_cuda12.yml", "+cu12", "/whl/cu12")],
)
def test_pip_torch_pin_names_its_build_and_index(name, local_version, index):
    env = load(ROOT / name)
    assert parse_conda_spec(next(s for s in conda_specs(env) if s.startswith("python")))["version"] == "3.11"
    lines = pip_lines(env)
    torch = [line for line in lines if not line.startswith("-") and normalize(_NAME.match(line).group(1)) == "torch"]
    assert len(torch) == 1 and local_version in torch[0], torch
    assert any(line.startswith("--extra-index-url") and index in line for line in lines)
