"""``rlrun train``: every algorithm and sampler trains a few iterations from its ready-made config on real
envs and leaves a script's log folder; impossible requests fail before any folder is made."""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import subprocess
import sys

import pytest
import torch

from rlrun.cli import build_parser, main
from rlrun.cli.train import resolve_config
from rlrun.experiments.builder import optimizer_class
from rlrun.experiments.registry import TABLE, EnvChoice, resolve_env, select_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Tiny runs: 2-3 iterations of small batches, replays and networks, learning from the first batches.
DISCRETE = ["--env", "CartPole-v1", "--n-envs", "2", "--batch-T", "8", "--steps", "48", "--log-interval", "16"]
SMALL_REPLAY = ["--set", "algo.min_steps_learn=16", "--set", "algo.replay_size=500"]
SMALL_DQN = [*SMALL_REPLAY, "--set", "algo.batch_size=16"]
SMALL_R2D1 = [*SMALL_REPLAY, "--set", "algo.batch_T=4", "--set", "algo.batch_B=4", "--set", "algo.warmup_T=2",
              "--set", "algo.store_rnn_state_interval=4", "--set", "algo.n_step_return=2",
              "--set", "model.lstm_size=16", "--set", "model.hidden_sizes=(16,)", "--set", "model.head_size=16"]  # fmt: skip
PENDULUM = ["--env", "Pendulum-v1", "--batch-T", "4", "--steps", "12", "--log-interval", "12", "--eval-envs", "1",
            "--set", "sampler.eval_max_trajectories=1", "--set", "algo.min_steps_learn=4",
            "--set", "algo.batch_size=4", "--set", "algo.replay_ratio=4", "--set", "algo.replay_size=100",
            "--set", "agent.model_kwargs.hidden_sizes=[16]", "--set", "agent.q_model_kwargs.hidden_sizes=[16]"]  # fmt: skip


def train(tmp_path, capsys, *argv: str) -> str:
    """Run ``rlrun train`` in this process into ``tmp_path/runs``; return the run folder it printed."""
    code = main(["train", *argv, "--seed", "0", "--log-dir", str(tmp_path / "runs")])
    out = capsys.readouterr().out
    assert code == 0, out
    run_dir = out.rsplit("run folder: ", 1)[1].strip()
    assert run_dir == str(tmp_path / "runs" / "run_0")
    return run_dir


def assert_run_folder(run_dir: str, algo: str) -> None:
    for name in ("progress.csv", "params.json", "debug.log", "learning_curve.png"):
        assert os.path.isfile(os.path.join(run_dir, name)), name
    with open(os.path.join(run_dir, "progress.csv"), encoding="utf-8") as f:
        assert len(f.readlines()) >= 3  # a header and two rows at least
    with open(os.path.join(run_dir, "params.json"), encoding="utf-8") as f:
        params = json.load(f)
    assert params["command"]["algo"] == algo and "algo" in params and "runner" in params


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "algo, argv",
    [
        ("a2c", DISCRETE),
        ("ppo", [*DISCRETE, "--set", "algo.epochs=2"]),
        ("dqn", [*DISCRETE, *SMALL_DQN]),
        ("catdqn", [*DISCRETE, *SMALL_DQN]),
        ("r2d1", [*DISCRETE, *SMALL_R2D1]),
        ("ddpg", PENDULUM),
        ("td3", PENDULUM),
        ("sac", PENDULUM),
    ],
)
def test_each_algorithm_trains_a_few_iterations_with_the_serial_sampler(tmp_path, capsys, algo, argv):
    assert_run_folder(train(tmp_path, capsys, "--algo", algo, *argv), algo)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "sampler, algo, argv",
    [
        ("cpu", "ppo", [*DISCRETE, "--recurrent"]),  # wait-reset collectors in the workers
        ("gpu", "dqn", [*DISCRETE, *SMALL_DQN]),  # the action server runs on the CPU here
        ("alternating", "r2d1", [*DISCRETE, *SMALL_R2D1]),  # GpuWaitResetCollector, two worker groups
    ],
)
def test_parallel_samplers_train_with_one_worker_per_group(tmp_path, capsys, sampler, algo, argv):
    run_dir = train(tmp_path, capsys, "--algo", algo, "--sampler", sampler, "--workers", "1", *argv)
    assert_run_folder(run_dir, algo)


