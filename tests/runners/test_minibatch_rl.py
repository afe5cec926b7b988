"""MinibatchRl and MinibatchRlEval running A2C on CartPole-v1 with the serial sampler."""

import csv
import math
import pathlib

import psutil
import pytest
import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.dqn.dqn import DQN
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.envs.traj_info import TrajInfo
from rlrun.runners.minibatch_rl import MinibatchRl, MinibatchRlEval
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context

A2C_STATS = ["loss", "gradNorm", "entropy", "perplexity", "piLoss", "valueLoss"]
STATS = ["Average", "Std", "Median", "Min", "Max"]
# One torch thread: tiny models gain nothing from two, and spinning threads slow a loaded 2-core machine.
ONE_THREAD = dict(master_torch_threads=1)


@pytest.fixture
def two_threads():
    """Two torch threads during the test (the suite runs with one), so that a runner's 1 shows."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


class RecordingSampler(SerialSampler):
    """The serial sampler, counting shutdown calls."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.shutdown_calls = 0

    def shutdown(self):
        self.shutdown_calls += 1
        super().shutdown()


def cartpole_sampler(batch_T=5, batch_B=4, eval_n_envs=0, **kwargs):
    eval_kwargs = dict(eval_n_envs=eval_n_envs, eval_max_steps=2000) if eval_n_envs else {}
    return RecordingSampler(
        make,
        dict(id="CartPole-v1"),
        batch_T=batch_T,
        batch_B=batch_B,
        max_decorrelation_steps=0,
        **eval_kwargs,
        **kwargs,
    )


def a2c_runner(sampler, RunnerCls=MinibatchRl, algo=None, agent=None, seed=0, **kwargs):
    """``RunnerCls`` training A2C (or ``algo``) with a categorical agent on ``sampler``, one torch thread."""
    kwargs.setdefault("affinity", ONE_THREAD)
    algo = A2C() if algo is None else algo
    agent = CategoricalPgAgent() if agent is None else agent
    return RunnerCls(algo=algo, agent=agent, sampler=sampler, seed=seed, **kwargs)


