"""rlpyt's affinity-code calls, as its launch scripts make them, work unchanged."""

from __future__ import annotations

from rlrun.utils.launching.affinity import affinity_from_code, encode_affinity, quick_affinity_code
from rlrun.utils.launching.layout import Machine

BIG = Machine(range(48), 8)  # 24 cores with hyperthreads, 8 GPUs: rlpyt's launch scripts' kind of host


def test_encode_affinity_takes_rlpyts_positional_order():
    # rlpyt: n_cpu_core, n_gpu, contexts_per_gpu, gpu_per_run, cpu_per_run, cpu_per_worker, cpu_reserved,
    # hyperthread_offset, n_socket, run_slot, ...
    positional = encode_affinity(24, 8, 2, 1, 1, 1, 0, 24, 2)
    assert positional == encode_affinity(
        n_cpu_core=24, n_gpu=8, contexts_per_gpu=2, hyperthread_offset=24, n_socket=2, cpu_reserved=0
    )
    assert "2cxg" in positional and "2skt" in positional


def test_codes_for_a_bigger_machine_are_made_here_and_laid_out_there():
    slots = {}
    for run_slot in (3, 8):
        code = encode_affinity(
            n_cpu_core=24, n_gpu=8, contexts_per_gpu=2, hyperthread_offset=24, n_socket=2, run_slot=run_slot
        )
        slots[run_slot] = affinity_from_code(code, machine=BIG)
    # As rlpyt: run slots spread over the GPUs first, so slot 8 is GPU 0's second context.
    assert slots[3]["cuda_idx"] == 3 and slots[8]["cuda_idx"] == 0
    assert slots[8]["workers_cpus"] != slots[3]["workers_cpus"]


def test_quick_affinity_code_takes_contexts_per_gpu():
    code = quick_affinity_code(contexts_per_gpu=2, machine=Machine(range(8), 2))
    assert "2gpu" in code and "2cxg" in code