@pytest.mark.timeout(90)
@pytest.mark.integration
def test_python_m_rlrun_train_logs_under_data_local_like_a_script(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "rlrun", "train", "--algo", "a2c", *DISCRETE, "--eval-envs", "0", "--seed", "3"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=ROOT),
        capture_output=True,
        text=True,
        timeout=80,
    )
    assert result.returncode == 0, result.stderr
    (run_dir,) = glob.glob(str(tmp_path / "data" / "local" / "*" / "*" / "a2c_CartPole-v1" / "run_0"))
    assert result.stdout.strip().endswith(f"run folder: {run_dir}")
    assert "config cartpole:a2c" in result.stdout and "sampler: batch_T=8 batch_B=2" in result.stdout
    assert_run_folder(run_dir, "a2c")
    with open(os.path.join(run_dir, "params.json"), encoding="utf-8") as f:
        params = json.load(f)
    assert params["name"] == "a2c_CartPole-v1" and params["command"]["seed"] == 3
    assert params["sampler"]["eval_n_envs"] == 0 and params["algo"]["learning_rate"] == 7e-4


@pytest.mark.timeout(60)
@pytest.mark.skipif(importlib.util.find_spec("ale_py") is None, reason="needs ale-py")
def test_an_atari_game_name_trains_dqn_from_the_atari_config(tmp_path, capsys):
    argv = ["--algo", "dqn", "--env", "pong", "--n-envs", "2", "--batch-T", "4", "--steps", "24",
            "--log-interval", "8", "--eval-envs", "0", "--set", "sampler.max_decorrelation_steps=0", *SMALL_DQN]  # fmt: skip
    run_dir = train(tmp_path, capsys, *argv)
    assert_run_folder(run_dir, "dqn")
    with open(os.path.join(run_dir, "params.json"), encoding="utf-8") as f:
        assert json.load(f)["command"]["config"] == "atari.dqn.atari_dqn:dqn"


MUJOCO_QPG = ["--batch-T", "4", "--steps", "12", "--log-interval", "4", "--eval-envs", "0",
              "--set", "algo.min_steps_learn=4", "--set", "algo.batch_size=4",
              "--set", "algo.replay_ratio=4", "--set", "algo.replay_size=100"]  # fmt: skip
MUJOCO_PG = ["--n-envs", "2", "--batch-T", "8", "--steps", "32", "--log-interval", "16",
             "--set", "algo.minibatches=2", "--set", "algo.epochs=1"]  # fmt: skip


@pytest.mark.timeout(60)
@pytest.mark.skipif(importlib.util.find_spec("mujoco") is None, reason="needs mujoco")
@pytest.mark.filterwarnings("ignore:rlrun.envs.gym.make. Hopper-v3 runs as Hopper-v5")
@pytest.mark.parametrize(
    "algo, env, sampler, source, argv",
    [
        ("sac", "Hopper-v3", "serial", "mujoco.qpg.mujoco_sac:sac_1M_serial", MUJOCO_QPG),  # rlpyt's id, as v5
        ("ppo", "HalfCheetah-v5", "cpu", "mujoco.pg.mujoco_ppo:ppo_1M_cpu", MUJOCO_PG),  # sized for workers
    ],
)
def test_a_mujoco_id_trains_from_rlpyts_mujoco_configs(tmp_path, capsys, algo, env, sampler, source, argv):
    argv = [
        "--algo",
        algo,
        "--env",
        env,
        "--sampler",
        sampler,
        *(["--workers", "1"] if sampler != "serial" else []),
        *argv,
    ]
    run_dir = train(tmp_path, capsys, *argv)
    with open(os.path.join(run_dir, "params.json"), encoding="utf-8") as f:
        params = json.load(f)
    assert params["command"]["config"] == source and params["env"]["id"] == env
    assert os.path.isfile(os.path.join(run_dir, "progress.csv"))


