"""The short top-level names resolve to the same objects as rlpyt's module paths."""

import importlib

import rlrun


def test_every_top_level_name_is_the_object_at_its_rlpyt_path():
    for name, module in rlrun._EXPORTS.items():
        assert getattr(rlrun, name) is getattr(importlib.import_module(module), name), name


def test_unknown_top_level_name_raises_attribute_error():
    try:
        rlrun.NoSuchThing  # noqa: B018
    except AttributeError as e:
        assert "NoSuchThing" in str(e)
    else:
        raise AssertionError("expected AttributeError")
