"""namedarraytuple, namedtuple, namedarraytuple_like and AttrDict (rlrun.utils.collections)."""

from __future__ import annotations

import multiprocessing as mp
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

import rlrun.utils.collections as collections_module
from rlrun.utils.collections import (
    AttrDict,
    is_namedarraytuple,
    is_namedarraytuple_class,
    is_namedtuple,
    namedarraytuple,
    namedarraytuple_like,
    namedtuple,
)

sys.path.insert(0, str(Path(__file__).parent))  # so spawned children can import mp_child_targets
import mp_child_targets  # noqa: E402

Point = namedarraytuple("Point", ["x", "y"])
Step = namedarraytuple("Step", ["observation", "reward", "info"])
Info = namedarraytuple("Info", ["count", "flag"])


def make_step(T: int = 4, B: int = 3) -> tuple:
    return Step(
        observation=np.zeros((T, B, 2), dtype=np.float32),
        reward=np.zeros((T, B)),
        info=Info(count=np.zeros((T, B), dtype=np.int64), flag=None),
    )


def test_getitem_indexes_every_field_and_keeps_none():
    buf = make_step()
    buf.observation[:] = np.arange(4 * 3 * 2).reshape(4, 3, 2)
    buf.info.count[:] = np.arange(12).reshape(4, 3)

    item = buf[2, 1]

    assert type(item) is Step and type(item.info) is Info
    np.testing.assert_array_equal(item.observation, [14, 15])
    assert item.info.count == 7
    assert item.info.flag is None
    sliced = buf[1:3]
    assert sliced.observation.shape == (2, 3, 2) and sliced.info.count.shape == (2, 3)
    assert np.shares_memory(sliced.observation, buf.observation)


def test_setitem_with_same_structure_writes_nested_fields():
    buf = make_step()
    step = Step(observation=np.array([1.0, 2.0]), reward=3.0, info=Info(count=4, flag=None))

    buf[1, 2] = step

    np.testing.assert_array_equal(buf.observation[1, 2], [1.0, 2.0])
    assert buf.reward[1, 2] == 3.0 and buf.info.count[1, 2] == 4
    assert buf.observation.sum() == 3.0 and buf.reward.sum() == 3.0 and buf.info.count.sum() == 4


def test_setitem_accepts_plain_namedtuple_with_same_fields():
    buf = Point(np.zeros(3), np.zeros(3))
    PlainPoint = namedtuple("Point", ["x", "y"])

    buf[0] = PlainPoint(5.0, 6.0)

    assert buf.x[0] == 5.0 and buf.y[0] == 6.0


def test_scalar_assignment_broadcasts_to_every_non_none_field():
    buf = make_step()

    buf[3] = 7

    assert np.all(buf.observation[3] == 7) and np.all(buf.reward[3] == 7) and np.all(buf.info.count[3] == 7)
    assert np.all(buf.observation[:3] == 0)
    assert buf.info.flag is None


def test_none_value_leaves_the_field_untouched():
    buf = Point(np.ones(3), np.ones(3))

    buf[1] = Point(x=9.0, y=None)

    np.testing.assert_array_equal(buf.x, [1.0, 9.0, 1.0])
    np.testing.assert_array_equal(buf.y, [1.0, 1.0, 1.0])


def test_writing_a_structure_with_other_fields_raises_naming_both():
    buf = Point(np.zeros(3), np.zeros(3))
    Other = namedarraytuple("Other", ["x", "z"])

    with pytest.raises(ValueError, match=r"Cannot write Other\('x', 'z'\) into Point\('x', 'y'\)"):
        buf[0] = Other(1.0, 2.0)


def test_writing_into_a_none_field_raises():
    buf = Point(np.zeros(3), None)

    with pytest.raises(ValueError, match="Field 'y' of Point is None"):
        buf[0] = Point(1.0, 2.0)


def test_failed_field_write_names_the_field():
    buf = make_step()

    with pytest.raises(ValueError, match="field 'observation' of Step"):
        buf[0, 0] = Step(observation=np.zeros(5), reward=0.0, info=Info(0, None))
    with pytest.raises(IndexError, match="field 'x' of Point"):
        Point(np.zeros(3), np.zeros(3))[7] = Point(1.0, 1.0)


def test_out_of_range_read_names_the_field():
    buf = Point(np.zeros(5), np.zeros(3))

    with pytest.raises(IndexError, match="field 'y' of Point"):
        buf[4]


def test_contains_get_and_items_follow_fields():
    p = Point(np.array([1, 2]), np.array([3, 4]))

    assert "x" in p and "z" not in p
    np.testing.assert_array_equal(p.get(1), [3, 4])
    assert [k for k, _ in p.items()] == ["x", "y"]
    x, y = p  # unpacks like a tuple
    assert x is p.x and y is p.y


