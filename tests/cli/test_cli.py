"""The ``rlrun`` command: ``plot`` draws curves from real runs, ``doctor`` reports on this machine."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from rlrun.cli import main
from rlrun.experiments.configs.cartpole import build_runner
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context
from rlrun.utils.plotting import _episode_band, find_runs, group_runs, read_progress

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three short real A2C runs on CartPole: seeds 0 and 1 of one experiment, and another name."""
    base = tmp_path_factory.mktemp("runs")
    with logger.quiet_console():
        for name, seed in (("a2c_cartpole", 0), ("a2c_cartpole", 1), ("other", 0)):
            runner = build_runner("a2c", seed=seed, n_steps=1024, log_interval_steps=256, eval_episodes=4)
            with logger_context(str(base), seed, name, {}, override_prefix=True):
                runner.train()
    return base


def test_runs_are_found_below_a_folder_and_grouped_by_their_name(runs):
    found = find_runs([str(runs)])
    assert len(found) == 3
    groups = group_runs(found)
    assert sorted(groups) == ["a2c_cartpole", "other"] and len(groups["a2c_cartpole"]) == 2


@pytest.mark.timeout(120)
def test_rlrun_plot_writes_a_png_of_seeds_as_mean_and_band(runs, tmp_path):
    out = tmp_path / "curve.png"
    result = subprocess.run(
        [sys.executable, "-m", "rlrun", "plot", str(runs), "-o", str(out)],
        env=dict(os.environ, PYTHONPATH=ROOT),
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size > 10_000 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "a2c_cartpole (2 runs)" in result.stdout and "other (1 run)" in result.stdout


def test_rlrun_plot_separate_and_a_missing_folder(runs, tmp_path, capsys):
    assert main(["plot", str(runs), "-o", str(tmp_path / "c.png"), "--separate", "--x", "CumSteps"]) == 0
    assert (tmp_path / "c.png").exists()
    assert main(["plot", str(tmp_path / "nothing_here"), "-o", str(tmp_path / "d.png")]) == 2
    assert "no such run folder" in capsys.readouterr().err


def test_the_band_of_one_run_never_leaves_the_returns_seen(runs):
    data = read_progress(find_runs([str(runs)])[0])
    low, high = _episode_band(data, "ReturnAverage")
    assert low == data["ReturnMin"] and high == data["ReturnMax"]
    assert max(h for h in high if h == h) <= 500  # CartPole's largest return; mean + std could pass it


def test_rlrun_doctor_reports_every_check_on_this_machine(capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    for name in ("python", "torch", "gpu", "core packages", "atari", "mujoco", "start methods", "cores", "memory"):
        assert f"  {name}" in out, out
    assert "CPU-only build" in out or "CUDA" in out


@pytest.mark.skipif(
    importlib.util.find_spec("ale_py") is None, reason="sizes an Atari config (pip install rlrun[atari])"
)
def test_rlrun_doctor_sizes_the_replay_of_a_ready_made_config(capsys):
    assert main(["doctor", "--config", "atari.dqn.atari_dqn:dqn"]) == 0
    out = capsys.readouterr().out
    assert "replay of 1000000 steps 7.7" in out and "the config needs about 7.7" in out


def test_rlrun_doctor_fails_on_an_unknown_config(capsys):
    assert main(["doctor", "--config", "atari.dqn.atari_dqn:no_such"]) == 1
    assert "fail  config" in capsys.readouterr().out


def test_doctor_reads_a_version_from_the_installed_distribution(tmp_path, monkeypatch):
    import gymnasium

    from rlrun.cli.doctor import _version

    (tmp_path / "rlrun_local_only_module.py").write_text("")  # importable, but no distribution installed it
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _version("gymnasium") == gymnasium.__version__
    assert _version("rlrun_local_only_module") == "installed"
    assert _version("rlrun_no_such_module") is None
