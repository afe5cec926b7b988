"""IntBox and FloatBox: sampling, null values, membership, seeding and their errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlrun.spaces import FloatBox, IntBox


def test_intbox_high_is_exclusive():
    space = IntBox(low=0, high=3)
    samples = {int(space.sample()) for _ in range(200)}

    assert samples == {0, 1, 2}
    assert space.n == 3 and space.shape == () and space.dtype == np.int32  # rlpyt's default
    assert space.contains(2) and not space.contains(3) and not space.contains(-1)


def test_intbox_null_value_defaults_to_low_and_can_be_set():
    assert IntBox(2, 5, shape=3).null_value().tolist() == [2, 2, 2]
    assert IntBox(0, 5, null_value=4).null_value() == 4
    assert IntBox(0, 5, shape=2, null_value=4).null_value().tolist() == [4, 4]


def test_intbox_uint8_image_with_high_256():
    space = IntBox(low=0, high=256, shape=(2, 3), dtype="uint8")
    sample = space.sample()

    assert sample.dtype == np.uint8 and sample.shape == (2, 3)
    assert space.contains(np.full((2, 3), 255, dtype=np.uint8))
    assert space.n == 256
    assert "high=256" in repr(space)


def test_intbox_with_per_element_bounds_and_bool_dtype():
    space = IntBox(low=np.array([0, 10]), high=np.array([2, 20]))
    for _ in range(50):
        x = space.sample()
        assert 0 <= x[0] < 2 and 10 <= x[1] < 20
    with pytest.raises(AttributeError, match="needs scalar bounds"):
        _ = space.n
    flags = IntBox(0, 2, shape=50, dtype=bool)
    assert flags.sample().any() and not flags.null_value().any()


def test_intbox_mismatch_names_shape_dtype_and_bounds():
    space = IntBox(0, 4, shape=(3,))

    assert "differs from the declared shape (3,)" in space.mismatch(np.zeros(2, dtype=np.int64))
    assert "cannot be stored in the declared integer dtype" in space.mismatch(np.zeros(3))
    assert "outside [0, 4) (high is exclusive)" in space.mismatch(np.array([0, 4, 1]))
    assert space.mismatch(np.array([0, 3, 1], dtype=np.int32)) is None


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: IntBox(0, 3, dtype="float32"), "IntBox needs an integer dtype"),
        (lambda: IntBox(3, 3), "high .3. must exceed low .3.; high is exclusive"),
        (lambda: IntBox(np.zeros(2), np.ones(3)), "low has shape"),
        (lambda: FloatBox(0, 1, dtype="int64"), "FloatBox needs a floating dtype"),
    ],
)
def test_box_construction_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_floatbox_samples_within_bounds_and_normal_where_unbounded():
    space = FloatBox(low=np.array([-1.0, -np.inf]), high=np.array([1.0, np.inf]))
    samples = np.stack([space.sample() for _ in range(500)])

    assert samples.dtype == np.float32 and samples.shape == (500, 2)
    assert samples[:, 0].min() >= -1 and samples[:, 0].max() <= 1
    assert np.isfinite(samples[:, 1]).all() and samples[:, 1].std() > 0.5
    assert space.null_value().tolist() == [0.0, 0.0]
    assert FloatBox(-1, 1, null_value=0.5).null_value() == np.float32(0.5)


def test_floatbox_checks_shape_always_and_bounds_on_request():
    space = FloatBox(-1, 1, shape=2)

    assert space.contains(np.array([5.0, 0.0]))  # nominal bounds are not enforced by default
    assert "outside [-1.0, 1.0]" in space.mismatch(np.array([5.0, 0.0]), check_bounds=True)
    assert not space.contains(np.zeros(3))
    assert space.contains(np.zeros(2, dtype=np.int64))


def test_seeded_boxes_sample_the_same_values():
    a, b = FloatBox(-1, 1, shape=4), FloatBox(-1, 1, shape=4)
    a.seed(7)
    b.seed(7)
    assert np.array_equal(a.sample(), b.sample())
    c, d = IntBox(0, 100, shape=4), IntBox(0, 100, shape=4)
    c.seed(3)
    d.seed(3)
    assert np.array_equal(c.sample(), d.sample())
    d.seed(4)
    assert not np.array_equal(c.sample(), d.sample())


def test_scalar_boxes_sample_zero_dim_arrays_that_torch_takes():
    """rlpyt's samples are arrays even for shape (): user code calls ``torch.from_numpy`` on them."""
    int_sample, float_sample = IntBox(0, 4).sample(), FloatBox(0, 1).sample()
    assert isinstance(int_sample, np.ndarray) and int_sample.shape == () and int_sample.dtype == np.int32
    assert isinstance(float_sample, np.ndarray) and float_sample.shape == () and float_sample.dtype == np.float32
    assert torch.from_numpy(int_sample).dtype == torch.int32
    assert torch.from_numpy(float_sample).dtype == torch.float32


def test_floatbox_bounds_broadcast_to_its_shape():
    """``FloatBox(low, high, shape=2)`` has array bounds, so ``space.high[0]`` works as in rlpyt."""
    space = FloatBox(-1.0, 2.0, shape=2)
    assert space.low.shape == (2,) and space.high.shape == (2,)
    assert space.high[0] == 2.0 and space.low[1] == -1.0 and space.high.dtype == np.float32
    per_element = FloatBox(np.array([-1.0, -2.0]), np.array([1.0, 2.0]))
    assert per_element.shape == (2,) and per_element.high[1] == 2.0


def test_bounds_are_low_and_high_and_a_gym_wrapper_reads_its_boxs():
    import gymnasium

    from rlrun.spaces.composite import Composite
    from rlrun.spaces.gym_wrapper import GymSpaceWrapper

    box = FloatBox(-2.0, 3.0, shape=2)
    assert box.bounds[0] is box.low and box.bounds[1] is box.high and IntBox(0, 5).bounds == (0, 5)
    wrapped = GymSpaceWrapper(gymnasium.spaces.Box(-1.0, 1.0, (3,)))
    assert wrapped.low.tolist() == [-1.0] * 3 and wrapped.high.tolist() == [1.0] * 3
    tuple_space = GymSpaceWrapper(gymnasium.spaces.Tuple([gymnasium.spaces.Discrete(2)]))
    assert isinstance(tuple_space.space, Composite)
    with pytest.raises(AttributeError):
        _ = tuple_space.low