def test_instances_and_classes_pickle():
    buf = make_step(2, 2)
    buf[1, 1] = 3

    loaded = pickle.loads(pickle.dumps(buf))

    assert type(loaded) is Step and type(loaded.info) is Info
    np.testing.assert_array_equal(loaded.observation, buf.observation)
    assert loaded.info.flag is None
    assert pickle.loads(pickle.dumps(Step)) is Step
    assert pickle.loads(pickle.dumps(namedtuple("Plain", "a b"))) is namedtuple("Plain", "a b")


def test_instance_and_class_survive_a_spawned_child_and_back():
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    buf = make_step(2, 2)
    buf[1] = 5
    child = ctx.Process(target=mp_child_targets.echo, args=((buf, Step), queue))
    child.start()
    try:
        pid, (returned, cls) = queue.get(timeout=60)
    finally:
        child.join(timeout=60)

    assert pid == child.pid and child.exitcode == 0
    assert cls is Step and type(returned) is Step and type(returned.info) is Info
    np.testing.assert_array_equal(returned.reward, buf.reward)
    assert returned.info.flag is None


def test_classes_are_cached_and_never_added_to_module_globals():
    before = set(vars(collections_module))

    cls = namedarraytuple("NeverGlobal", ["a", "b"])

    assert namedarraytuple("NeverGlobal", "a, b") is cls
    assert namedarraytuple("NeverGlobal", ["a", "c"]) is not cls
    assert set(vars(collections_module)) == before
    assert "NeverGlobal" not in globals()


@pytest.mark.parametrize(
    "fields, match",
    [
        (["a", "a"], "duplicate field names"),
        (["_a"], "not usable"),
        (["class"], "not usable"),
        (["get"], "would hide the namedarraytuple methods"),
        (["items", "x"], "would hide the namedarraytuple methods"),
    ],
)
def test_unusable_field_names_are_refused(fields, match):
    with pytest.raises(ValueError, match=match):
        namedarraytuple("Bad", fields)


def test_return_namedtuple_cls_and_classname_suffix():
    nat, nt = namedarraytuple("Pair", ["a", "b"], return_namedtuple_cls=True)
    assert is_namedarraytuple_class(nat) and not is_namedarraytuple_class(nt)
    assert nt._fields == nat._fields == ("a", "b")

    nat, nt = namedarraytuple("Pair", ["a", "b"], return_namedtuple_cls=True, classname_suffix=True)
    assert (nat.__name__, nt.__name__) == ("Pair_nat", "Pair_nt")


def test_namedarraytuple_like_gives_the_class_for_instances_and_classes():
    Plain = namedtuple("Sample", ["obs", "act"])
    from_class = namedarraytuple_like(Plain)

    assert is_namedarraytuple_class(from_class) and from_class._fields == ("obs", "act")
    assert namedarraytuple_like(Plain(1, 2)) is from_class
    assert namedarraytuple_like(from_class) is from_class
    assert namedarraytuple_like(Point(1, 2)) is Point
    with pytest.raises(TypeError, match="needs a namedtuple"):
        namedarraytuple_like((1, 2))


def test_is_namedtuple_and_is_namedarraytuple():
    assert is_namedtuple(Point(1, 2)) and is_namedarraytuple(Point(1, 2))
    assert is_namedtuple(namedtuple("Q", "a")(1)) and not is_namedarraytuple(namedtuple("Q", "a")(1))
    assert not is_namedtuple((1, 2)) and not is_namedarraytuple((1, 2))


def test_attrdict_keys_are_attributes_and_it_pickles():
    d = AttrDict(a=1)
    d.b = 2

    assert d["b"] == 2 and d.a == 1 and dict(d) == {"a": 1, "b": 2}
    loaded = pickle.loads(pickle.dumps(d))
    assert type(loaded) is AttrDict and loaded == d and loaded.b == 2
    del d.a
    assert "a" not in d
    with pytest.raises(AttributeError, match="no key 'a'"):
        _ = d.a


def test_attrdict_copy_copies_nested_attrdicts_and_keeps_the_subclass():
    class Counter(AttrDict):
        def __init__(self):
            super().__init__()
            self.n = 0

    c = Counter()
    c.n = 5
    c.inner = AttrDict(v=1)
    array = np.zeros(2)
    c.array = array

    copied = c.copy()
    copied.inner.v = 2

    assert type(copied) is Counter and copied.n == 5
    assert c.inner.v == 1
    assert copied.array is array  # other values are shared, not copied
