"""Stop signals in this process: the iteration finishes, a checkpoint is written, the exception says so;
a second signal abandons at once; a parallel sampler's resumed run continues; a finished run stays done."""

from __future__ import annotations

import csv
import os
import signal
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from checkpoint_runs import build_runner  # noqa: E402

from rlrun.runners.checkpoint import list_checkpoints  # noqa: E402
from rlrun.runners.interrupt import StopSignals, TrainingInterrupted, interrupted_error  # noqa: E402
from rlrun.utils.logging import logger  # noqa: E402
from rlrun.utils.logging.context import logger_context  # noqa: E402


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def iterations(run_dir: Path) -> list[int]:
    with open(run_dir / "progress.csv", newline="") as f:
        return [int(r["Diagnostics/Iteration"]) for r in csv.DictReader(f)]


def run(parent: Path, signal_at: int | None = None, signals: int = 1, resume: bool = False, **kwargs):
    """Train in ``parent/run_0``, sending this process ``signals`` SIGTERMs while sampling ``signal_at``."""
    runner = build_runner(resume=resume, **kwargs)
    obtain = runner.sampler.obtain_samples

    def obtain_and_signal(itr):
        if itr == signal_at:
            for _ in range(signals):
                os.kill(os.getpid(), signal.SIGTERM)
        return obtain(itr)

    runner.sampler.obtain_samples = obtain_and_signal
    with logger_context(str(parent), 0, "test", override_prefix=True, resume=resume) as run_dir:
        logger.set_console_output(False)
        return runner, Path(run_dir), runner.train()


def test_the_exceptions_carry_the_signal_and_exit_with_128_plus_it():
    sigint, sigterm = interrupted_error(signal.SIGINT, itr=3, checkpoint="c"), interrupted_error(signal.SIGTERM)
    assert isinstance(sigint, KeyboardInterrupt) and isinstance(sigint, SystemExit) and sigint.code == 130
    assert not isinstance(sigterm, KeyboardInterrupt) and sigterm.code == sigterm.exit_code == 143
    assert "SIGINT after iteration 3 (checkpoint c)" in str(sigint)
    assert "before the first iteration (no new checkpoint)" in str(sigterm)


@pytest.mark.timeout(30)
def test_stop_signals_flag_the_first_signal_raise_on_the_second_and_restore_the_handlers():
    before = signal.getsignal(signal.SIGINT)
    with StopSignals() as stop:
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.requested == signal.SIGINT
        with pytest.raises(TrainingInterrupted) as caught:
            os.kill(os.getpid(), signal.SIGTERM)
            signal.sigtimedwait([], 0)  # give the handler a bytecode boundary
        assert caught.value.signum == signal.SIGTERM and caught.value.checkpoint is None
    assert signal.getsignal(signal.SIGINT) is before


@pytest.mark.timeout(60)
def test_sigterm_during_an_iteration_finishes_it_checkpoints_it_and_raises(tmp_path):
    with pytest.raises(TrainingInterrupted) as caught:
        run(tmp_path, signal_at=3, algo="dqn", n_steps=320)
    error = caught.value
    assert (error.signum, error.itr, error.code) == (signal.SIGTERM, 3, 143)
    assert error.checkpoint is not None and error.checkpoint.endswith("itr_000000003.ckpt")
    assert iterations(tmp_path / "run_0") == [0, 1, 2, 3]
    assert list_checkpoints(tmp_path / "run_0" / "checkpoints")[-1].itr == 3


@pytest.mark.timeout(60)
def test_a_second_signal_abandons_the_iteration_and_the_previous_checkpoint_stays_the_newest(tmp_path):
    with pytest.raises(TrainingInterrupted) as caught:
        run(tmp_path, signal_at=3, signals=2, algo="a2c", n_steps=320)
    assert caught.value.itr is None and caught.value.checkpoint is None
    assert iterations(tmp_path / "run_0") == [0, 1, 2]
    assert list_checkpoints(tmp_path / "run_0" / "checkpoints")[-1].itr == 2
    _, run_dir, _ = run(tmp_path, resume=True, algo="a2c", n_steps=320)
    assert iterations(run_dir) == list(range(10))


@pytest.mark.timeout(60)
def test_a_cpu_sampler_run_resumes_from_its_checkpoint_with_fresh_workers(tmp_path):
    with pytest.raises(TrainingInterrupted):
        run(tmp_path, signal_at=2, algo="a2c", sampler="cpu", n_steps=192)
    runner, run_dir, row = run(tmp_path, resume=True, algo="a2c", sampler="cpu", n_steps=192)
    assert runner.resumed_from is not None and runner.resumed_from.itr == 2
    assert iterations(run_dir) == list(range(6)) and row["Diagnostics/CumSteps"] == 192
    assert not runner.sampler.workers


@pytest.mark.timeout(60)
def test_resuming_a_finished_run_trains_no_more_and_returns_its_last_row(tmp_path):
    _, run_dir, first = run(tmp_path, algo="a2c", n_steps=96)
    runner, _, again = run(tmp_path, resume=True, algo="a2c", n_steps=96)
    assert runner.resumed_from is not None and runner.resumed_from.itr == 2
    assert iterations(run_dir) == [0, 1, 2] and again == first


@pytest.mark.timeout(60)
def test_a_run_started_with_another_sampler_layout_resumes_with_fresh_envs(tmp_path):
    # sampler="auto" measures again on resume and may pick another layout than the first start did.
    with pytest.raises(TrainingInterrupted):
        run(tmp_path, signal_at=2, algo="a2c", sampler="cpu", n_steps=192)
    runner, run_dir, row = run(tmp_path, resume=True, algo="a2c", sampler="serial", n_steps=192)
    assert runner.resumed_from is not None and runner.resumed_from.itr == 2
    assert iterations(run_dir) == list(range(6)) and row["Diagnostics/CumSteps"] == 192
