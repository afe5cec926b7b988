"""initialize_worker: CPU pinning, torch threads and seeding inside a real worker process."""

from __future__ import annotations

import multiprocessing as mp
import random

import psutil
import pytest
import torch

from rlrun.samplers.parallel.worker import initialize_worker


def _report(queue, cpu, torch_threads):
    initialize_worker(0, seed=123, cpu=cpu, torch_threads=torch_threads)
    queue.put((psutil.Process().cpu_affinity(), torch.get_num_threads(), random.random(), float(torch.rand(1))))


def _in_child(cpu, torch_threads):
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    process = ctx.Process(target=_report, args=(queue, cpu, torch_threads))
    process.start()
    result = queue.get(timeout=30)
    process.join(10)
    return result


@pytest.mark.timeout(30)
def test_pinned_worker_gets_its_cpu_and_one_torch_thread_per_cpu():
    cpu = psutil.Process().cpu_affinity()[-1]
    affinity, threads, _, _ = _in_child(cpu, None)
    assert affinity == [cpu] and threads == 1


@pytest.mark.timeout(30)
def test_worker_pinned_to_several_cpus_gets_a_torch_thread_for_each():
    cpus = psutil.Process().cpu_affinity()[:2]
    if len(cpus) < 2:
        pytest.skip("needs 2 usable CPUs")
    affinity, threads, _, _ = _in_child(cpus, None)
    assert affinity == cpus and threads == 2


@pytest.mark.timeout(30)
def test_unpinned_worker_keeps_its_cpus_and_takes_the_given_torch_threads():
    affinity, threads, _, _ = _in_child(None, 2)
    assert affinity == psutil.Process().cpu_affinity() and threads == 2


@pytest.mark.timeout(30)
def test_worker_seed_makes_global_random_draws_repeat():
    assert _in_child(None, 1)[2:] == _in_child(None, 1)[2:]


def _pin_to(queue, cpu):
    try:
        initialize_worker(3, cpu=cpu)
    except ValueError as e:
        queue.put(str(e))


@pytest.mark.timeout(30)
def test_pinning_to_a_cpu_this_process_cannot_use_names_the_worker_and_the_fix():
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    process = ctx.Process(target=_pin_to, args=(queue, 4096))
    process.start()
    message = queue.get(timeout=30)
    process.join(10)
    assert "gives sampler worker 3 CPUs [4096]" in message and "set_affinity" in message
