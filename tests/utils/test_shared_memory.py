"""Shared-memory arrays under every start method (rlrun.utils.shared_memory)."""

from __future__ import annotations

import copy
import gc
import multiprocessing as mp
import os
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from rlrun.utils.buffer import buffer_from_example, torchify_buffer
from rlrun.utils.collections import namedtuple
from rlrun.utils.shared_memory import SharedArray, is_shared, np_mp_array

sys.path.insert(0, str(Path(__file__).parent))  # so spawned children can import mp_child_targets
import mp_child_targets  # noqa: E402

Example = namedtuple("Example", ["observation", "reward", "info"])
Info = namedtuple("Info", ["count"])
SHM = Path("/dev/shm")


def shm_entries() -> set[str]:
    return set(os.listdir(SHM)) if SHM.is_dir() else set()


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_children_write_column_slices_seen_by_parent_and_torch_views(method):
    before = shm_entries()
    T, B = 3, 2
    example = Example(observation=np.zeros(4, dtype=np.float32), reward=np.float32(0), info=Info(count=np.int64(0)))
    buf = buffer_from_example(example, (T, B), share_memory=True)
    views = torchify_buffer(buf)
    ctx = mp.get_context(method)

    children = [ctx.Process(target=mp_child_targets.write_columns, args=(buf[:, b : b + 1], b + 1.0)) for b in range(B)]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=60)

    assert [c.exitcode for c in children] == [0] * B
    for b in range(B):
        assert np.all(buf.observation[:, b] == b + 1) and np.all(buf.reward[:, b] == b + 1)
        assert np.all(buf.info.count[:, b] == b + 1)
        assert torch.all(views.observation[:, b] == b + 1) and torch.all(views.info.count[:, b] == b + 1)
    pids = [str(os.getpid())] + [str(c.pid) for c in children]
    del buf, views
    gc.collect()
    left = [name for name in shm_entries() - before if any(pid in name for pid in pids)]
    assert left == []


def test_np_mp_array_is_zeroed_with_shape_and_dtype():
    arr = np_mp_array((3, 2), np.int16)
    scalar_shape = np_mp_array(5, "float64")

    assert isinstance(arr, SharedArray) and is_shared(arr)
    assert arr.shape == (3, 2) and arr.dtype == np.int16 and not arr.any()
    assert scalar_shape.shape == (5,) and scalar_shape.dtype == np.float64
    assert np_mp_array((0, 4), np.float32).shape == (0, 4)


def test_slices_stay_shared_but_copies_and_results_do_not():
    arr = np_mp_array((4, 4), np.float32)

    assert is_shared(arr[:, 1:2]) and is_shared(arr[2])
    assert not is_shared(arr.copy()) and not is_shared(copy.deepcopy(arr))
    assert type(arr + 1) is np.ndarray


def test_pickling_outside_process_start_copies_the_data():
    arr = np_mp_array((2, 3), np.float32)
    arr[1, 2] = 7.0

    loaded = pickle.loads(pickle.dumps(arr[:, 1:]))
    loaded[0, 0] = 1.0

    assert type(loaded) is np.ndarray and loaded[1, 1] == 7.0
    assert arr[0, 1] == 0.0
