"""Runner subclasses written the way rlpyt's users wrote them: rlpyt's ``__init__`` chain and overridden
diagnostics methods, trained on CartPole with the serial sampler."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.algos.pg.ppo import PPO
from rlrun.envs.gym import make
from rlrun.runners.minibatch_rl import MinibatchRl, MinibatchRlEval
from rlrun.runners.sync_rl import SyncRl
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context

ONE_THREAD = dict(master_torch_threads=1)


class CountingRunner(MinibatchRl):
    """A user's MinibatchRl: its own __init__ argument, rlpyt's super() call, and the diagnostics
    methods overridden with rlpyt's signatures."""

    def __init__(self, log_traj_window=100, note="mine", **kwargs):
        super().__init__(log_traj_window, **kwargs)
        self.note = note
        self.stored_itrs = []
        self.logged_itrs = []
        self.window_sizes = []
        self.log_infos_calls = 0

    def store_diagnostics(self, itr, traj_infos, opt_info):
        self.stored_itrs.append(itr)
        super().store_diagnostics(itr, traj_infos, opt_info)

    def log_diagnostics(self, itr, prefix="Diagnostics/"):
        with logger.tabular_prefix(prefix):
            logger.record_tabular("TenTimesItr", 10 * itr)
        self.logged_itrs.append(itr)
        self.window_sizes.append(len(self._traj_infos))
        super().log_diagnostics(itr, prefix=prefix)

    def _log_infos(self, traj_infos=None):
        self.log_infos_calls += 1
        super()._log_infos(traj_infos)


def cartpole_sampler(**kwargs):
    return SerialSampler(make, dict(id="CartPole-v1"), batch_T=16, batch_B=2, max_decorrelation_steps=0, **kwargs)


