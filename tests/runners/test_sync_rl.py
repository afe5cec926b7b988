"""SyncRl: ranks keep bit-identical parameters, average their gradients, start by fork, spawn or
torchrun, resume from rank 0's checkpoint, and every failure of a rank or of a rank's sampler worker
becomes one clear error in rank 0 within seconds, with nothing left behind."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "samplers" / "parallel"))

from parallel_helpers import LeakCheck  # noqa: E402
from sync_rl_helpers import (  # noqa: E402
    FAILURE_TEXT,
    RANK_DIGESTS_SCRIPT,
    CheckedSyncRl,
    RankFaultyCartPole,
    a2c_runner,
    affinities,
    cpu_affinities,
    cpu_sampler,
    free_port,
    params_digest,
    serial_sampler,
)

from rlrun.agents.dqn.dqn_agent import DqnAgent  # noqa: E402
from rlrun.agents.pg.categorical import CategoricalPgAgent  # noqa: E402
from rlrun.algos.dqn.dqn import DQN  # noqa: E402
from rlrun.algos.pg.a2c import A2C  # noqa: E402
from rlrun.algos.pg.ppo import PPO  # noqa: E402
from rlrun.runners.minibatch_rl import MinibatchRl  # noqa: E402
from rlrun.runners.sync_rl import RankProcessError, SyncRl, SyncRlEval  # noqa: E402
from rlrun.utils.logging import logger  # noqa: E402
from rlrun.utils.logging.context import logger_context  # noqa: E402

pytestmark = pytest.mark.timeout(90)
ROOT = HERE.parent.parent


@pytest.fixture
def leak_check():
    check = LeakCheck()
    yield check
    check.assert_clean()


@pytest.fixture(autouse=True)
def quiet_logger():
    logger.disable()
    yield
    logger.enable()


# ---- identical parameters, averaged gradients ----


def test_two_gloo_ranks_keep_parameters_bit_identical_after_every_update(leak_check):
    runner = a2c_runner(n_itr=6)
    runner.train()
    assert len(runner.param_digests) == 6
    assert len(set(runner.param_digests)) == 6, "the parameters must change at every update"
    for itr, (obs0, obs1) in enumerate(runner.obs_digests):
        assert obs0 != obs1, f"itr {itr}: both ranks sampled the same observations"
    leak_check.assert_clean()


def test_two_ranks_of_b2_train_like_one_process_of_b4():
    """Env seeds and action streams follow global env ranks, and DDP averages the per-rank mean losses,
    so two ranks of 2 envs take the same steps as one process with 4 envs (to float rounding)."""
    sync = a2c_runner(sampler=serial_sampler(B=2), n_itr=4)
    sync.train()
    single = MinibatchRl(
        algo=A2C(learning_rate=3e-3),
        agent=CategoricalPgAgent(),
        sampler=serial_sampler(B=4),
        n_steps=4 * 8 * 4,
        seed=3,
        affinity=dict(master_torch_threads=1),
    )
    single.train()
    for (name, a), b in zip(sync.agent.state_dict().items(), single.agent.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=f"{name} differs")


@pytest.mark.parametrize("algo_name", ["ppo", "dqn"])
def test_ppo_and_dqn_keep_parameters_bit_identical(algo_name):
    """PPO: epochs of minibatches shuffled differently on each rank; DQN: replay, target network,
    several updates per iteration after a warm-up without updates."""
    if algo_name == "ppo":
        algo, agent = PPO(epochs=2, minibatches=2, learning_rate=1e-3), CategoricalPgAgent()
    else:
        algo = DQN(batch_size=32, min_steps_learn=32, replay_size=1000, replay_ratio=16, target_update_interval=2)
        agent = DqnAgent()
    runner = CheckedSyncRl(
        algo=algo, agent=agent, sampler=serial_sampler(), n_steps=8 * 2 * 2 * 6, seed=0, affinity=affinities(2)
    )
    runner.train()
    assert len(runner.param_digests) == 6 and len(set(runner.param_digests)) >= 4
    assert algo.update_counter > 0


def test_a_cpu_sampler_in_each_rank_keeps_parameters_identical(leak_check):
    runner = a2c_runner(sampler=cpu_sampler(B=4), n_itr=4, affinity=cpu_affinities())
    runner.train()
    assert len(set(runner.param_digests)) == 4
    leak_check.assert_clean()


@pytest.mark.integration
def test_spawned_ranks_train_with_identical_parameters(leak_check):
    runner = a2c_runner(n_itr=3, start_method="spawn")
    runner.train()
    assert len(set(runner.param_digests)) == 3
    leak_check.assert_clean()


@pytest.mark.learning
@pytest.mark.timeout(600)  # about 20 s on an idle 2-core machine; minutes under heavy load
def test_two_ranks_learn_cartpole():
    """A2C with CartPole's tuned algorithm settings (rlrun.experiments.configs.cartpole) on a global batch
    of 16 steps x 8 envs, split over 2 ranks of 4 envs: the training return passes 100 within 40k steps
    (random play: about 22)."""
    from rlrun.experiments.configs.cartpole import CONFIGS

    runner = SyncRl(
        algo=A2C(**CONFIGS["a2c"]["algo"]),
        agent=CategoricalPgAgent(),
        sampler=serial_sampler(T=16, B=4),
        n_steps=40_000,
        seed=0,
        affinity=affinities(2),
        log_interval_steps=10_000,
    )
    row = runner.train()
    assert row["ReturnAverage"] > 100, row["ReturnAverage"]


# ---- the affinity list and the runner's settings ----


def test_world_size_is_the_length_of_the_affinity_list_and_steps_are_global():
    runner = a2c_runner(RunnerCls=SyncRl, n_itr=2, affinity=affinities(2), log_interval_steps=16)
    row = runner.train()
    assert runner.world_size == 2 and runner.n_itr == 2
    assert row["Diagnostics/CumSteps"] == 2 * 2 * 8 * 2  # iterations x ranks x T x B


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(affinity=[1, 2]), TypeError, "one affinity dict per rank"),
        (dict(affinity=affinities(2), start_method="thread"), ValueError, "start_method"),
        (dict(affinity=affinities(2), collective_timeout=0), ValueError, "collective_timeout"),
        (dict(affinity=affinities(2), backend="mpi"), ValueError, "gloo"),
        (dict(affinity=affinities(2), backend="nccl"), ValueError, "cuda_idx"),
        (dict(affinity=[dict(cuda_idx=0), dict()]), ValueError, "some ranks"),
    ],
)
def test_bad_settings_are_refused_at_construction(kwargs, error, match):
    with pytest.raises(error, match=match):
        SyncRl(algo=A2C(), agent=CategoricalPgAgent(), sampler=serial_sampler(), n_steps=100, **kwargs)


def test_sync_rl_eval_evaluates_on_rank_0_and_logs_once_per_interval(tmp_path):
    sampler = serial_sampler(eval_n_envs=2, eval_max_steps=400)
    runner = a2c_runner(sampler=sampler, RunnerCls=SyncRlEval, n_itr=4, log_interval_steps=64)
    logger.enable()
    with logger_context(str(tmp_path), 0, "sync_eval", override_prefix=True) as run_dir:
        runner.train()
    rows = list(csv.DictReader(open(Path(run_dir) / "progress.csv")))
    assert [int(r["Diagnostics/Iteration"]) for r in rows] == [0, 1, 3]  # before training, then every 2 itrs
    assert all(int(r["Diagnostics/TrajsInEval"]) >= 2 for r in rows)


# ---- failures ----


def _raises_within(seconds, match, runner):
    start = time.monotonic()
    with pytest.raises(RankProcessError, match=match) as info:
        runner.train()
    elapsed = time.monotonic() - start
    assert elapsed < seconds, f"took {elapsed:.1f} s"
    return info.value


def _faulty(fail_in, rank=1, B=2, seed=3, **kwargs):
    fail_seed = seed + 1 + rank * B  # the rank's first env
    return dict(EnvCls=RankFaultyCartPole, env_kwargs=dict(fail_in=fail_in, fail_seed=fail_seed, **kwargs), B=B)


def test_a_rank_raising_becomes_one_error_in_rank_0_with_its_traceback(leak_check):
    runner = a2c_runner(sampler=serial_sampler(**_faulty("step")), n_itr=100)
    error = _raises_within(20, "SyncRl rank 1 raised", runner)
    assert error.rank == 1 and FAILURE_TEXT in str(error) and "Traceback" in str(error)
    leak_check.assert_clean()


def test_a_rank_killed_by_sigkill_is_reported_within_seconds(leak_check):
    runner = a2c_runner(sampler=serial_sampler(**_faulty("kill")), n_itr=100)
    error = _raises_within(20, "SyncRl rank 1 died with signal SIGKILL", runner)
    assert error.rank == 1
    leak_check.assert_clean()


def test_a_stopped_rank_is_reported_as_stopped_within_5_s_whatever_the_collective_timeout(leak_check):
    runner = a2c_runner(sampler=serial_sampler(**_faulty("stop")), n_itr=100, collective_timeout=600)
    error = _raises_within(15, "SyncRl rank 1 was stopped", runner)
    assert error.rank == 1 and "kill -CONT" in str(error) and "died with" not in str(error)
    leak_check.assert_clean()


@pytest.mark.integration
def test_a_stuck_rank_becomes_an_error_with_its_stack_after_the_collective_timeout(leak_check):
    runner = a2c_runner(sampler=serial_sampler(**_faulty("hang")), n_itr=100, collective_timeout=10)
    error = _raises_within(40, "SyncRl rank 1 did not reach a collective within collective_timeout=10 s", runner)
    assert "hang_forever" in str(error)  # its stack
    leak_check.assert_clean()


def test_a_killed_sampler_worker_of_rank_1_is_reported_by_rank_0(leak_check):
    sampler = cpu_sampler(EnvCls=RankFaultyCartPole, env_kwargs=_faulty("kill", B=4)["env_kwargs"], B=4)
    runner = a2c_runner(sampler=sampler, n_itr=100, affinity=cpu_affinities())
    error = _raises_within(25, "SyncRl rank 1 raised", runner)
    assert "Sampler worker 0 (env ranks [4, 5])" in str(error) and "SIGKILL" in str(error)
    leak_check.assert_clean()


def test_rank_0_raising_stops_the_other_ranks(leak_check):
    runner = a2c_runner(sampler=serial_sampler(**_faulty("step", rank=0)), n_itr=100)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=FAILURE_TEXT):
        runner.train()
    assert time.monotonic() - start < 20
    leak_check.assert_clean()


# ---- checkpoints ----


def test_a_two_rank_run_resumes_from_rank_0s_checkpoint(tmp_path):
    logger.enable()
    with logger_context(str(tmp_path), 0, "sync", override_prefix=True) as run_dir:
        first = a2c_runner(n_itr=3, checkpoint=True, log_interval_steps=32)
        first.train()
        done = params_digest(first.agent)
    with logger_context(str(tmp_path), 0, "sync", override_prefix=True, resume=True):
        second = a2c_runner(n_itr=6, resume=True, log_interval_steps=32)
        second.train()
    assert second.resumed_from is not None and second.resumed_from.itr == 2
    # CheckedSyncRl compared both ranks after each resumed iteration: rank 1 loaded the weights and
    # the optimiser state too, or the first update after the resume would have split them.
    assert len(second.param_digests) == 3 and done not in second.param_digests
    rows = list(csv.DictReader(open(Path(run_dir) / "progress.csv")))
    assert [int(r["Diagnostics/Iteration"]) for r in rows] == [0, 1, 2, 3, 4, 5]  # a row per itr, none twice


# ---- torchrun ----


@pytest.mark.integration
def test_torchrun_starts_two_ranks_of_a_sync_rl_script(tmp_path):
    script = tmp_path / "train.py"
    log_dir = tmp_path / "logs"
    script.write_text(
        RANK_DIGESTS_SCRIPT.format(helpers=str(HERE), log_dir=str(log_dir), out_dir=str(tmp_path), name="torchrun")
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_addr",
        "127.0.0.1",
        "--master_port",
        str(free_port()),
        str(script),
    ]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=80, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    import json

    outs = [json.loads((tmp_path / f"rank_{r}.json").read_text()) for r in (0, 1)]
    assert [o["world_size"] for o in outs] == [2, 2]
    assert outs[0]["digests"] == outs[1]["digests"] and len(outs[0]["digests"]) == 4
    # Rank 0 alone made the run folder and logged.
    assert [p.name for p in log_dir.iterdir()] == ["run_0"]
    assert (log_dir / "run_0" / "progress.csv").stat().st_size > 0


@pytest.mark.slow
def test_torchrun_reports_a_failing_rank_and_stops_the_other(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TORCHRUN_FAILING_SCRIPT.format(helpers=str(HERE), log_dir=str(tmp_path / "logs")))
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_addr",
        "127.0.0.1",
        "--master_port",
        str(free_port()),
        str(script),
    ]
    start = time.monotonic()
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=80, cwd=tmp_path)
    assert result.returncode != 0
    assert FAILURE_TEXT in result.stdout + result.stderr
    assert time.monotonic() - start < 70


TORCHRUN_FAILING_SCRIPT = """
import sys
sys.path.insert(0, {helpers!r})
from sync_rl_helpers import RankFaultyCartPole, a2c_runner, serial_sampler

