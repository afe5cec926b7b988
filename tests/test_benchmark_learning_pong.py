"""benchmarks/learning_pong.py: its report of a run folder (the default suite), and a real tiny run (integration)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "learning_pong.py"


def load_script():
    spec = importlib.util.spec_from_file_location("learning_pong", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_progress(run_dir: Path, rows: str) -> None:
    run_dir.mkdir(parents=True)
    (run_dir / "progress.csv").write_text("Diagnostics/CumSteps,Diagnostics/CumTime (s),ReturnAverage\n" + rows)


@pytest.mark.timeout(60)
def test_a_report_without_algo_takes_the_preset_from_the_run_folders_name(tmp_path):
    pong = load_script()
    run = tmp_path / "pong_ppo-cleanrl" / "run_0"  # as train() names it
    write_progress(run, "250000,150,-20.5\n500000,300,-3.0\n")
    pong.main(["--report", str(run), "--out-dir", str(tmp_path / "out")])
    (report,) = (tmp_path / "out").glob("*-pong-ppo-cleanrl.md")
    text = report.read_text()
    assert "PPO-CLEANRL" in text and "CleanRL PPO" in text and "Baselines A2C" not in text
    assert f"--algo ppo-cleanrl --report {run}" in text
    assert pong.algo_of_run(tmp_path / "elsewhere" / "run_0") is None  # no preset in the name: a2c, the default


@pytest.mark.timeout(60)
def test_the_report_gives_frames_wall_time_and_the_first_row_at_the_target(tmp_path):
    pong = load_script()
    run = tmp_path / "run_0"
    # Agent steps: x4 frames. 250k steps = 1M frames.
    write_progress(run, "100000,60,\n250000,150,-20.5\n500000,300,-3.0\n750000,450,15.5\n1000000,600,14.0\n")

    code = pong.main(["--report", str(run), "--out-dir", str(tmp_path / "out")])

    assert code == 0
    (report,) = (tmp_path / "out").glob("*-pong-a2c.md")
    text = report.read_text()
    assert "reached +15 at 3.00M frames, 7.5 min" in text and "+18 not reached" in text
    assert "best +15.5 at 3.00M frames; last +14.0" in text
    assert "4.00M frames in 10.0 min (1,667 agent steps/s" in text
    assert "| 1.0M | 2.5 | -20.5 |" in text and "| 2.0M | 5.0 | -3.0 |" in text and "| 4.0M | 10.0 | +14.0 |" in text


@pytest.mark.timeout(60)
def test_a_run_below_the_target_exits_1_and_a_folder_without_progress_exits_2(tmp_path):
    pong = load_script()
    run = tmp_path / "run_0"
    write_progress(run, "250000,150,-20.5\n500000,300,-19.0\n")

    assert pong.main(["--report", str(run), "--out-dir", str(tmp_path / "out")]) == 1
    assert "+15 not reached" in next((tmp_path / "out").glob("*.md")).read_text()
    run = tmp_path / "run_1"
    write_progress(run, "250000,150,-20.5\n500000,300,18.5\n")
    assert pong.main(["--report", str(run), "--out-dir", str(tmp_path / "out18"), "--target", "18"]) == 0
    text = next((tmp_path / "out18").glob("*.md")).read_text()
    assert "reached +18 at 2.00M frames, 5.0 min" in text and text.count("reached +18") == 1
    assert pong.main(["--report", str(tmp_path / "missing"), "--out-dir", str(tmp_path / "out")]) == 2


@pytest.mark.timeout(60)
def test_the_gpu_preset_is_ppo_cleanrl_with_the_envpool_sweeps_update_on_60_envs(capsys):
    from rlrun.cli.train import add_arguments, resolve_config

    pong = load_script()
    assert pong.main(["--algo", "ppo-pong-gpu", "--print-flags"]) == 0
    flags = capsys.readouterr().out.split("\n")[:-1]
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--algo", "ppo", "--env", "pong", "--sampler", "gpu", *flags])
    _env, _source, config = resolve_config(args)
    assert (config["sampler"]["batch_B"], config["sampler"]["batch_T"]) == (60, 32)
    algo = config["algo"]
    assert (algo["ratio_clip"], algo["value_clip"], algo["epochs"], algo["minibatches"]) == (0.2, 0.2, 3, 8)
    # The rest is ppo-cleanrl's: learning rate and its schedule, per-minibatch normalisation, the Nature network.
    assert (algo["learning_rate"], algo["lr_schedule_steps"], algo["minibatch_advantage_norm"]) == (2.5e-4, 10**7, True)
    assert config["model"]["channels"] == (32, 64, 64) and config["model"]["fc_sizes"] == 512
    assert config["env"]["frame_shape"] is None and config["env"]["fire_on_reset"] is True  # rlpyt's 104x80


@pytest.mark.integration
@pytest.mark.timeout(240)
def test_a_tiny_real_run_trains_through_rlrun_train_and_writes_its_report(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--frames", "6400", "--log-interval", "400", "--workers", "2",
         "--out-dir", str(tmp_path)],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=220,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stdout[-3000:] + result.stderr[-3000:]  # 1: +15 not reached
    assert (tmp_path / "pong_a2c" / "run_0" / "progress.csv").exists()
    (report,) = tmp_path.glob("*-pong-a2c.md")
    assert "# Pong, A2C on the CPU" in report.read_text()
    assert "--n-envs 16 --batch-T 5" in result.stdout  # example_3's settings reached rlrun train


@pytest.mark.timeout(60)
def test_baselines_a2c_settings_run_rlrun_a2c_with_rmsprop_and_baselines_published_curve(tmp_path, monkeypatch):
    pong = load_script()
    commands = []
    monkeypatch.setattr(pong.subprocess, "call", lambda command, cwd: commands.append(command) or 0)
    run = tmp_path / "pong_a2c-baselines" / "run_0"
    write_progress(run, "250000,150,-20.5\n")

    assert pong.main(["--algo", "a2c-baselines", "--out-dir", str(tmp_path)]) == 1
    (command,) = commands
    assert command[command.index("--algo") + 1] == "a2c"
    text = " ".join(command)
    for setting in ("algo.OptimCls='RMSpropTF'", "model.orthogonal_init=True", "algo.learning_rate=7e-4",
                    "algo.value_loss_coeff=1.0"):  # fmt: skip
        assert setting in text
    report = next(tmp_path.glob("*-pong-a2c-baselines.md")).read_text()
    assert "Baselines A2C: -12.2 at 10M frames" in report


def test_cleanrl_ppo_settings_add_the_nature_network_and_cleanrls_ppo_options_to_the_ppo_flags():
    pong = load_script()
    flags = pong.ALGO_FLAGS["ppo-cleanrl"]
    assert flags[: len(pong.PPO_FLAGS)] == pong.PPO_FLAGS and pong.ALGO_FLAGS["ppo"] == pong.PPO_FLAGS
    text = " ".join(flags[len(pong.PPO_FLAGS) :])
    for setting in ("algo.minibatch_advantage_norm=True", "algo.value_clip=0.1", "model.orthogonal_init=True",
                    "model.channels=(32,64,64)", "model.fc_sizes=512", "algo.normalize_advantage=False"):  # fmt: skip
        assert setting in text
    assert pong.PUBLISHED["ppo-cleanrl"] == pong.PUBLISHED["ppo"]


def test_cleanrl_ppo_flags_build_rlruns_ppo_with_cleanrls_learning_rate_schedule():
    """The flags go through ``rlrun train``'s own parser and config, and PPO takes every keyword they set:
    the rate decays over CleanRL's 10M agent steps (40M frames), not over the run's 2.5M."""
    pytest.importorskip("ale_py", reason="the Pong config needs ALE")
    from rlrun.algos.pg.ppo import PPO
    from rlrun.cli import build_parser
    from rlrun.cli.train import resolve_config

    pong = load_script()
    args = build_parser().parse_args(
        [
            "train",
            "--algo",
            "ppo",
            "--env",
            "pong",
            "--sampler",
            "cpu",
            "--steps",
            "2500000",
            *pong.ALGO_FLAGS["ppo-cleanrl"],
        ]
    )
    _env, _source, config = resolve_config(args)
    algo = PPO(**config["algo"])
    assert algo.lr_schedule_steps == 10_000_000 and algo.linear_lr_schedule and not algo.anneal_ratio_clip
    assert config["runner"]["n_steps"] == 2_500_000


def test_cleanrl_ppo_flags_give_84x84_frames_that_the_nature_network_takes():
    pytest.importorskip("ale_py", reason="the Pong config needs ALE")
    import torch

    from rlrun.cli import build_parser
    from rlrun.cli.train import resolve_config
    from rlrun.envs.atari import AtariEnv
    from rlrun.models.pg.atari_ff_model import AtariFfModel

    pong = load_script()
    args = build_parser().parse_args(["train", "--algo", "ppo", "--env", "pong", *pong.ALGO_FLAGS["ppo-cleanrl"]])
    _env, _source, config = resolve_config(args)
    env = AtariEnv(**config["env"])
    assert env.observation_space.shape == (4, 84, 84) and env.fire_on_reset
    model = AtariFfModel(env.observation_space.shape, env.action_space.n, **config["model"])
    assert model.conv.conv_out_size == 64 * 7 * 7  # 3136 features into the 512 units, as in the Nature paper
    pi, value = model(torch.from_numpy(env.reset()[None]), None, None)
    assert pi.shape == (1, env.action_space.n) and value.shape == (1,)
