"""Checkpoint and resume: bit-identical serial resumes for every algorithm, and runs resumed after a
crash in the same process (the kill -9 tests with real processes are in test_checkpoint_signals.py)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from checkpoint_runs import ALGOS, build_runner  # noqa: E402

from rlrun.runners.checkpoint import (  # noqa: E402
    CheckpointError,
    CheckpointPolicy,
    NothingToResumeError,
    list_checkpoints,
    load_checkpoint,
)
from rlrun.utils.logging import logger  # noqa: E402
from rlrun.utils.logging.context import logger_context  # noqa: E402

# Wall-clock columns differ between any two runs; everything else must match.
TIME_COLUMNS = ("CumTime (s)", "StepsPerSecond", "UpdatesPerSecond", "CumTrainTime", "EvalTime", "CumEvalTime")
N_STEPS = 320  # 10 iterations of 8 x 4 steps, one log row each


class SimulatedCrashError(Exception):
    """Stands for the process dying in the middle of an iteration."""


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def read_rows(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "progress.csv", newline="") as f:
        return list(csv.DictReader(f))


def without_time(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [{k: v for k, v in row.items() if not k.endswith(TIME_COLUMNS)} for row in rows]


def train(parent: Path, resume: bool = False, crash_at: int | None = None, **kwargs) -> Path:
    """Train in ``parent/run_0``; ``crash_at`` raises inside that iteration's sampling."""
    runner = build_runner(n_steps=kwargs.pop("n_steps", N_STEPS), resume=resume, **kwargs)
    if crash_at is not None:
        obtain = runner.sampler.obtain_samples

        def obtain_or_crash(itr):
            if itr == crash_at:
                raise SimulatedCrashError(itr)
            return obtain(itr)

        runner.sampler.obtain_samples = obtain_or_crash
    with logger_context(str(parent), 0, "test", override_prefix=True, resume=resume) as run_dir:
        logger.set_console_output(False)
        try:
            runner.train()
        except SimulatedCrashError:
            pass
    return Path(run_dir)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("algo", ALGOS)
def test_a_serial_run_resumed_after_a_crash_logs_the_same_rows_bit_for_bit(algo, tmp_path):
    full = read_rows(train(tmp_path / "full", algo=algo))
    train(tmp_path / "cut", algo=algo, crash_at=6)  # checkpoints after itrs 0..5
    resumed = read_rows(train(tmp_path / "cut", algo=algo, resume=True))
    assert [r["Diagnostics/Iteration"] for r in resumed] == [str(i) for i in range(10)]
    assert without_time(resumed) == without_time(full)


@pytest.mark.timeout(60)
def test_a_resumed_minibatch_rl_eval_run_evaluates_and_logs_as_the_uninterrupted_one(tmp_path):
    full = read_rows(train(tmp_path / "full", algo="dqn", evaluate=True))
    train(tmp_path / "cut", algo="dqn", evaluate=True, crash_at=4)
    resumed = read_rows(train(tmp_path / "cut", algo="dqn", evaluate=True, resume=True))
    assert len(resumed) == 11  # the evaluation before training, then one row per iteration
    assert without_time(resumed) == without_time(full)


@pytest.mark.timeout(60)
def test_rows_logged_after_the_last_checkpoint_are_cut_and_logged_again_once(tmp_path):
    policy = CheckpointPolicy(every_itrs=4)
    train(tmp_path / "run", algo="a2c", crash_at=7, policy=policy)  # rows 0..6 logged, checkpoint after itr 3
    assert len(read_rows(tmp_path / "run" / "run_0")) == 7
    run_dir = train(tmp_path / "run", algo="a2c", resume=True, policy=policy)
    rows = read_rows(run_dir)
    assert [int(r["Diagnostics/Iteration"]) for r in rows] == list(range(10))
    assert int(rows[-1]["Diagnostics/CumSteps"]) == N_STEPS
    assert without_time(rows) == without_time(read_rows(train(tmp_path / "full", algo="a2c", policy=policy)))


@pytest.mark.timeout(60)
def test_resume_without_a_checkpoint_after_logged_rows_refuses_and_keeps_progress_csv(tmp_path):
    train(tmp_path / "run", algo="a2c", crash_at=3, policy=CheckpointPolicy(every_itrs=5))  # rows 0..2, none saved
    run_dir = tmp_path / "run" / "run_0"
    before = (run_dir / "progress.csv").read_bytes()
    with pytest.raises(NothingToResumeError, match=r"progress.csv has 3 logged row\(s\)") as caught:
        train(tmp_path / "run", algo="a2c", resume=True, n_steps=160)
    assert "run without resume" in str(caught.value)
    assert (run_dir / "progress.csv").read_bytes() == before
    assert not (run_dir / "FAILED").exists()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("damage", ["truncate data", "corrupt manifests"])