def read_progress(run_dir):
    with open(pathlib.Path(run_dir) / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return rows


def column(rows, key):
    return [float(r[key]) for r in rows]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_minibatch_rl_writes_one_progress_row_per_interval_with_the_expected_columns(in_tmp):
    sampler = cartpole_sampler()
    runner = a2c_runner(sampler, n_steps=400, log_interval_steps=100, seed=1)
    with logger_context("a2c", 0, "a2c", log_params=dict(n_steps=400)) as run_dir:
        final = runner.train()
    rows = read_progress(run_dir)
    expected = [
        "Diagnostics/Iteration",
        "Diagnostics/CumTime (s)",
        "Diagnostics/CumSteps",
        "Diagnostics/CumCompletedTrajs",
        "Diagnostics/CumUpdates",
        "Diagnostics/StepsPerSecond",
        "Diagnostics/UpdatesPerSecond",
        "Diagnostics/NewCompletedTrajs",
        "Diagnostics/StepsInTrajWindow",
        *(f"{field}{s}" for field in ["Length", "Return", "NonzeroRewards", "DiscountedReturn"] for s in STATS),
        *(f"{field}{s}" for field in A2C_STATS for s in STATS),
    ]
    assert set(expected) <= set(rows[0])
    assert column(rows, "Diagnostics/Iteration") == [4, 9, 14, 19]
    assert column(rows, "Diagnostics/CumSteps") == [100, 200, 300, 400]
    assert column(rows, "Diagnostics/CumUpdates") == [5, 10, 15, 20]
    assert all(v > 0 for v in column(rows, "Diagnostics/StepsPerSecond"))
    assert column(rows, "ReturnAverage")[-1] > 5  # CartPole pays 1 per step; episodes last > 5 steps
    assert final["Diagnostics/CumSteps"] == 400
    assert final["ReturnAverage"] == pytest.approx(column(rows, "ReturnAverage")[-1])
    assert sampler.shutdown_calls == 1


def test_minibatch_rl_eval_logs_an_evaluation_before_training_and_at_each_interval(in_tmp):
    sampler = cartpole_sampler(eval_n_envs=2)
    runner = a2c_runner(sampler, MinibatchRlEval, n_steps=200, log_interval_steps=100, seed=2)
    with logger_context("a2c_eval", 0, "a2c") as run_dir:
        final = runner.train()
    rows = read_progress(run_dir)
    for key in [
        "Diagnostics/StepsInEval",
        "Diagnostics/TrajsInEval",
        "Diagnostics/EvalTime",
        "Diagnostics/CumEvalTime",
        "Diagnostics/CumTrainTime",
    ]:
        assert f"{key}" in rows[0]
    assert column(rows, "Diagnostics/CumSteps") == [0, 100, 200]
    assert math.isnan(column(rows, "Diagnostics/StepsPerSecond")[0])  # no training before the first evaluation
    assert all(n >= 1 for n in column(rows, "Diagnostics/TrajsInEval"))
    assert all(t > 0 for t in column(rows, "Diagnostics/EvalTime"))
    assert column(rows, "Diagnostics/CumEvalTime")[-1] == pytest.approx(sum(column(rows, "Diagnostics/EvalTime")))
    # The logged returns are the evaluation episodes', whose lengths StepsInEval sums.
    assert column(rows, "LengthAverage")[-1] * final["Diagnostics/TrajsInEval"] == pytest.approx(
        final["Diagnostics/StepsInEval"]
    )
    assert sampler.shutdown_calls == 1


def test_n_itr_rounds_steps_up_to_whole_batches_and_the_last_iteration_is_logged(in_tmp):
    runner = a2c_runner(cartpole_sampler(), n_steps=130, log_interval_steps=60)
    with logger_context("e", 0, "n") as run_dir:
        runner.train()
    assert runner.n_itr == 7 and runner.log_interval_itrs == 3
    assert column(read_progress(run_dir), "Diagnostics/CumSteps") == [60, 120, 140]


def test_episode_statistic_columns_exist_before_any_episode_has_finished(in_tmp):
    class TaggedTrajInfo(TrajInfo):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.Tag = 7.0
            self._scratch = 0  # underscore keys are bookkeeping, not logged

    sampler = cartpole_sampler(batch_T=5, batch_B=1, TrajInfoCls=TaggedTrajInfo)
    runner = a2c_runner(sampler, n_steps=200, log_interval_steps=5)
    with logger_context("e", 0, "n") as run_dir:
        runner.train()
    rows = read_progress(run_dir)
    assert math.isnan(column(rows, "ReturnAverage")[0])  # 5 steps: no CartPole episode is over yet
    assert not any(math.isnan(v) for v in column(rows, "ReturnAverage")[-5:])
    assert column(rows, "TagAverage")[-1] == 7.0
    assert not any("_scratch" in key for key in rows[0])


def test_snapshot_holds_iteration_steps_agent_and_optimizer_state(in_tmp):
    agent = CategoricalPgAgent()
    runner = a2c_runner(cartpole_sampler(), agent=agent, n_steps=100, log_interval_steps=40)
    with logger_context("e", 0, "n", snapshot_mode="last") as run_dir:
        runner.train()
    snapshot = torch.load(pathlib.Path(run_dir) / "params.pkl")
    assert snapshot["itr"] == 4 and snapshot["cum_steps"] == 100
    assert snapshot["optimizer_state_dict"]["state"]  # Adam took steps
    for key, value in agent.state_dict().items():
        assert torch.equal(snapshot["agent_state_dict"][key], value)


def test_same_seed_gives_the_same_progress(in_tmp):
    returns = []
    for run_ID in range(2):
        runner = a2c_runner(cartpole_sampler(), n_steps=200, log_interval_steps=100, seed=5)
        with logger_context("e", run_ID, "n") as run_dir:
            runner.train()
        rows = read_progress(run_dir)
        returns.append((column(rows, "ReturnAverage"), column(rows, "lossAverage")))
    assert returns[0] == returns[1]


def test_dqn_run_logs_its_replay_ratio_and_saves_snapshots_only_once_learning_started(in_tmp):
    sampler = SerialSampler(make, dict(id="CartPole-v1"), batch_T=4, batch_B=8, max_decorrelation_steps=0)
    algo = DQN(min_steps_learn=200, replay_size=2000, batch_size=32, replay_ratio=8)
    runner = MinibatchRl(
        algo=algo, agent=DqnAgent(), sampler=sampler, n_steps=640, log_interval_steps=128, seed=0, affinity=ONE_THREAD
    )
    with logger_context("dqn", 0, "dqn", snapshot_mode="all") as run_dir:
        runner.train()
    rows = read_progress(run_dir)
    assert runner.min_itr_learn == 6  # 200 steps // 32 per iteration, known only after algo.initialize
    assert column(rows, "Diagnostics/ReplayRatio")[0] == 0  # the first interval ends before learning starts
    assert column(rows, "Diagnostics/ReplayRatio")[-2:] == [8, 8]
    assert column(rows, "Diagnostics/CumReplayRatio")[-1] == pytest.approx(algo.batch_size * algo.update_counter / 640)
    snapshots = {p.name for p in pathlib.Path(run_dir).glob("*.pkl")}
    assert snapshots == {"itr_7.pkl", "itr_11.pkl", "itr_15.pkl", "itr_19.pkl"}  # not itr_3: before learning


def test_sampler_is_shut_down_and_the_algorithm_error_propagates_when_training_raises(in_tmp, two_threads):
    class FailingA2C(A2C):
        def optimize_agent(self, itr, samples=None, sampler_itr=None):
            if itr == 2:
                raise RuntimeError("injected failure at itr 2")
            return super().optimize_agent(itr, samples, sampler_itr)

    sampler = cartpole_sampler()
    threads_before = torch.get_num_threads()
    assert threads_before != 1  # two_threads: the runner's 1 must be undone
    runner = MinibatchRl(
        algo=FailingA2C(),
        agent=CategoricalPgAgent(),
        sampler=sampler,
        n_steps=200,
        log_interval_steps=20,
        seed=0,
        affinity=dict(master_torch_threads=1),
    )
    with pytest.raises(RuntimeError, match="injected failure at itr 2"), logger_context("e", 0, "n"):
        runner.train()
    assert sampler.shutdown_calls == 1
    assert torch.get_num_threads() == threads_before


def test_a_failing_shutdown_after_a_training_error_does_not_hide_the_training_error(in_tmp, capsys):
    class FailingA2C(A2C):
        def optimize_agent(self, itr, samples=None, sampler_itr=None):
            raise RuntimeError("training error")

    class BrokenShutdownSampler(RecordingSampler):
        def shutdown(self):
            super().shutdown()
            raise OSError("shutdown error")

    sampler = BrokenShutdownSampler(make, dict(id="CartPole-v1"), batch_T=5, batch_B=2)
    runner = MinibatchRl(algo=FailingA2C(), agent=CategoricalPgAgent(), sampler=sampler, n_steps=100, seed=0)
    with pytest.raises(RuntimeError, match="training error"):
        runner.train()
    assert sampler.shutdown_calls == 1
    assert "shutdown error" in capsys.readouterr().out


def test_affinity_pins_cpus_and_torch_threads_during_training_and_restores_them_after(in_tmp, two_threads):
    seen = {}

    class ObservingA2C(A2C):
        def optimize_agent(self, itr, samples=None, sampler_itr=None):
            seen["threads"] = torch.get_num_threads()
            seen["cpus"] = psutil.Process().cpu_affinity()
            return super().optimize_agent(itr, samples, sampler_itr)

    cpus_before, threads_before = psutil.Process().cpu_affinity(), torch.get_num_threads()
    assert threads_before != 1  # two_threads: the runner's 1 must be undone
    affinity = dict(master_cpus=[cpus_before[0]], master_torch_threads=1, cuda_idx=None)
    runner = MinibatchRl(
        algo=ObservingA2C(),
        agent=CategoricalPgAgent(),
        sampler=cartpole_sampler(),
        n_steps=40,
        seed=0,
        affinity=affinity,
    )
    runner.train()
    assert seen == {"threads": 1, "cpus": [cpus_before[0]]}
    assert psutil.Process().cpu_affinity() == cpus_before
    assert torch.get_num_threads() == threads_before


def test_master_cpus_outside_the_machine_are_refused_and_the_sampler_still_shut_down(in_tmp):
    sampler = cartpole_sampler()
    runner = MinibatchRl(
        algo=A2C(), agent=CategoricalPgAgent(), sampler=sampler, n_steps=40, seed=0, affinity=dict(master_cpus=[4096])
    )
    with pytest.raises(ValueError, match="master_cpus"):
        runner.train()
    assert sampler.shutdown_calls == 1


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(n_steps=0), ValueError, "n_steps"),
        (dict(n_steps=100, log_interval_steps=0), ValueError, "log_interval_steps"),
        (dict(n_steps=100, affinity=[dict(master_cpus=[0])]), TypeError, "SyncRl"),
        (dict(n_steps=100, log_traj_window=0), ValueError, "log_traj_window"),
    ],
)
def test_bad_runner_arguments_are_refused_at_construction(kwargs, error, match):
    with pytest.raises(error, match=match):
        MinibatchRl(algo=A2C(), agent=CategoricalPgAgent(), sampler=cartpole_sampler(), **kwargs)


