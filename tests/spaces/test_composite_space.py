"""Composite: a named structure of spaces whose values are namedarraytuples."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from rlrun.spaces import Composite, FloatBox, IntBox
from rlrun.utils.collections import is_namedarraytuple, namedtuple

Obs = namedtuple("Obs", ["position", "mode"])


def make_space() -> Composite:
    return Composite([FloatBox(-1, 1, shape=2), IntBox(0, 3)], Obs)


def test_composite_values_are_namedarraytuples_of_its_fields():
    space = make_space()
    sample = space.sample()

    assert is_namedarraytuple(sample) and sample._fields == ("position", "mode")
    assert space.names == ("position", "mode")
    assert space.shape == ((2,), ()) and space.shape.position == (2,)
    assert space.dtype.mode == np.int32
    assert space.contains(sample) and space.contains(Obs(np.zeros(2), 2))
    null = space.null_value()
    assert null.position.tolist() == [0.0, 0.0] and null.mode == 0


def test_composite_mismatch_names_the_field_or_missing_fields():
    space = make_space()
    Other = namedtuple("Other", ["position"])

    assert space.mismatch(Obs(np.zeros(2), 3)).startswith("field 'mode': value 3 is outside")
    assert "missing ['mode']" in space.mismatch(Other(np.zeros(2)))
    assert "expected a Obs" in space.mismatch(np.zeros(2))


def test_composite_seeding_reproduces_samples():
    a, b = make_space(), make_space()
    a.seed(5)
    b.seed(5)

    for _ in range(3):
        x, y = a.sample(), b.sample()
        assert np.array_equal(x.position, y.position) and x.mode == y.mode


def test_composite_pickles_with_its_namedtuple_class():
    space = make_space()

    loaded = pickle.loads(pickle.dumps(space))

    assert loaded.NamedTupleCls is space.NamedTupleCls and loaded.contains(space.sample())


def test_composite_needs_one_space_per_field():
    with pytest.raises(ValueError, match="1 spaces for the 2 fields"):
        Composite([IntBox(0, 2)], Obs)
