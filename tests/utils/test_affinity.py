"""Affinity layouts, rlpyt's string codes and their errors (rlrun.utils.launching.affinity)."""

from __future__ import annotations

import multiprocessing as mp
import os

import psutil
import pytest
import torch

from rlrun.utils.launching.affinity import (
    Machine,
    affinity_for_sampler,
    affinity_from_code,
    decode_affinity,
    default_affinity,
    encode_affinity,
    get_n_run_slots,
    make_affinity,
    master_threads_beside_workers,
    prepend_run_slot,
    quick_affinity_code,
    remove_run_slot,
)

USABLE = tuple(sorted(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else tuple(range(os.cpu_count()))
TWO_CORES = Machine(cpus=(0, 1), n_gpu=0)
EIGHT_CORES_ONE_GPU = Machine(cpus=range(8), n_gpu=1)
BIG = Machine(cpus=range(16), n_gpu=4)


def cpu_run(cpus, workers, cuda_idx=None, master_threads=None, worker_threads=1, alternating=False, pinned=True):
    """The dict make_affinity returns for one run, spelled out."""
    return dict(
        all_cpus=tuple(cpus),
        master_cpus=tuple(cpus),
        workers_cpus=tuple(tuple(w) for w in workers),
        master_torch_threads=len(cpus) if master_threads is None else master_threads,
        worker_torch_threads=worker_threads,
        cuda_idx=cuda_idx,
        alternating=alternating,
        set_affinity=pinned,
    )


# ------------------------------------------------------------------------------------------ defaults


def test_make_affinity_with_no_arguments_works_on_this_machine_with_rlpyts_one_core_runs():
    affinity = make_affinity()
    assert affinity == cpu_run([USABLE[0]], [[USABLE[0]]], cuda_idx=0 if torch.cuda.device_count() else None)
    assert affinity.master_cpus == affinity["master_cpus"]  # an AttrDict, as rlpyt's


def test_one_run_on_every_usable_cpu_needs_only_cpu_per_run():
    affinity = make_affinity(cpu_per_run=len(USABLE), n_gpu=0)
    assert affinity == cpu_run(USABLE, [[c] for c in USABLE])


def test_default_affinity_has_one_unpinned_worker_per_usable_cpu():
    affinity = default_affinity()
    assert affinity.workers_cpus == tuple((c,) for c in USABLE)
    assert affinity.set_affinity is False and affinity.worker_torch_threads == 1 and affinity.cuda_idx is None
    assert len(default_affinity(5, machine=TWO_CORES).workers_cpus) == 5
    assert default_affinity(alternating=True, machine=TWO_CORES).workers_cpus == ((0,), (1,), (0,), (1,))


def test_default_affinity_gives_the_master_the_cpus_its_workers_leave_and_at_least_one_thread():
    assert default_affinity(machine=TWO_CORES).master_torch_threads == 1
    assert default_affinity(alternating=True, machine=TWO_CORES).master_torch_threads == 1
    assert default_affinity(3, machine=EIGHT_CORES_ONE_GPU).master_torch_threads == 5
    assert master_threads_beside_workers(0, TWO_CORES) == 2
    assert master_threads_beside_workers(5, TWO_CORES) == 1
    with pytest.raises(ValueError, match="n_worker must be an integer >= 0"):
        master_threads_beside_workers(-1, TWO_CORES)


def test_machine_current_reads_this_process_cpu_mask_and_torch_cuda_count():
    machine = Machine.current()
    assert machine.cpus == USABLE and machine.n_gpu == torch.cuda.device_count()


# ---------------------------------------------------------------------------------- typical layouts


def test_two_cores_no_gpu_one_run_gives_two_workers():
    assert make_affinity(n_cpu_core=2, n_gpu=0, cpu_per_run=2, machine=TWO_CORES) == cpu_run((0, 1), [[0], [1]])


def test_two_cores_no_gpu_two_runs_take_one_core_each():
    assert make_affinity(1, n_cpu_core=2, n_gpu=0, machine=TWO_CORES) == cpu_run([1], [[1]])


def test_eight_cores_one_gpu_gives_the_run_every_core_and_gpu_0():
    affinity = make_affinity(n_cpu_core=8, n_gpu=1, machine=EIGHT_CORES_ONE_GPU)
    assert affinity == cpu_run(range(8), [[c] for c in range(8)], cuda_idx=0)


def test_contexts_per_gpu_spread_runs_over_gpus_first():
    runs = [make_affinity(s, n_cpu_core=8, n_gpu=2, contexts_per_gpu=2, machine=BIG) for s in range(4)]
    assert [r.cuda_idx for r in runs] == [0, 1, 0, 1]
    assert [r.master_cpus for r in runs] == [(0, 1), (4, 5), (2, 3), (6, 7)]


def test_gpu_per_run_gives_one_dict_per_rank():
    ranks = make_affinity(1, n_cpu_core=16, n_gpu=4, gpu_per_run=2, machine=BIG)
    assert [r.cuda_idx for r in ranks] == [2, 3]
    assert [r.master_cpus for r in ranks] == [(8, 9, 10, 11), (12, 13, 14, 15)]


def test_async_with_one_gpu_reserves_one_core_for_the_optimizer():
    affinity = make_affinity(n_cpu_core=8, n_gpu=1, async_sample=True, machine=EIGHT_CORES_ONE_GPU)
    assert affinity.optimizer == [dict(cpus=(0,), cuda_idx=0, torch_threads=1, set_affinity=True)]
    assert affinity.sampler == cpu_run(range(1, 8), [[c] for c in range(1, 8)])
    assert affinity.all_cpus == tuple(range(8)) and affinity.set_affinity is True


def test_async_sampler_sharing_the_optimizer_gpu_is_a_list_with_that_gpu():
    affinity = make_affinity(
        n_cpu_core=8, n_gpu=1, async_sample=True, optim_sample_share_gpu=True, machine=EIGHT_CORES_ONE_GPU
    )
    assert affinity.sampler == [cpu_run(range(1, 8), [[c] for c in range(1, 8)], cuda_idx=0)]


def test_async_with_own_sampling_gpu_and_two_runs():
    affinity = make_affinity(1, n_cpu_core=16, n_gpu=4, async_sample=True, sample_gpu_per_run=1, machine=BIG)
    assert affinity.optimizer[0].cuda_idx == 2 and affinity.optimizer[0].cpus == (8,)
    assert [s.cuda_idx for s in affinity.sampler] == [3]
    assert affinity.sampler[0].workers_cpus == tuple((c,) for c in range(9, 16))


def test_async_on_cpu_only_has_one_optimizer_without_gpu():
    affinity = make_affinity(n_cpu_core=2, n_gpu=0, cpu_per_run=2, async_sample=True, machine=TWO_CORES)
    assert affinity.optimizer == [dict(cpus=(0,), cuda_idx=None, torch_threads=1, set_affinity=True)]
    assert affinity.sampler.workers_cpus == ((1,),)


def test_hyperthread_siblings_join_their_cores_and_alternating_splits_them():
    kw = dict(n_cpu_core=4, n_gpu=1, hyperthread_offset=4, machine=EIGHT_CORES_ONE_GPU)
    paired = make_affinity(**kw)
    assert paired == cpu_run(range(8), [[0, 4], [1, 5], [2, 6], [3, 7]], cuda_idx=0, master_threads=4)
    alternating = make_affinity(alternating=True, **kw)
    assert alternating.workers_cpus == tuple((c,) for c in range(8)) and alternating.alternating is True


def test_alternating_without_siblings_repeats_the_workers():
    affinity = make_affinity(n_cpu_core=2, cpu_per_run=2, n_gpu=0, alternating=True, machine=TWO_CORES)
    assert affinity.workers_cpus == ((0,), (1,), (0,), (1,))


def test_sockets_keep_runs_on_the_physical_cores_of_each_socket():
    # 2 sockets x 8 cores, siblings at +16 (CPU ids 0-31); use 4 cores per socket.
    machine = Machine(cpus=range(32))
    affinity = make_affinity(n_cpu_core=8, n_gpu=0, cpu_per_run=8, hyperthread_offset=16, n_socket=2, machine=machine)
    assert affinity.master_cpus[:8] == (0, 1, 2, 3, 8, 9, 10, 11)
    assert affinity.workers_cpus[4] == (8, 24)


def test_cpu_reserved_and_cpu_per_worker_shape_the_workers():
    affinity = make_affinity(n_cpu_core=8, n_gpu=1, cpu_reserved=2, cpu_per_worker=3, machine=EIGHT_CORES_ONE_GPU)
    assert affinity.workers_cpus == ((2, 3, 4), (5, 6, 7)) and affinity.worker_torch_threads == 3
    assert affinity.master_cpus == tuple(range(8))


def test_cores_map_onto_the_usable_cpu_ids_in_order():
    affinity = make_affinity(n_cpu_core=2, n_gpu=0, cpu_per_run=2, machine=Machine(cpus=(6, 4)))
    assert affinity.workers_cpus == ((4,), (6,))


def _affinities_in_restricted_child(cpu, conn):
    os.sched_setaffinity(0, {cpu})
    conn.send((make_affinity(n_gpu=0), default_affinity()))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs Linux CPU masks")
def test_a_process_restricted_to_one_cpu_lays_out_on_that_cpu():
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    process = ctx.Process(target=_affinities_in_restricted_child, args=(USABLE[-1], child))
    process.start()
    assert parent.poll(30), "the child sent nothing"
    made, default = parent.recv()
    process.join(10)
    assert made.master_cpus == (USABLE[-1],) and default.workers_cpus == ((USABLE[-1],),)


def _report_own_affinity(cpus, conn):
    process = psutil.Process()
    process.cpu_affinity(list(cpus))
    conn.send(process.cpu_affinity())


@pytest.mark.skipif(not hasattr(psutil.Process, "cpu_affinity"), reason="psutil cannot pin on this OS")
def test_workers_cpus_pin_real_processes():
    affinity = make_affinity(n_gpu=0, cpu_per_run=len(USABLE))
    ctx = mp.get_context("fork")
    for cpus in affinity.workers_cpus:
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_report_own_affinity, args=(cpus, child))
        process.start()
        assert parent.poll(30)
        assert parent.recv() == list(cpus)
        process.join(10)


def test_run_slot_cpus_replace_the_computed_cores():
    affinity = make_affinity(n_cpu_core=8, n_gpu=1, run_slot_cpus=[5, 6, 7], machine=EIGHT_CORES_ONE_GPU)
    assert affinity == cpu_run((5, 6, 7), [[5], [6], [7]], cuda_idx=0)


def test_gpu_cpu_affinity_assignment_gives_each_gpu_its_listed_cpus():
    near = {0: [8, 9, 10, 11], 1: [0, 1, 2, 3]}
    runs = [
        make_affinity(s, n_cpu_core=8, n_gpu=2, contexts_per_gpu=2, gpu_cpu_affinity_assignment=near, machine=BIG)
        for s in range(4)
    ]
    assert [(r.cuda_idx, r.master_cpus) for r in runs] == [(0, (8, 9)), (1, (0, 1)), (0, (10, 11)), (1, (2, 3))]


def test_set_affinity_false_sizes_more_workers_than_cpus_without_pinning():
    affinity = make_affinity(n_cpu_core=4, n_gpu=0, cpu_per_run=4, set_affinity=False, machine=TWO_CORES)
    assert len(affinity.workers_cpus) == 4 and affinity.set_affinity is False


# ------------------------------------------------------------------------------------- string codes


ROUND_TRIPS = [
    (0, dict(n_cpu_core=2, n_gpu=0)),
    (1, dict(n_cpu_core=2, n_gpu=0)),
    (0, dict(n_cpu_core=2, n_gpu=0, cpu_per_run=2, alternating=True)),
    (0, dict(n_cpu_core=8, n_gpu=1)),
    (0, dict(n_cpu_core=8, n_gpu=1, hyperthread_offset=8)),
    (3, dict(n_cpu_core=16, n_gpu=4, contexts_per_gpu=2, cpu_per_worker=2, set_affinity=False)),
    (1, dict(n_cpu_core=16, n_gpu=4, gpu_per_run=2, cpu_reserved=1)),
    (0, dict(n_cpu_core=8, n_gpu=1, async_sample=True)),
    (0, dict(n_cpu_core=8, n_gpu=1, async_sample=True, cpu_reserved=2, optim_sample_share_gpu=True)),
    (1, dict(n_cpu_core=16, n_gpu=4, async_sample=True, sample_gpu_per_run=1)),
    (0, dict(n_cpu_core=4, n_gpu=0, cpu_per_run=4, hyperthread_offset=8, n_socket=2)),
]


@pytest.mark.parametrize("run_slot, keywords", ROUND_TRIPS)
def test_affinity_from_code_of_encode_affinity_equals_make_affinity(run_slot, keywords):
    code = encode_affinity(run_slot=run_slot, machine=BIG, **keywords)
    assert affinity_from_code(code, machine=BIG) == make_affinity(run_slot, machine=BIG, **keywords)
    assert remove_run_slot(code)[0] == run_slot


def test_encode_affinity_writes_rlpyts_codes():
    assert encode_affinity(n_cpu_core=8, n_gpu=1, hyperthread_offset=8, run_slot=0) == "0slt_8cpu_1gpu"
    assert encode_affinity(n_cpu_core=8, n_gpu=1, run_slot=0) == "0slt_8cpu_1gpu_0hto"
    assert encode_affinity(n_cpu_core=4, n_gpu=0, cpu_per_run=2, hyperthread_offset=4) == "4cpu_0gpu_2cpr"
    code = encode_affinity(n_cpu_core=8, n_gpu=2, async_sample=True, sample_gpu_per_run=1, hyperthread_offset=8)
    assert code == "8cpu_2gpu_1ass_1sgr"  # async reserves one core per optimizer without saying so
    assert (
        encode_affinity(n_cpu_core=2, n_gpu=0, set_affinity=False, alternating=True) == "2cpu_0gpu_1cpr_0hto_1alt_0saf"
    )


def test_rlpyt_code_without_hto_pairs_siblings_at_n_cpu_core():
    affinity = affinity_from_code("0slt_8cpu_1gpu", machine=BIG)
    assert affinity.workers_cpus[0] == (0, 8) and affinity.master_torch_threads == 8


def test_decode_and_run_slot_helpers():
    assert decode_affinity("8cpu_1gpu_2cxg") == {"cpu": 8, "gpu": 1, "cxg": 2}
    assert prepend_run_slot(3, "8cpu_1gpu") == "3slt_8cpu_1gpu"
    assert remove_run_slot("3slt_8cpu_1gpu") == (3, "8cpu_1gpu")
    assert get_n_run_slots("8cpu_0gpu_2cpr") == 4 and get_n_run_slots("0slt_8cpu_2gpu_2cxg") == 4
    assert quick_affinity_code(2, machine=TWO_CORES) == "2cpu_0gpu_1cpr_0hto"
    assert quick_affinity_code(machine=Machine(range(8), 2)) == "8cpu_2gpu_0hto"


# ----------------------------------------------------------------------------------- sampler helper


def test_affinity_for_sampler_completes_what_users_pass():
    assert affinity_for_sampler(None, machine=TWO_CORES) == default_affinity(machine=TWO_CORES)
    rlpyt_style = affinity_for_sampler(dict(cuda_idx=None, workers_cpus=[0, 1]))  # rlpyt's example_3
    assert rlpyt_style.workers_cpus == ((0,), (1,)) and rlpyt_style.set_affinity is True
    assert rlpyt_style.worker_torch_threads is None and rlpyt_style.alternating is False  # each worker: its CPUs
    gpu_only = affinity_for_sampler(dict(cuda_idx=0), machine=TWO_CORES)
    assert gpu_only.workers_cpus == ((0,), (1,)) and gpu_only.set_affinity is False and gpu_only.cuda_idx == 0
    assert affinity_for_sampler("0slt_2cpu_0gpu_2cpr_0hto", machine=TWO_CORES).workers_cpus == ((0,), (1,))
    assert affinity_for_sampler(dict(workers_cpus=[(0, 1)], worker_torch_threads=1)).worker_torch_threads == 1


# ------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "keywords, message",
    [
        (dict(n_cpu_core=3, n_gpu=0), r"n_cpu_core=3.*may use 2: \[0, 1\].*n_cpu_core <= 2"),
        (dict(n_cpu_core=2, n_gpu=0, hyperthread_offset=2), r"4 CPUs.*Pass hyperthread_offset=0"),
        (dict(n_gpu=1), r"n_gpu=1, but torch sees 0 CUDA.*Pass n_gpu=0"),
        (dict(n_cpu_core=2, n_gpu=0, cpu_per_run=3), r"cpu_per_run=3 exceeds n_cpu_core=2"),
        (dict(n_cpu_core=2, n_gpu=0, cpu_per_run=2, cpu_per_worker=3), r"No sampler worker fits.*cpu_per_worker"),
        (dict(n_cpu_core=2, n_gpu=0, hyperthread_offset=1), r"hyperthread_offset=1 is below n_cpu_core=2"),
        (dict(n_cpu_core=2, n_gpu=0, sample_gpu_per_run=1), r"need async_sample=True"),
        (dict(n_cpu_core=2, n_gpu=0, n_socket=3), r"n_socket=3 must divide n_cpu_core=2"),
        (dict(n_cpu_core=0), r"n_cpu_core must be an integer >= 1, got 0"),
        (dict(n_cpu_core=2.5), r"n_cpu_core must be an integer"),
        (dict(n_cpu_core=1, n_gpu=0, async_sample=True), r"reserve 1 .* leaving none to sample"),
        (dict(n_cpu_core=2, n_gpu=0, run_slot_cpus=[7]), r"run_slot_cpus must list CPUs .*\[0, 1\]"),
    ],
)
def test_impossible_requests_name_the_cause_and_the_fix(keywords, message):
    with pytest.raises(ValueError, match=message):
        make_affinity(machine=TWO_CORES, **keywords)


