"""Every way a parallel run can fail ends in one clear error within 5 s, with nothing left behind.

rlpyt hung forever in ``barrier_out.wait()`` for an env exception and for a worker killed by a signal.
Each test here checks the error names the worker rank and its env ranks and carries the worker's own
traceback, and that no child process and no /dev/shm entry remains.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from faulty_envs import FAILURE_TEXT, FaultyCartPole
from parallel_helpers import cpu_sampler, start, workers

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.parallel.protocol import SamplerWorkerError

pytestmark = pytest.mark.timeout(60)
SEED = 10
WORKER_1 = "Sampler worker 1 (env ranks [2, 3])"  # B=4 over 2 workers


def faulty(fail_in, env_rank=3, **kwargs):
    """A sampler whose env rank ``env_rank`` (worker 1's second env) fails ``fail_in``."""
    env_kwargs = dict(fail_in=fail_in, fail_seed=SEED + env_rank, fail_worker=1)
    return cpu_sampler(EnvCls=FaultyCartPole, env_kwargs=env_kwargs, **kwargs)


def assert_reports_worker_1(error: SamplerWorkerError, *texts: str) -> None:
    message = str(error)
    assert message.startswith(WORKER_1), message
    assert (error.rank, error.env_ranks) == (1, [2, 3])
    assert "Traceback (most recent call last)" in message and "faulty_envs.py" in message
    for text in texts:
        assert text in message, message


@pytest.mark.parametrize("fail_in, where", [("init", "in __init__"), ("reset", "in reset")])
def test_env_failing_at_start_up_raises_one_error_from_initialize(fail_in, where, leak_check):
    sampler = faulty(fail_in)
    t0 = time.monotonic()
    with pytest.raises(SamplerWorkerError) as info:
        start(sampler, seed=SEED)
    assert time.monotonic() - t0 < 5
    assert_reports_worker_1(info.value, f"RuntimeError: {FAILURE_TEXT} {where}")
    leak_check.assert_clean()


def test_env_raising_at_step_57_of_worker_1_raises_within_5s(leak_check):
    sampler = faulty("step", T=100)
    start(sampler, seed=SEED)
    t0 = time.monotonic()
    with pytest.raises(SamplerWorkerError) as info:
        sampler.obtain_samples(0)
    assert time.monotonic() - t0 < 5
    assert_reports_worker_1(info.value, f"{FAILURE_TEXT} at step 57", "collect_batch")
    leak_check.assert_clean()
    with pytest.raises(RuntimeError, match="not running"):
        sampler.obtain_samples(1)


def test_env_raising_during_decorrelation_raises_from_initialize(leak_check):
    sampler = faulty("step", decorrelation=2000)  # env rank 3 draws more than 57 random steps (else no raise)
    with pytest.raises(SamplerWorkerError) as info:
        start(sampler, seed=SEED)
    assert_reports_worker_1(info.value, f"{FAILURE_TEXT} at step 57", "start_envs")


def test_worker_killed_by_sigkill_mid_batch_is_reported_within_5s(leak_check):
    sampler = faulty("kill", T=100)
    start(sampler, seed=SEED)
    t0 = time.monotonic()
    with pytest.raises(SamplerWorkerError, match=r"stopped unexpectedly with signal SIGKILL \(exit code -9\)") as info:
        sampler.obtain_samples(0)
    assert time.monotonic() - t0 < 5
    assert str(info.value).startswith(WORKER_1)


def test_worker_killed_between_batches_is_reported_at_the_next_batch(leak_check):
    sampler = cpu_sampler()
    start(sampler)
    sampler.obtain_samples(0)
    os.kill(sampler.workers[0].pid, signal.SIGKILL)
    t0 = time.monotonic()
    with pytest.raises(
        SamplerWorkerError, match=r"worker 0 \(env ranks \[0, 1\]\) stopped unexpectedly with signal SIGKILL"
    ):
        sampler.obtain_samples(1)
    assert time.monotonic() - t0 < 5


def test_env_raising_during_evaluation_names_the_workers_eval_envs(leak_check):
    # B=4 and eval_n_envs=4 over 2 workers: eval env ranks 4-7, worker 1 holds 6 and 7.
    env_kwargs = dict(fail_in="step", fail_seed=SEED + 7, fail_step=5)
    sampler = cpu_sampler(
        EnvCls=FaultyCartPole, env_kwargs=env_kwargs, eval_n_envs=4, eval_max_steps=4000, eval_max_trajectories=8
    )
    start(sampler, seed=SEED)
    sampler.obtain_samples(0)  # training envs (ranks 0-3) are fine
    with pytest.raises(SamplerWorkerError) as info:
        sampler.evaluate_agent(1)
    message = str(info.value)
    assert message.startswith("Sampler worker 1 (env ranks [2, 3], eval env ranks [6, 7]) raised an error during eval")
    assert (info.value.rank, info.value.eval_env_ranks, info.value.evaluation) == (1, [6, 7], True)
    assert f"{FAILURE_TEXT} at step 5" in str(info.value)
    leak_check.assert_clean()


@pytest.mark.parametrize("evaluation", [False, True])
def test_ctrl_c_just_after_a_round_opens_shuts_down_instead_of_leaving_workers_a_round_ahead(evaluation, leak_check):
    """The round's command is out, the master has not started waiting: workers must not carry on alone."""
    sampler = cpu_sampler(B=4, eval_n_envs=2, eval_max_steps=20_000)
    start(sampler)
    pool = sampler.pool
    send = pool.send

    def send_then_interrupt(command):
        send(command)
        pool.send = send  # once: shutdown sends a last command to tell the workers to quit
        raise KeyboardInterrupt

    pool.send = send_then_interrupt
    with pytest.raises(KeyboardInterrupt):
        sampler.evaluate_agent(0) if evaluation else sampler.obtain_samples(0)
    assert sampler.pool is None and sampler.workers == []
    leak_check.assert_clean()
    with pytest.raises(RuntimeError, match="not running"):
        sampler.obtain_samples(1)


class FailingA2C(A2C):
    """A2C whose update raises ``error`` at iteration 2, as a bug in an algorithm would."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    def optimize_agent(self, itr, samples):
        if itr == 2:
            raise self.error
        return super().optimize_agent(itr, samples)


@pytest.mark.parametrize("error", [ValueError("bug in the algorithm"), KeyboardInterrupt()])
def test_error_in_the_master_between_batches_stops_every_worker(error, leak_check):
    sampler = cpu_sampler(T=10, B=4)
    runner = MinibatchRl(
        algo=FailingA2C(error), agent=CategoricalPgAgent(), sampler=sampler, n_steps=400, affinity=workers(2), seed=1
    )
    with pytest.raises(type(error)):
        runner.train()
    leak_check.assert_clean()


@pytest.fixture
def ctrl_c_raises():
    """Python's own SIGINT handler, whatever started pytest: a shell's background job ignores SIGINT."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("presses", [pytest.param(1, marks=pytest.mark.integration), 2])
def test_ctrl_c_while_workers_sample_stops_them_within_5s(presses, leak_check, ctrl_c_raises):
    """The second press lands while the sampler waits for its busy workers to quit."""
    sampler = cpu_sampler(EnvCls=FaultyCartPole, env_kwargs=dict(step_sleep=0.01), T=300, B=4)
    start(sampler)
    timers = [threading.Timer(0.3 + 0.5 * i, signal.raise_signal, (signal.SIGINT,)) for i in range(presses)]
    for timer in timers:
        timer.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sampler.obtain_samples(0)  # a batch of about 6 s
    assert time.monotonic() - t0 < 5
    leak_check.assert_clean()  # the sampler stopped its workers before letting Ctrl-C through


MASTER_SCRIPT = """
import sys, tempfile, time
scratch = tempfile.TemporaryDirectory() if {finalizer_first} else None  # a weakref.finalize made first
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.envs.gym import make
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
sampler = CpuSampler(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=5, batch_B=2)
sampler.initialize(CategoricalPgAgent(), affinity=dict(workers_cpus=[[0], [0]], set_affinity=False), seed=0)
sampler.obtain_samples(0)
print(" ".join(str(w.pid) for w in sampler.workers), flush=True)
time.sleep({sleep})
"""


def start_master(sleep: float, finalizer_first: bool = False) -> tuple[subprocess.Popen, list[int]]:
    """A master process running a 2-worker CpuSampler (one batch done); returns it and its workers' pids.
    After ``sleep`` seconds it leaves without calling shutdown()."""
    script = MASTER_SCRIPT.format(sleep=sleep, finalizer_first=finalizer_first)
    root = str(Path(__file__).parents[3])
    master = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=root)
    )
    pids = [int(p) for p in master.stdout.readline().split()]
    assert len(pids) == 2
    return master, pids


