"""Conversion between Gymnasium spaces and rlrun spaces, and GymSpaceWrapper's value translation."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces as gs

from rlrun.spaces import Composite, FloatBox, GymSpaceWrapper, IntBox, from_gym_space, to_gym_space
from rlrun.utils.collections import is_namedarraytuple


def test_float_box_becomes_float32_floatbox_unless_told_otherwise():
    gym_space = gs.Box(-2.0, 3.0, shape=(2, 3), dtype=np.float64)

    space = from_gym_space(gym_space)
    kept = from_gym_space(gym_space, force_float32=False)

    assert isinstance(space, FloatBox) and space.shape == (2, 3) and space.dtype == np.float32
    assert (space.low == -2.0).all() and (space.high == 3.0).all() and space.low.shape == (2, 3)
    assert kept.dtype == np.float64 and to_gym_space(kept) == gym_space


def test_integer_box_high_becomes_exclusive():
    gym_space = gs.Box(0, 255, shape=(4, 4), dtype=np.uint8)

    space = from_gym_space(gym_space)

    assert isinstance(space, IntBox) and space.dtype == np.uint8
    assert (space.low, space.high) == (0, 256)
    assert space.contains(np.full((4, 4), 255, dtype=np.uint8))
    assert to_gym_space(space) == gym_space


def test_discrete_with_start():
    gym_space = gs.Discrete(3, start=-1)

    space = from_gym_space(gym_space)

    assert isinstance(space, IntBox) and space.shape == ()
    assert (space.low, space.high, space.n) == (-1, 2, 3)
    assert {int(space.sample()) for _ in range(100)} == {-1, 0, 1}
    assert to_gym_space(space) == gym_space


def test_multidiscrete_and_multibinary():
    multi = gs.MultiDiscrete([2, 5])
    binary = gs.MultiBinary(4)

    a, b = from_gym_space(multi), from_gym_space(binary)

    assert a.shape == (2,) and a.high.tolist() == [2, 5] and np.all(a.low == 0)
    assert b.shape == (4,) and (b.low, b.high) == (0, 2) and b.dtype == np.int8
    assert to_gym_space(a) == multi and to_gym_space(b) == binary


def test_dict_becomes_composite_of_namedarraytuple_and_back():
    gym_space = gs.Dict({"position": gs.Box(-1, 1, (2,)), "goal": gs.Discrete(4)})

    space = from_gym_space(gym_space)

    assert isinstance(space, Composite) and set(space.names) == {"position", "goal"}
    assert is_namedarraytuple(space.sample()) and is_namedarraytuple(space.null_value())
    assert to_gym_space(space) == gym_space


def test_tuple_becomes_composite_with_positional_fields_and_back():
    gym_space = gs.Tuple((gs.Box(-1, 1, (2,)), gs.Discrete(4)))

    space = from_gym_space(gym_space)

    assert space.names == ("x0", "x1")
    assert to_gym_space(space) == gym_space


def test_wrapper_convert_and_revert_round_trip_for_dict_tuple_and_discrete():
    gym_space = gs.Dict(
        {"image": gs.Box(0, 255, (2, 2), np.uint8), "pair": gs.Tuple((gs.Discrete(3), gs.Box(-1, 1, (1,))))}
    )
    wrapper = GymSpaceWrapper(gym_space)
    gym_space.seed(0)
    value = gym_space.sample()

    converted = wrapper.convert(value)
    reverted = wrapper.revert(converted)

    assert wrapper.contains(converted)
    assert converted.image.dtype == np.uint8 and converted.pair.x1.dtype == np.float32
    assert np.array_equal(reverted["image"], value["image"])
    assert reverted["pair"][0] == value["pair"][0] and type(reverted["pair"][0]) is type(value["pair"][0]) is np.int64
    assert gym_space.contains(reverted)


def test_wrapper_reads_attributes_of_the_rlrun_space():
    wrapper = GymSpaceWrapper(gs.Box(-2, 2, (1,)), name="act")

    assert wrapper.high == 2.0 and wrapper.shape == (1,) and wrapper.dtype == np.float32
    assert GymSpaceWrapper(gs.Discrete(6)).n == 6
    assert wrapper.gym_space is not None and to_gym_space(wrapper) is wrapper.gym_space


def test_convert_names_a_missing_dict_key():
    wrapper = GymSpaceWrapper(gs.Dict({"a": gs.Discrete(2), "b": gs.Discrete(2)}))

    with pytest.raises(KeyError, match=r"lacks key\(s\) \['b'\] declared by its Dict space \(present: \['a'\]\)"):
        wrapper.convert({"a": 1})


def test_dict_keys_become_valid_field_names():
    space = from_gym_space(gs.Dict({"agent-pos": gs.Discrete(2), "3d": gs.Discrete(2), "items": gs.Discrete(2)}))

    assert set(space.names) == {"agent_pos", "f3d", "items_"}
    with pytest.raises(ValueError, match="collide"):
        from_gym_space(gs.Dict({"a-b": gs.Discrete(2), "a_b": gs.Discrete(2)}))


def test_unsupported_space_names_the_kinds_handled():
    with pytest.raises(TypeError, match="Cannot convert a Text space"):
        from_gym_space(gym.spaces.Text(5))


def test_discrete_revert_passes_the_space_scalar_type_through_and_converts_other_integers():
    wrapper = GymSpaceWrapper(gs.Discrete(4))
    action = np.int64(2)
    assert wrapper.revert(action) is action  # a sampler's actions: no conversion per env step
    for value in (2, np.int32(3), np.array(1), torch_long_scalar()):
        reverted = wrapper.revert(value)
        assert type(reverted) is np.int64 and reverted == int(value)

    class Discrete:  # an old gym Discrete without a dtype: Python ints
        def __init__(self, n):
            self.n = n

    old = GymSpaceWrapper(Discrete(3))
    assert type(old.revert(np.int64(2))) is int and old.revert(np.int64(2)) == 2


def torch_long_scalar():
    import torch

    return torch.tensor(3)