def read_rows(run_dir) -> list[dict[str, str]]:
    with open(Path(run_dir) / "progress.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_a_minibatch_rl_subclass_calling_super_init_with_log_traj_window_trains_with_its_overrides(tmp_path):
    runner = CountingRunner(
        7,
        note="ppo",
        algo=PPO(epochs=1, minibatches=2),
        agent=CategoricalPgAgent(),
        sampler=cartpole_sampler(),
        n_steps=6 * 32,
        log_interval_steps=64,
        seed=0,
        affinity=ONE_THREAD,
    )
    assert runner.log_traj_window == 7 and runner.note == "ppo"
    with logger_context(str(tmp_path), 0, "ppo", override_prefix=True) as run_dir:
        row = runner.train()
    assert runner.stored_itrs == [0, 1, 2, 3, 4, 5]
    assert runner.logged_itrs == [1, 3, 5]
    assert runner.log_infos_calls == 3
    assert max(runner.window_sizes) <= 7  # the window the subclass passed positionally
    rows = read_rows(run_dir)
    assert [int(r["Diagnostics/TenTimesItr"]) for r in rows] == [10, 30, 50]
    assert [int(r["Diagnostics/CumSteps"]) for r in rows] == [64, 128, 192]
    assert "ReturnAverage" in rows[0] and "lossAverage" in rows[0]
    assert row["Diagnostics/TenTimesItr"] == 50


class EvalRunner(MinibatchRlEval):
    """A user's MinibatchRlEval overriding log_diagnostics with rlpyt's signature."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.evaluations = []

    def log_diagnostics(self, itr, eval_traj_infos, eval_time, prefix="Diagnostics/"):
        self.evaluations.append((itr, len(eval_traj_infos)))
        super().log_diagnostics(itr, eval_traj_infos, eval_time, prefix=prefix)


def test_a_minibatch_rl_eval_subclass_with_rlpyts_log_diagnostics_signature_gets_every_evaluation(tmp_path):
    sampler = cartpole_sampler(eval_n_envs=2, eval_max_steps=400)
    runner = EvalRunner(
        A2C(), CategoricalPgAgent(), sampler, n_steps=4 * 32, log_interval_steps=64, seed=1, affinity=ONE_THREAD
    )
    with logger_context(str(tmp_path), 0, "a2c", override_prefix=True) as run_dir:
        runner.train()
    assert [itr for itr, _ in runner.evaluations] == [0, 1, 3]
    assert all(n > 0 for _, n in runner.evaluations)
    assert [int(r["Diagnostics/CumSteps"]) for r in read_rows(run_dir)] == [0, 64, 128]


def test_the_runners_own_columns_get_rlpyts_diagnostics_prefix_or_the_one_a_subclass_passes(tmp_path):
    class BareNames(MinibatchRl):
        def log_diagnostics(self, itr, traj_infos=None, eval_time=0.0, prefix=""):
            return super().log_diagnostics(itr, traj_infos, eval_time, prefix=prefix)

    runner = BareNames(
        algo=A2C(), agent=CategoricalPgAgent(), sampler=cartpole_sampler(), n_steps=64, seed=2, affinity=ONE_THREAD
    )
    with logger_context(str(tmp_path), 0, "a2c", override_prefix=True) as run_dir:
        row = runner.train()
    assert row["CumSteps"] == 64 and "Diagnostics/CumSteps" not in row
    assert "CumSteps" in read_rows(run_dir)[0]


def test_minibatch_rl_takes_the_components_as_keywords_as_in_rlpyt():
    with pytest.raises(TypeError, match="positional"):
        MinibatchRl(A2C(), CategoricalPgAgent(), cartpole_sampler(), 64)
    with pytest.raises(ValueError, match="log_traj_window"):
        MinibatchRl(0, algo=A2C(), agent=CategoricalPgAgent(), sampler=cartpole_sampler(), n_steps=64)


class WindowedSyncRl(SyncRl):
    """A user's SyncRl written for rlpyt: its own argument, then rlpyt's super() call."""

    def __init__(self, log_traj_window=100, note="mine", **kwargs):
        super().__init__(log_traj_window, **kwargs)
        self.note = note


def test_a_sync_rl_subclass_calling_super_init_with_log_traj_window_trains_one_rank_with_that_window(tmp_path):
    runner = WindowedSyncRl(
        3,
        note="a2c",
        algo=A2C(),
        agent=CategoricalPgAgent(),
        sampler=cartpole_sampler(),
        n_steps=4 * 32,
        log_interval_steps=64,
        seed=0,
        affinity=ONE_THREAD,  # one dict: one rank, in this process
    )
    assert runner.log_traj_window == 3 and runner.note == "a2c"
    with logger_context(str(tmp_path), 0, "a2c", override_prefix=True) as run_dir:
        runner.train()
    assert runner.diagnostics.traj_window is not None and runner.diagnostics.traj_window.maxlen == 3
    assert [int(r["Diagnostics/CumSteps"]) for r in read_rows(run_dir)] == [64, 128]


def test_sync_rl_takes_the_components_as_keywords_as_in_rlpyt():
    with pytest.raises(TypeError, match="positional"):
        SyncRl(A2C(), CategoricalPgAgent(), cartpole_sampler(), 64)
    with pytest.raises(ValueError, match="log_traj_window"):
        SyncRl(0, algo=A2C(), agent=CategoricalPgAgent(), sampler=cartpole_sampler(), n_steps=64)


def test_a_run_says_its_speed_and_how_long_it_will_take_once_the_first_batches_are_timed(tmp_path, capsys):
    """A long run says early that it is long: the speed line comes after speed_report_after_s of training."""
    sampler = SerialSampler(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=5, batch_B=2)
    runner = MinibatchRl(
        algo=A2C(), agent=CategoricalPgAgent(), sampler=sampler, n_steps=400, log_interval_steps=10**6, seed=0
    )
    runner.speed_report_after_s = 0.0  # at once, instead of after 10 s
    with logger_context(str(tmp_path), 0, "speed", override_prefix=True):
        runner.train()
    out = capsys.readouterr().out
    assert "Speed: " in out and "steps/s over the first 10 steps; the 400 steps of this run take about" in out


def test_a_script_whose_run_cannot_reach_min_steps_learn_is_warned_at_start_up(tmp_path):
    from rlrun.agents.dqn.dqn_agent import DqnAgent
    from rlrun.algos.dqn.dqn import DQN

    sampler = SerialSampler(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=4, batch_B=2)
    runner = MinibatchRl(
        algo=DQN(min_steps_learn=1000, replay_size=1000), agent=DqnAgent(), sampler=sampler, n_steps=80,
        log_interval_steps=40, seed=0,
    )  # fmt: skip
    with logger_context(str(tmp_path), 0, "no_learning", override_prefix=True):
        logger.set_console_output(False)
        with pytest.warns(UserWarning, match="will end without one gradient step"):
            runner.train()