def still_running(pids: list[int], within: float = 0.0) -> list[int]:
    """The ``pids`` still running (zombies do not count) after waiting up to ``within`` seconds for them."""
    deadline = time.monotonic() + within
    while any(psutil.pid_exists(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]


def test_workers_exit_on_their_own_when_the_master_is_killed():
    master, pids = start_master(sleep=60)
    try:
        master.kill()
        master.wait(10)
        alive = still_running(pids, within=5)
        assert not alive, f"workers {alive} outlived their master"
    finally:
        master.kill()
        master.wait()


@pytest.mark.parametrize("finalizer_first", [pytest.param(False, marks=pytest.mark.integration), True])
def test_a_script_that_never_calls_shutdown_exits_and_leaves_no_worker(finalizer_first):
    """At interpreter exit the sampler stops its workers before multiprocessing joins them. A
    weakref.finalize made first (TemporaryDirectory makes one) used to order that the other way: a hang."""
    master, pids = start_master(sleep=0, finalizer_first=finalizer_first)
    try:
        assert master.wait(20) == 0
        alive = still_running(pids)
        assert not alive, f"workers {alive} outlived their master"
    finally:
        master.kill()
        master.wait()


def test_a_sigterm_to_the_workers_while_the_master_runs_leaves_the_decision_to_the_master(leak_check):
    """A SIGTERM to the process group (timeout, Slurm, systemd) reaches the workers too; they keep sampling,
    and stop when the master stops them (its own last-resort SIGTERM comes after it began stopping)."""
    sampler = cpu_sampler(T=10, B=4)
    start(sampler, seed=0)
    sampler.obtain_samples(0)
    processes = sampler.workers
    for process in processes:
        os.kill(process.pid, signal.SIGTERM)
    time.sleep(0.3)
    assert all(process.exitcode is None for process in processes)
    samples, _ = sampler.obtain_samples(1)
    assert samples.env.reward.shape == (10, 4)
    sampler.shutdown()
    leak_check.assert_clean()  # every worker gone, nothing left in /dev/shm