if __name__ == "__main__":
    sampler = serial_sampler(EnvCls=RankFaultyCartPole, env_kwargs=dict(fail_in="step", fail_seed=3 + 1 + 2))
    runner = a2c_runner(sampler=sampler, n_itr=1000, affinity=dict(master_torch_threads=1, set_affinity=False))
    runner.train()
"""


# ---- stopping by signal ----

SIGNAL_SCRIPT = """
import sys
sys.path.insert(0, {helpers!r})
from sync_rl_helpers import a2c_runner, serial_sampler
from rlrun.utils.logging.context import logger_context

if __name__ == "__main__":
    runner = a2c_runner(sampler=serial_sampler(env_kwargs=dict(id="CartPole-v1")), n_itr=100_000, checkpoint=True,
                        log_interval_steps=32)
    with logger_context({log_dir!r}, 0, "signal", override_prefix=True):
        runner.train()
"""


@pytest.mark.integration
def test_sigterm_to_the_process_group_checkpoints_and_exits_143_with_nothing_left(tmp_path):
    """A terminal, ``timeout`` or a batch system signals every process of the group: the forked rank
    ignores it, rank 0 finishes the iteration (with rank 1's help), checkpoints and exits 143."""
    script = tmp_path / "train.py"
    log_dir = tmp_path / "logs"
    script.write_text(SIGNAL_SCRIPT.format(helpers=str(HERE), log_dir=str(log_dir)))
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        env=env,
        cwd=tmp_path,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        progress = log_dir / "run_0" / "progress.csv"
        deadline = time.monotonic() + 60
        while not (progress.exists() and progress.read_text().count("\n") >= 3):
            assert proc.poll() is None, proc.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "no log rows within 60 s"
            time.sleep(0.2)
        os.killpg(proc.pid, 15)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
    assert proc.returncode == 143, out[-3000:]
    assert "Training interrupted by SIGTERM" in out
    assert list((log_dir / "run_0" / "checkpoints").glob("itr_*.ckpt"))
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):  # no process of the group is left
        os.killpg(proc.pid, 0)


