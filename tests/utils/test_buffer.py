"""Nested buffers: building, torch/numpy views, moving and mapping (rlrun.utils.buffer)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from rlrun.utils.buffer import (
    buffer_from_example,
    buffer_func,
    buffer_method,
    buffer_to,
    get_leading_dims,
    numpify_buffer,
    torchify_buffer,
)
from rlrun.utils.collections import is_namedarraytuple, namedarraytuple, namedtuple
from rlrun.utils.shared_memory import is_shared

Obs = namedtuple("Obs", ["image", "position"])
Example = namedtuple("Example", ["observation", "reward", "done", "extra"])
Pair = namedarraytuple("Pair", ["a", "b"])


def make_example():
    return Example(
        observation=Obs(image=np.zeros((3, 4), dtype=np.uint8), position=np.zeros(2, dtype=np.float32)),
        reward=np.float32(0),
        done=False,
        extra=None,
    )


def test_buffer_from_example_has_leading_dims_dtypes_and_nested_namedarraytuples():
    buf = buffer_from_example(make_example(), (5, 2))

    assert is_namedarraytuple(buf) and is_namedarraytuple(buf.observation)
    assert buf.observation.image.shape == (5, 2, 3, 4) and buf.observation.image.dtype == np.uint8
    assert buf.observation.position.shape == (5, 2, 2) and buf.observation.position.dtype == np.float32
    assert buf.reward.shape == (5, 2) and buf.reward.dtype == np.float32
    assert buf.done.shape == (5, 2) and buf.done.dtype == np.bool_
    assert buf.extra is None
    assert not buf.observation.image.any()
    buf[4, 1] = make_example()._replace(reward=np.float32(2.5), done=True)
    assert buf.reward[4, 1] == 2.5 and buf.done[4, 1]


def test_buffer_from_example_takes_an_int_leading_dim_and_python_scalars():
    buf = buffer_from_example(Pair(a=1.0, b=3), 7)

    assert buf.a.shape == (7,) and buf.a.dtype == np.float64
    assert buf.b.shape == (7,) and buf.b.dtype == np.int64
    tensor_buf = buffer_from_example(torch.zeros(2, dtype=torch.int32), [3])
    assert tensor_buf.shape == (3, 2) and tensor_buf.dtype == np.int32


def test_buffer_from_example_in_shared_memory():
    buf = buffer_from_example(make_example(), (4, 3), share_memory=True)

    leaves = [buf.observation.image, buf.observation.position, buf.reward, buf.done]
    assert all(is_shared(leaf) for leaf in leaves)
    assert not is_shared(buffer_from_example(make_example(), (4, 3)).reward)


def test_buffer_from_example_refuses_non_numeric_leaves():
    with pytest.raises(TypeError, match="leaves must be numbers or arrays"):
        buffer_from_example(Pair(a="text", b=1), 2)


def test_torchify_and_numpify_share_memory_both_ways():
    buf = buffer_from_example(make_example(), (2, 2))
    tensors = torchify_buffer(buf)

    tensors.observation.position[1, 0, 1] = 3.0
    buf.reward[0, 1] = 4.0

    assert buf.observation.position[1, 0, 1] == 3.0
    assert tensors.reward[0, 1].item() == 4.0
    assert tensors.extra is None and type(tensors) is type(buf)
    arrays = numpify_buffer(tensors)
    arrays.done[1, 1] = True
    assert tensors.done[1, 1].item() is True and buf.done[1, 1]


def test_torchify_keeps_plain_tuples_and_passes_tensors_through():
    t = torch.ones(2)

    out = torchify_buffer((np.zeros(3), t, None))

    assert type(out) is tuple and isinstance(out[0], torch.Tensor)
    assert out[1] is t and out[2] is None
    assert torchify_buffer(None) is None


def test_buffer_to_moves_tensors_and_refuses_numpy():
    buf = Pair(a=torch.zeros(2), b=None)

    moved = buffer_to(buf, "cpu")

    assert type(moved) is Pair and moved.a.device.type == "cpu" and moved.b is None
    with pytest.raises(TypeError, match="call torchify_buffer"):
        buffer_to(Pair(a=np.zeros(2), b=None), "cpu")


def test_buffer_to_gives_back_the_same_objects_when_nothing_moves():
    inner = Pair(a=torch.zeros(2), b=None)
    buf = (torch.ones(1), inner)

    assert buffer_to(buf, "cpu") is buf
    assert buffer_to(buf, torch.device("cpu")) is buf
    assert buffer_to(inner, "cpu") is inner
    assert buffer_to(torch.zeros(1, dtype=torch.float64), "cpu").dtype == torch.float64


def test_buffer_method_and_buffer_func_map_every_leaf():
    buf = Pair(a=torch.arange(6).view(2, 3), b=(torch.ones(2, 3), None))

    flat = buffer_method(buf, "reshape", -1)
    doubled = buffer_func(buf, torch.mul, 2)

    assert flat.a.shape == (6,) and flat.b[0].shape == (6,) and flat.b[1] is None
    assert type(flat.b) is tuple
    assert doubled.a[1, 2].item() == 10 and doubled.b[0].sum().item() == 12


def test_get_leading_dims_agrees_across_leaves_and_skips_none():
    buf = buffer_from_example(make_example(), (5, 2))

    assert get_leading_dims(buf, 2) == (5, 2)
    assert get_leading_dims(buf) == (5,)
    assert get_leading_dims(torchify_buffer(buf), 2) == (5, 2)
    assert get_leading_dims(None) is None


def test_get_leading_dims_mismatch_names_the_leaves():
    buf = Pair(a=np.zeros((5, 2)), b=Pair(a=np.zeros((5, 3)), b=None))

    assert get_leading_dims(buf, 1) == (5,)
    with pytest.raises(ValueError, match=r"\(5, 2\) at Pair.a, \(5, 3\) at Pair.b.a"):
        get_leading_dims(buf, 2)
    with pytest.raises(ValueError, match="no array leaves"):
        get_leading_dims(Pair(None, None))


def test_buffer_functions_take_rlpyts_buffer__keyword():
    import numpy as np

    from rlrun.utils.buffer import (
        buffer_func,
        buffer_method,
        buffer_to,
        get_leading_dims,
        numpify_buffer,
        torchify_buffer,
    )

    arr = np.zeros((2, 3), dtype=np.float32)
    t = torchify_buffer(buffer_=arr)
    assert numpify_buffer(buffer_=t).shape == (2, 3)
    assert buffer_to(buffer_=t, device="cpu").shape == (2, 3)
    assert buffer_method(buffer_=t, method_name="sum").item() == 0
    assert buffer_func(buffer_=arr, func=np.shape) == (2, 3)
    assert get_leading_dims(buffer_=arr, n_dim=2) == (2, 3)


@pytest.mark.parametrize("use_NatSchema", [None, False, True])
def test_rlpyt_use_natschema_is_accepted_and_buffers_pickle_either_way(use_NatSchema):
    # rlpyt's fourth argument chose classes that pickle into spawned processes; rlrun's always do.
    example = Obs(image=np.zeros((2, 2), np.uint8), position=np.float32(1.0))
    buffer = buffer_from_example(example, (3,), False, use_NatSchema)
    buffer.position[:] = [1.0, 2.0, 3.0]
    restored = pickle.loads(pickle.dumps(buffer))
    assert type(restored) is type(buffer) and is_namedarraytuple(restored)
    assert restored.image.shape == (3, 2, 2) and restored.position.tolist() == [1.0, 2.0, 3.0]