def test_minibatch_rl_eval_refuses_a_sampler_without_eval_envs():
    with pytest.raises(ValueError, match="eval_n_envs > 0"):
        MinibatchRlEval(algo=A2C(), agent=CategoricalPgAgent(), sampler=cartpole_sampler(), n_steps=100)


def test_training_without_a_logger_context_logs_to_the_console_only(in_tmp, capsys):
    runner = MinibatchRl(algo=A2C(), agent=CategoricalPgAgent(), sampler=cartpole_sampler(), n_steps=40, seed=0)
    final = runner.train()
    assert final["Diagnostics/CumSteps"] == 40
    assert "CumSteps" in capsys.readouterr().out
    assert list(in_tmp.iterdir()) == []
    assert logger.get_snapshot_dir() is None


@pytest.mark.slow
def test_minibatch_rl_eval_a2c_learns_cartpole_within_100k_steps(in_tmp):
    """Measured: final evaluation return 276 (seed 0) and 145 (seed 1), 25-45 s on 2 cores."""
    sampler = SerialSampler(make, dict(id="CartPole-v1"), batch_T=5, batch_B=8, eval_n_envs=4, eval_max_steps=4000)
    runner = a2c_runner(
        sampler, MinibatchRlEval, algo=A2C(learning_rate=7e-4), n_steps=100_000, log_interval_steps=10_000
    )
    with logger_context("learn", 0, "a2c"):
        final = runner.train()
    assert final["ReturnAverage"] > 100
