"""AreaResizer against area averaging written out the obvious (slow) way."""

from __future__ import annotations

import numpy as np
import pytest

from rlrun.envs.atari.screen import AreaResizer


@pytest.mark.parametrize(
    "in_shape, out_shape",
    [((210, 160), (84, 84)), ((250, 160), (84, 84)), ((210, 160), (105, 80)), ((7, 5), (3, 2)), ((9, 9), (9, 9))],
)
def test_matches_exact_area_averaging(in_shape, out_shape, area_average):
    rng = np.random.default_rng(0)
    resize = AreaResizer(in_shape, out_shape)
    out = np.empty(out_shape[0] * out_shape[1], np.uint8)  # flat, as FramePooler passes it
    for _ in range(3):
        image = rng.integers(0, 256, in_shape, dtype=np.uint8)
        resize(image, out)
        exact = area_average(image, out_shape)
        got = out.reshape(out_shape).astype(np.float64)
        # float32 sums can land a value that is exactly .5 in float64 on either side of it
        assert np.abs(got - exact).max() <= 0.5 + 1e-3
        assert np.mean(got == np.floor(exact + 0.5)) > 0.99


def test_halving_averages_two_by_two_blocks_and_constants_stay():
    image = np.arange(8 * 6, dtype=np.uint8).reshape(8, 6) * 5
    out = np.empty((4, 3), np.uint8)
    AreaResizer((8, 6), (4, 3))(image, out)
    blocks = image.reshape(4, 2, 3, 2).astype(np.float64).mean(axis=(1, 3))
    np.testing.assert_array_equal(out, np.floor(blocks + 0.5))
    for value in (0, 1, 254, 255):
        AreaResizer((210, 160), (84, 84))(np.full((210, 160), value, np.uint8), out_84 := np.empty((84, 84), np.uint8))
        assert (out_84 == value).all()


def test_refuses_to_enlarge():
    with pytest.raises(ValueError, match="shrink"):
        AreaResizer((210, 160), (220, 84))


def test_copies_pickles_and_any_out_layout_give_the_same_frame():
    import copy
    import pickle

    rng = np.random.default_rng(1)
    images = [rng.integers(0, 256, (210, 160), dtype=np.uint8) for _ in range(2)]
    resize = AreaResizer((210, 160), (84, 84))
    expected = np.empty((84, 84), np.uint8)
    resize(images[1], expected)
    for clone in (copy.deepcopy(resize), pickle.loads(pickle.dumps(resize))):
        out = np.empty((84, 84), np.uint8)
        clone(images[0], out)  # a severed buffer would leave the previous frame's result
        clone(images[1], out)
        np.testing.assert_array_equal(out, expected)
    strided = np.zeros((84, 2, 84), np.uint8)[:, :, :42]  # 7,056 elements that no reshape can view
    resize(images[1], strided)
    np.testing.assert_array_equal(strided.reshape(84, 84), expected)
    transposed = np.zeros((84, 84), np.uint8).T
    resize(images[1], transposed)
    np.testing.assert_array_equal(transposed, expected)
    with pytest.raises(TypeError, match="uint8"):
        resize(images[1], np.empty((84, 84), np.float32))