def test_resume_with_every_checkpoint_unusable_refuses_naming_them_and_keeps_progress_csv(tmp_path, damage):
    train(tmp_path / "run", algo="a2c", crash_at=7, policy=CheckpointPolicy(every_itrs=2, keep_last=3))
    run_dir = tmp_path / "run" / "run_0"
    infos = list_checkpoints(run_dir / "checkpoints")
    assert len(infos) >= 2
    for info in infos:
        if damage == "truncate data":
            info.path.write_bytes(info.path.read_bytes()[:100])
        else:
            info.manifest.write_text("{not json")
    before = (run_dir / "progress.csv").read_bytes()
    with pytest.raises(NothingToResumeError) as caught:
        train(tmp_path / "run", algo="a2c", resume=True)
    message = str(caught.value)
    assert "none usable" in message and infos[-1].path.name in message and "7 logged row(s)" in message
    assert (run_dir / "progress.csv").read_bytes() == before  # byte for byte: nothing cut, nothing added
    assert not (run_dir / "FAILED").exists()


@pytest.mark.timeout(60)
def test_resume_into_a_fresh_folder_starts_at_iteration_0(tmp_path):
    """A script that always passes resume=True starts its first attempt normally."""
    rows = read_rows(train(tmp_path / "new", algo="a2c", resume=True, n_steps=160))
    assert [int(r["Diagnostics/Iteration"]) for r in rows] == list(range(5))


@pytest.mark.timeout(60)
def test_keep_last_keeps_the_newest_checkpoints_and_the_last_iteration_is_always_saved(tmp_path):
    run_dir = train(tmp_path / "run", algo="a2c", policy=CheckpointPolicy(every_itrs=3, keep_last=2))
    folder = run_dir / "checkpoints"
    assert [i.itr for i in list_checkpoints(folder)] == [8, 9]  # every 3rd (2, 5, 8), and the last
    assert sorted(p.name for p in folder.iterdir()) == [
        f"itr_00000000{i}.{ext}" for i in (8, 9) for ext in ("ckpt", "json")
    ]


@pytest.mark.timeout(60)
def test_every_logs_writes_a_checkpoint_at_every_nth_log_row(tmp_path):
    runner = build_runner(algo="a2c", n_steps=N_STEPS, policy=CheckpointPolicy(every_logs=2, keep_last=10))
    runner.log_interval_steps = 64  # a row every 2 iterations: checkpoints after itrs 3, 7 and the last, 9
    with logger_context(str(tmp_path), 0, "test", override_prefix=True) as run_dir:
        logger.set_console_output(False)
        runner.train()
    assert [i.itr for i in list_checkpoints(Path(run_dir) / "checkpoints")] == [3, 7, 9]


@pytest.mark.timeout(60)
def test_the_replay_is_saved_unless_the_policy_leaves_it_out_and_the_run_still_resumes(tmp_path):
    with_replay = train(tmp_path / "with", algo="dqn", n_steps=96)
    state = load_checkpoint(list_checkpoints(with_replay / "checkpoints")[-1])
    assert state["algo"]["replay_buffer"]["storage"]["t"] == 24  # 3 batches of 8 steps
    no_replay = CheckpointPolicy(every_itrs=1, replay=False)
    cut = train(tmp_path / "without", algo="dqn", crash_at=5, policy=no_replay)
    assert "replay_buffer" not in load_checkpoint(list_checkpoints(cut / "checkpoints")[-1])["algo"]
    rows = read_rows(train(tmp_path / "without", algo="dqn", resume=True, policy=no_replay))
    assert [int(r["Diagnostics/Iteration"]) for r in rows] == list(range(10))


@pytest.mark.timeout(60)
def test_resuming_with_another_batch_size_is_refused_with_the_cause(tmp_path):
    train(tmp_path / "run", algo="a2c", n_steps=64)
    runner = build_runner(algo="a2c", n_steps=N_STEPS, resume=True)
    runner.sampler.batch_spec = runner.sampler.batch_spec._replace(T=4)
    with logger_context(str(tmp_path / "run"), 0, "test", override_prefix=True, resume=True):
        logger.set_console_output(False)
        with pytest.raises(CheckpointError, match="32 steps per iteration, this one takes 16"):
            runner.train()


def test_checkpoints_need_a_log_folder(tmp_path):
    runner = build_runner(algo="a2c", n_steps=64)
    with pytest.raises(ValueError, match="inside logger_context"):
        runner.train()
