"""A run that fails at start-up leaves no run folder; one that fails later is marked FAILED with its traceback."""

from __future__ import annotations

import os
from collections import namedtuple

import gymnasium
import numpy as np
import pytest

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.base import Env, EnvStep
from rlrun.envs.gym import make
from rlrun.envs.validation import EnvValidationError
from rlrun.runners.interrupt import TrainingInterrupted
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.spaces.int_box import IntBox
from rlrun.utils.logging.context import FAILED_FILE, logger_context


class _WrongShapeEnv(Env):
    """Declares 4 observation values and returns 3."""

    def __init__(self):
        self._observation_space = IntBox(low=0, high=1, shape=4)
        self._action_space = IntBox(low=0, high=2)

    def reset(self):
        return np.zeros(3, dtype=np.int64)

    def step(self, action):
        return EnvStep(np.zeros(3, dtype=np.int64), 0.0, False, namedtuple("EnvInfo", [])())


class _FailingA2C(A2C):
    """Raises in its third optimisation, after start-up and a logged row."""

    def optimize_agent(self, itr, samples):
        if itr == 2:
            raise RuntimeError("loss exploded on purpose")
        return super().optimize_agent(itr, samples)


def _runner(EnvCls=make, env_kwargs=None, algo=None):
    sampler = SerialSampler(EnvCls, dict(id="CartPole-v1") if env_kwargs is None else env_kwargs, batch_T=4, batch_B=2)
    return MinibatchRl(
        algo=algo or A2C(), agent=CategoricalPgAgent(), sampler=sampler, n_steps=40, log_interval_steps=8, seed=0
    )


@pytest.mark.parametrize(
    "EnvCls, env_kwargs, error",
    [(make, dict(id="NoSuchEnv-v0"), gymnasium.error.NameNotFound), (_WrongShapeEnv, {}, EnvValidationError)],
    ids=["wrong_env_id", "bad_observation_shape"],
)
def test_run_failing_at_startup_leaves_no_run_folder_and_the_next_run_takes_its_name(
    tmp_path, capsys, EnvCls, env_kwargs, error
):
    with pytest.raises(error):
        with logger_context(str(tmp_path / "exp"), 0, "a2c", override_prefix=True):
            _runner(EnvCls, env_kwargs).train()
    assert not (tmp_path / "exp" / "run_0").exists()
    assert "The run failed before it started" in capsys.readouterr().out
    with logger_context(str(tmp_path / "exp"), 0, "a2c", override_prefix=True) as run_dir:
        _runner().train()
    assert run_dir == str(tmp_path / "exp" / "run_0")


def test_run_failing_at_startup_under_data_local_leaves_no_empty_date_time_and_name_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "local").mkdir(parents=True)  # an earlier run's: kept
    with pytest.raises(EnvValidationError):
        with logger_context("exp", 0, "a2c"):  # ./data/local/<date>/<time>/exp/run_0
            _runner(_WrongShapeEnv, {}).train()
    assert os.listdir(tmp_path / "data" / "local") == []


def test_run_failing_after_startup_keeps_its_folder_with_a_failed_file(tmp_path):
    with pytest.raises(RuntimeError, match="loss exploded"):
        with logger_context(str(tmp_path), 0, "a2c", override_prefix=True) as run_dir:
            _runner(algo=_FailingA2C()).train()
    failed = open(os.path.join(run_dir, FAILED_FILE)).read()
    assert "Traceback" in failed and "RuntimeError: loss exploded on purpose" in failed
    with open(os.path.join(run_dir, "progress.csv")) as f:
        assert len(f.readlines()) == 3  # the header and the rows of iterations 0 and 1
    assert "RuntimeError: loss exploded on purpose" in open(os.path.join(run_dir, "debug.log")).read()


def test_folder_with_files_of_the_user_is_kept_and_marked_failed(tmp_path):
    with pytest.raises(gymnasium.error.NameNotFound):
        with logger_context(str(tmp_path), 0, "a2c", override_prefix=True) as run_dir:
            open(os.path.join(run_dir, "notes.txt"), "w").close()
            _runner(make, dict(id="NoSuchEnv-v0")).train()
    assert os.path.exists(os.path.join(run_dir, "notes.txt"))
    assert "NoSuchEnv" in open(os.path.join(run_dir, FAILED_FILE)).read()


def test_an_interruption_is_no_failure_and_a_resumed_run_clears_an_old_failed_file(tmp_path):
    with pytest.raises(TrainingInterrupted):
        with logger_context(str(tmp_path), 0, "a2c", override_prefix=True) as run_dir:
            raise TrainingInterrupted()
    assert os.path.isdir(run_dir) and not os.path.exists(os.path.join(run_dir, FAILED_FILE))
    open(os.path.join(run_dir, FAILED_FILE), "w").close()
    with logger_context(str(tmp_path), 0, "a2c", override_prefix=True, resume=True):
        assert not os.path.exists(os.path.join(run_dir, FAILED_FILE))