@pytest.mark.skipif(importlib.util.find_spec("ale_py") is None, reason="needs ale-py")
def test_ale_ids_and_game_names_are_atari_games():
    assert resolve_env("ALE/Pong-v5").env_kwargs == {"game": "pong"} == resolve_env("pong").env_kwargs
    assert resolve_env("ALE/MontezumaRevenge-v5").env_kwargs == {"game": "montezuma_revenge"}
    assert resolve_env("breakout").family == "atari" and resolve_env("Acrobot-v1").family == "discrete"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--algo", "sac", "--env", "CartPole-v1"], "choose --algo from a2c, catdqn, dqn, ppo, r2d1"),
        (["--algo", "dqn", "--env", "Pendulum-v1"], "choose --algo from a2c, ddpg, ppo, sac, td3"),
        (["--algo", "dqn", "--env", "CartPole-v1", "--recurrent"], "--recurrent picks the LSTM agent"),
        (["--algo", "dqn", "--env", "NoSuchEnv-v0"], "neither a Gymnasium id nor an ALE game"),
        (["--algo", "dqn", "--env", "CartPole-v1", "--set", "algo.learning_rate=oops"], "not a Python literal"),
        (["--algo", "dqn", "--env", "CartPole-v1", "--set", "learning_rate=1"], "write SECTION.KEY=VALUE"),
        (["--algo", "dqn", "--env", "CartPole-v1", "--set", "optimizer.lr=1"], "no section 'optimizer'"),
        (["--algo", "dqn", "--env", "CartPole-v1", "--set", "algo.no_such_keyword=1"], "does not build DQN"),
        (["--algo", "a2c", "--env", "CartPole-v1", "--set", "algo.OptimCls='RMSProp'"], "choose one of A"),
        (["--algo", "ppo", "--env", "CartPole-v1", "--sampler", "cpu", "--n-envs", "2", "--workers", "4"], "--workers 2"),
        (["--algo", "ppo", "--env", "CartPole-v1", "--sampler", "serial", "--workers", "2"], "add --sampler cpu, gpu or alternating"),
        (["--algo", "ppo", "--env", "CartPole-v1", "--cuda-idx", "99"], "leave --cuda-idx out"),
        (["--algo", "td3", "--env", "Pendulum-v1", "--steps", "3000"], "would end without one gradient step"),
        (["--algo", "dqn", "--env", "CartPole-v1", "--steps", "1e4", "--set", "algo.min_steps_learn=10000"], "--steps above 10,000"),
        (["--algo", "a2c", "--env", "CartPole-v1", "--steps", "10"], "less than one batch"),
    ],
)  # fmt: skip
def test_impossible_requests_exit_2_naming_the_fix_and_leave_no_run_folder(tmp_path, capsys, argv, message):
    assert main(["train", *argv, "--log-dir", str(tmp_path / "runs")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_every_table_entry_selects_a_config_in_sections():
    families = {"discrete": EnvChoice("CartPole-v1", "discrete", dict(id="CartPole-v1"), 500),
                "continuous": EnvChoice("Pendulum-v1", "continuous", dict(id="Pendulum-v1"), 200),
                "mujoco": EnvChoice("Hopper-v5", "continuous", dict(id="Hopper-v5"), 1000, mujoco=True),
                "atari": EnvChoice("breakout", "atari", dict(game="breakout"), 27_000)}  # fmt: skip
    for algo, family in TABLE:
        source, config = select_config(algo, families[family])
        assert {"env", "sampler", "algo", "optim", "agent", "model", "runner"} <= set(config), source
        assert config["env"] == {**config["env"], **families[family].env_kwargs}
        assert config["runner"]["n_steps"] > 0 and config["sampler"]["batch_B"] >= 1
    _, lstm = select_config("ppo", families["atari"], recurrent=True)
    assert lstm["env"]["num_img_obs"] == 1  # atari_lstm_ppo: the LSTM remembers, one frame each
    _, cpu = select_config("ppo", families["mujoco"], parallel=True)
    assert (cpu["sampler"]["batch_T"], cpu["sampler"]["batch_B"]) == (256, 8)  # ppo_1M_cpu


def test_options_then_each_set_override_the_config_in_order():
    argv = ["train", "--algo", "dqn", "--env", "CartPole-v1", "--n-envs", "4", "--steps", "1e4",
            "--set", "sampler.batch_B=6", "--set", "agent.model_kwargs.hidden_sizes=(32,)",
            "--set", "algo.learning_rate=1e-3", "--set", "optim.eps=1e-5"]  # fmt: skip
    args = build_parser().parse_args(argv)
    env, source, config = resolve_config(args)
    assert (env.family, source) == ("discrete", "cartpole:dqn")
    assert config["sampler"]["batch_B"] == 6 and config["runner"]["n_steps"] == 10_000
    assert config["agent"]["model_kwargs"] == {"hidden_sizes": (32,)} and config["algo"]["learning_rate"] == 1e-3
    assert config["optim"] == {"eps": 1e-5}
    assert select_config("dqn", env)[1]["agent"]["model_kwargs"] == {"hidden_sizes": (256, 256)}  # a copy


@pytest.mark.timeout(60)
def test_an_optimiser_of_torch_optim_is_chosen_by_name(tmp_path, capsys):
    run_dir = train(tmp_path, capsys, "--algo", "ppo", *DISCRETE, "--set", "algo.OptimCls='torch.optim.RMSprop'",
                    "--set", "optim.alpha=0.9")  # fmt: skip
    with open(os.path.join(run_dir, "params.json"), encoding="utf-8") as f:
        assert json.load(f)["algo"]["OptimCls"] == "torch.optim.RMSprop"  # as given: --resume parses it again
    checkpoint = torch.load(sorted(glob.glob(os.path.join(run_dir, "checkpoints", "*.ckpt")))[-1], weights_only=False)
    (group,) = checkpoint["algo"]["optimizer"]["param_groups"]
    assert group["alpha"] == 0.9 and group["foreach"] and "betas" not in group  # RMSprop's, not Adam's
    assert optimizer_class("SGD") is torch.optim.SGD


@pytest.mark.timeout(60)
def test_torch_threads_sets_the_training_processs_threads(tmp_path, capsys):
    import torch

    before = torch.get_num_threads()
    try:
        # No evaluation: with 2 threads on a busy 2-core machine a tiny MLP's forward waits on OpenMP's second
        # thread (40 ms instead of 0.1 ms beside 3 busy processes), and 30 evaluation episodes took 60 s.
        run_dir = train(tmp_path, capsys, "--algo", "a2c", *DISCRETE, "--torch-threads", "2", "--eval-envs", "0")
        with open(os.path.join(run_dir, "debug.log"), encoding="utf-8") as f:
            assert "torch threads: 2." in f.read()
        with open(os.path.join(run_dir, "params.json"), encoding="utf-8") as f:
            assert json.load(f)["command"]["args"]["torch_threads"] == 2  # --resume rebuilds it
        default = train(tmp_path / "default", capsys, "--algo", "a2c", *DISCRETE)
        with open(os.path.join(default, "debug.log"), encoding="utf-8") as f:
            assert "torch threads: 1." in f.read()  # an MLP's default
    finally:
        torch.set_num_threads(before)
    with pytest.raises(SystemExit):
        main(["train", "--algo", "a2c", *DISCRETE, "--torch-threads", "0"])
    assert "--torch-threads: 0 is not a positive integer" in capsys.readouterr().err


def test_tensorboard_flag_writes_event_files_with_the_progress_columns(tmp_path, capsys):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = train(tmp_path, capsys, "--algo", "a2c", *DISCRETE, "--tensorboard")
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(run_dir))
    events = EventAccumulator(run_dir)
    events.Reload()
    tags = events.Tags()["scalars"]
    assert any(tag.endswith("StepsPerSecond") for tag in tags), tags
    steps = [e.step for e in events.Scalars(next(t for t in tags if t.endswith("StepsPerSecond")))]
    assert len(steps) >= 2  # one value per log row


@pytest.mark.timeout(120)
def test_sampler_auto_measures_once_and_a_resumed_run_keeps_the_layout_it_started_with(tmp_path, capsys):
    run_dir = train(tmp_path, capsys, "--algo", "a2c", *DISCRETE, "--sampler", "auto")
    with open(os.path.join(run_dir, "params.json"), encoding="utf-8") as f:
        stored = json.load(f)["command"]["args"]
    kind, workers = stored["auto_layout"]
    assert stored["sampler"] == "auto" and kind in ("serial", "cpu", "gpu", "alternating")
    # Resumed with more steps: no new measurement, the stored layout (another one would not fit the checkpoint).
    code = main(["train", "--resume", run_dir, "--steps", "96"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"sampler=auto: the layout this run started with, {kind} with {workers or 0} workers" in out
    assert "measured env step" not in out


@pytest.mark.timeout(60)
def test_worker_restarts_option_reaches_the_parallel_sampler_and_progress_csv(tmp_path, capsys):
    run_dir = train(tmp_path, capsys, "--algo", "a2c", "--sampler", "cpu", "--workers", "1", "--worker-restarts", "3", *DISCRETE)  # fmt: skip
    with open(os.path.join(run_dir, "progress.csv"), encoding="utf-8") as f:
        header, *rows = f.read().splitlines()
    column = header.split(",").index("Diagnostics/WorkerRestarts")
    assert rows and all(row.split(",")[column] == "0" for row in rows)  # no fault, no restart
    with open(os.path.join(run_dir, "params.json"), encoding="utf-8") as f:
        assert json.load(f)["command"]["args"]["worker_restarts"] == 3  # --resume restarts the same way