def test_run_slot_beyond_the_layout_says_how_many_exist():
    with pytest.raises(ValueError, match=r"run_slot=2 does not exist.*2 run slot\(s\).*run_slot < 2"):
        make_affinity(2, n_cpu_core=2, n_gpu=0, machine=TWO_CORES)
    with pytest.raises(ValueError, match=r"run_slot=1 does not exist"):
        encode_affinity(n_cpu_core=8, n_gpu=1, run_slot=1)


@pytest.mark.parametrize(
    "code, message",
    [
        ("0slt_8cpu_1gpu_2xyz", r"Unrecognized part '2xyz'"),
        ("0slt_8cpu", r"needs its 'cpu' and 'gpu' parts"),
        ("0slt_eightcpu_1gpu", r"Unrecognized part 'eightcpu'"),
    ],
)
def test_bad_codes_are_refused_with_the_part_at_fault(code, message):
    with pytest.raises(ValueError, match=message):
        affinity_from_code(code, machine=BIG)


def test_remove_run_slot_needs_a_run_slot():
    with pytest.raises(ValueError, match=r"does not start with a run slot.*prepend_run_slot"):
        remove_run_slot("8cpu_1gpu")


@pytest.mark.parametrize(
    "affinity, message",
    [
        ([dict(workers_cpus=[0])], r"takes one affinity dict"),
        (dict(optimizer=[], sampler={}), r"affinity\['sampler'\]"),
        (dict(workers_cpus=[]), r"needs a CPU for each worker"),
        (dict(workers_cpus=[[0], []]), r"needs a CPU for each worker"),
        (dict(workers_cpus=[0], worker_torch_threads=0), r"worker_torch_threads'\] must be an integer >= 1"),
    ],
)
def test_affinity_for_sampler_refuses_forms_a_sampler_cannot_use(affinity, message):
    with pytest.raises(ValueError, match=message):
        affinity_for_sampler(affinity)


def test_alternating_sampler_refuses_a_plain_affinity():
    with pytest.raises(ValueError, match=r"alternating=True"):
        affinity_for_sampler(dict(workers_cpus=[0, 1]), alternating=True)
