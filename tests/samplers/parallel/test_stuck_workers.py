"""No wait without end: a stuck, stopped or orphaned worker is found and reported, with where it is stuck.

A worker that is alive but makes no progress (an env in an endless loop, a long C call, a hung
constructor) becomes a SamplerWorkerError carrying its Python stack once ``worker_timeout`` passes;
a stopped worker is reported within 5 s; workers die within 1 s of their master, even mid-step.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from faulty_envs import FaultyCartPole
from parallel_helpers import cpu_sampler, start

from rlrun.samplers.parallel.protocol import SamplerWorkerError

pytestmark = pytest.mark.timeout(60)
SEED = 10
TIMEOUT = 2.0


def stuck(fail_in, **kwargs):
    """Env rank 3 (worker 1's second env) gets stuck at its 30th step."""
    env_kwargs = dict(fail_in=fail_in, fail_seed=SEED + 3, fail_step=30, fail_worker=1)
    return cpu_sampler(EnvCls=FaultyCartPole, env_kwargs=env_kwargs, worker_timeout=TIMEOUT, T=50, **kwargs)


@pytest.mark.parametrize(
    "fail_in, frame", [("hang", "hang_forever"), pytest.param("sleep", "step", marks=pytest.mark.integration)]
)
def test_worker_stuck_in_a_step_becomes_an_error_with_its_stack_after_the_timeout(fail_in, frame, leak_check, caplog):
    sampler = stuck(fail_in)
    start(sampler, seed=SEED)
    t0 = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="rlrun"), pytest.raises(SamplerWorkerError) as info:
        sampler.obtain_samples(0)
    elapsed = time.monotonic() - t0
    assert TIMEOUT <= elapsed < TIMEOUT + 3
    message = str(info.value)
    assert message.startswith(
        "Sampler worker 1 (env ranks [2, 3]) did not finish a batch at itr 0 within worker_timeout=2 s"
    )
    assert "faulty_envs.py" in message and f"in {frame}" in message and "collect_batch" in message
    assert "raise the sampler's worker_timeout" in message
    # Half-way, a warning showed the same place.
    warnings = [r.getMessage() for r in caplog.records if "has been busy with a batch at itr 0" in r.getMessage()]
    assert len(warnings) == 1 and f"in {frame}" in warnings[0]
    leak_check.assert_clean()


def test_constructor_that_hangs_fails_initialize_with_its_stack(leak_check):
    sampler = stuck("hang_init")
    t0 = time.monotonic()
    with pytest.raises(SamplerWorkerError) as info:
        start(sampler, seed=SEED)
    assert time.monotonic() - t0 < TIMEOUT + 3
    message = str(info.value)
    assert message.startswith("Sampler worker 1 (env ranks [2, 3]) did not finish its start-up")
    assert "in hang_forever" in message and "in __init__" in message
    leak_check.assert_clean()


def test_stopped_worker_is_reported_within_5s(leak_check):
    sampler = cpu_sampler(EnvCls=FaultyCartPole, env_kwargs=dict(step_sleep=0.005), T=100)
    start(sampler, seed=SEED)
    sampler.obtain_samples(0)
    pid = sampler.workers[1].pid
    os.kill(pid, signal.SIGSTOP)
    t0 = time.monotonic()
    with pytest.raises(SamplerWorkerError) as info:
        sampler.obtain_samples(1)
    assert time.monotonic() - t0 < 5
    assert str(info.value).startswith("Sampler worker 1 (env ranks [2, 3]) is stopped")
    assert f"kill -CONT {pid}" in str(info.value)
    leak_check.assert_clean()  # a stopped worker is killed all the same


def test_the_timeout_must_be_positive_or_none():
    with pytest.raises(ValueError, match="worker_timeout must be a positive number of seconds or None"):
        cpu_sampler(worker_timeout=0)
    assert cpu_sampler(worker_timeout=None).worker_timeout is None


MASTER_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from faulty_envs import FaultyCartPole
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
sampler = CpuSampler(EnvCls=FaultyCartPole, env_kwargs=dict(fail_in="hang", fail_seed="all", fail_step=1), batch_T=5,
                     batch_B=2, max_decorrelation_steps=0)
sampler.initialize(CategoricalPgAgent(), affinity=dict(workers_cpus=[[0], [0]], set_affinity=False), seed=0)
print(" ".join(str(w.pid) for w in sampler.workers), flush=True)
sampler.obtain_samples(0)  # every env hangs in its first step: the workers stay busy
"""


def test_busy_workers_die_within_1s_of_a_sigkilled_master():
    tests = str(Path(__file__).parent)
    script = MASTER_SCRIPT.format(tests=tests)
    root = str(Path(__file__).parents[3])
    master = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=root)
    )
    try:
        pids = [int(p) for p in master.stdout.readline().split()]
        assert len(pids) == 2
        # Wait until both workers are busy in their endless step.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(psutil.Process(p).cpu_percent(0.1) > 20 for p in pids):
            pass
        master.kill()
        master.wait(10)
        t0 = time.monotonic()
        while any(_running(p) for p in pids) and time.monotonic() - t0 < 5:
            time.sleep(0.02)
        assert time.monotonic() - t0 < 1.0, f"workers {[p for p in pids if _running(p)]} outlived their master"
    finally:
        master.kill()
        master.wait()


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


WATCHDOG_SCRIPT = """
import multiprocessing as mp, sys
from rlrun.samplers.parallel.protocol import die_with_parent

def busy(use_kernel):
    assert die_with_parent(use_kernel=use_kernel) == ("kernel" if use_kernel else "watchdog")
    n = 0
    while True:  # busy, never waiting: only the kernel or the watchdog can end it
        n += 1

if __name__ == "__main__":
    child = mp.get_context("fork").Process(target=busy, args=({use_kernel},))
    child.start()
    print(child.pid, flush=True)
    child.join()
"""


@pytest.mark.parametrize("use_kernel", [True, False], ids=["pdeathsig", "watchdog"])
def test_a_busy_child_dies_within_1s_of_its_parent_by_kernel_signal_or_watchdog(use_kernel, tmp_path):
    """The watchdog thread is what platforms without PR_SET_PDEATHSIG get; it is tested here on Linux."""
    script = tmp_path / "parent.py"
    script.write_text(WATCHDOG_SCRIPT.format(use_kernel=use_kernel))
    root = str(Path(__file__).parents[3])
    parent = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=root)
    )
    try:
        pid = int(parent.stdout.readline())
        time.sleep(0.3)
        assert _running(pid)
        parent.kill()
        parent.wait(10)
        t0 = time.monotonic()
        while _running(pid) and time.monotonic() - t0 < 5:
            time.sleep(0.02)
        assert time.monotonic() - t0 < 1.0, "the busy child outlived its parent"
    finally:
        parent.kill()
        parent.wait()
        if _running(pid):
            os.kill(pid, signal.SIGKILL)