# ---- the GPU script's CPU path ----


@pytest.mark.timeout(240)
@pytest.mark.integration
def test_the_nccl_scripts_cpu_path_trains_two_gloo_ranks_with_identical_parameters(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    cmd = [
        sys.executable,
        str(ROOT / "examples" / "sync_rl_nccl.py"),
        "--cpu",
        "--n_ranks",
        "2",
        "--n_steps",
        "1024",
        "--batch_B",
        "2",
    ]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=220, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "ranks: 2, backend: gloo" in result.stdout
    assert "parameters identical across ranks: True" in result.stdout


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_example_7_runs_two_cpu_ranks_on_pong(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    cmd = [
        sys.executable,
        str(ROOT / "examples" / "example_7.py"),
        "--cpu_ranks",
        "2",
        "--n_steps",
        "320",
        "--log_interval_steps",
        "160",
        "--max_decorrelation_steps",
        "0",
    ]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=280, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Training complete" in result.stdout


# ---- settings under torchrun (read from the environment; no processes started) ----

TORCHRUN_ENV = dict(
    RANK="1", WORLD_SIZE="4", LOCAL_RANK="1", LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT="29500"
)


def test_under_torchrun_one_nccl_dict_gives_each_rank_the_gpu_of_its_local_rank(monkeypatch):
    for key, value in TORCHRUN_ENV.items():
        monkeypatch.setenv(key, value)
    runner = SyncRl(
        algo=A2C(), agent=CategoricalPgAgent(), sampler=serial_sampler(), n_steps=100, affinity=dict(), backend="nccl"
    )
    assert runner.mode == "env" and runner.backend == "nccl"
    assert runner._affinity_of_local_rank(1, 2)["cuda_idx"] == 1


def test_under_torchrun_an_affinity_list_needs_one_dict_per_local_rank(monkeypatch):
    for key, value in TORCHRUN_ENV.items():
        monkeypatch.setenv(key, value)
    runner = SyncRl(
        algo=A2C(), agent=CategoricalPgAgent(), sampler=serial_sampler(), n_steps=100, affinity=affinities(3)
    )
    with pytest.raises(ValueError, match="LOCAL_WORLD_SIZE"):
        runner._affinity_of_local_rank(1, 2)
    assert SyncRl(
        algo=A2C(), agent=CategoricalPgAgent(), sampler=serial_sampler(), n_steps=100, affinity=[dict(a=0), dict(a=1)]
    )._affinity_of_local_rank(1, 2) == dict(a=1)


def test_spawn_with_an_unpicklable_env_says_how_to_fix_it():
    sampler = serial_sampler(EnvCls=lambda **kw: None)
    runner = a2c_runner(sampler=sampler, n_itr=2, start_method="spawn")
    with pytest.raises(TypeError, match="module level"):
        runner.train()


# ---- the rendezvous namespace, in one process ----


@pytest.mark.timeout(60)
def test_each_attempt_meets_in_a_fresh_namespace_whatever_an_earlier_attempt_left_in_the_store():
    """An earlier attempt's hello keys stay in the launcher's store; rank 0 answers them too, but the
    ranks of this attempt still agree on one namespace, never an earlier one."""
    import threading

    import torch.distributed as dist

    from rlrun.runners.distributed import round_store

    server = dist.TCPStore("127.0.0.1", 0, 2, is_master=True, wait_for_workers=False)
    names = []
    for _attempt in range(3):
        stores: dict[int, dist.PrefixStore] = {}
        client = dist.TCPStore("127.0.0.1", server.port, 2, is_master=False)

        def join_as_rank_1(stores=stores, client=client):
            stores[1] = round_store(client, 1, 2, 30.0)

        thread = threading.Thread(target=join_as_rank_1)
        thread.start()
        stores[0] = round_store(server, 0, 2, 30.0)
        thread.join(30)
        stores[0].set("probe", "from rank 0")
        assert stores[1].get("probe") == b"from rank 0"
        names.append(stores[0])
    # Each attempt's namespace starts empty: a key of the attempt before is not in the next one.
    names[1].set("gloo_address", "stale")
    assert not names[2].check(["gloo_address"])
