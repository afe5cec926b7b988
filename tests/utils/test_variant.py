"""Variant levels, their cross product, the variant file and the config merge (rlpyt's launching.variant)."""

import json
import os

import numpy as np
import pytest

from rlrun.utils.collections import AttrDict
from rlrun.utils.launching.variant import (
    VARIANT,
    VariantLevel,
    load_variant,
    make_variants,
    save_variant,
    update_config,
)

pytestmark = pytest.mark.timeout(60)


def example_6_levels():
    """rlpyt's example_6 grid, written as rlpyt wrote it."""
    levels = []
    learning_rate = [7e-4, 1e-3]
    batch_B = [16, 32]
    values = list(zip(learning_rate, batch_B))
    dir_names = ["example6_{}lr_{}B".format(*v) for v in values]
    keys = [("algo", "learning_rate"), ("sampler", "batch_B")]
    levels.append(VariantLevel(keys, values, dir_names))
    games = ["pong", "seaquest"]
    values = list(zip(games))
    dir_names = ["{}".format(*v) for v in values]
    keys = [("env", "game")]
    levels.append(VariantLevel(keys, values, dir_names))
    return levels


# ------------------------------------------------------------------------------------ VariantLevel


def test_variant_level_is_rlpyts_namedtuple():
    level = VariantLevel([("env", "game")], [("pong",), ("breakout",)], ["pong", "breakout"])
    keys, values, dir_names = level
    assert VariantLevel._fields == ("keys", "values", "dir_names")
    assert keys == (("env", "game"),) and level.keys is keys
    assert values == (("pong",), ("breakout",))
    assert dir_names == ("pong", "breakout")


@pytest.mark.parametrize(
    "keys, values, dir_names, error, words",
    [
        # values given as bare strings instead of list(zip(games))
        ([("env", "game")], ["pong", "breakout"], ["a", "b"], TypeError, ["values[0]", "list(zip("]),
        # one value per entry, two keys
        ([("algo", "lr"), ("sampler", "batch_B")], [(1e-3,), (1e-4,)], ["a", "b"], ValueError, ["values[0]", "2 key"]),
        # entries of unequal length
        ([("algo", "lr")], [(1e-3,), (1e-4, 5)], ["a", "b"], ValueError, ["values[1]", "1 key"]),
        ([("algo", "lr")], [(1e-3,), (1e-4,)], ["a"], ValueError, ["2 values entries", "1 dir_names"]),
        ([("algo", "lr")], [(1e-3,), (1e-4,)], ["a", "a"], ValueError, ["dir_names[1]", "repeats"]),
        ([("algo", "lr")], [(1e-3,)], ["/abs"], ValueError, ["dir_names[0]", "relative"]),
        ([("algo", "lr")], [(1e-3,)], [""], TypeError, ["dir_names[0]", "non-empty"]),
        (["learning_rate"], [(1e-3,)], ["a"], TypeError, ["keys[0]", "('learning_rate',)"]),
        ([("algo", 3)], [(1e-3,)], ["a"], TypeError, ["keys[0]", "str"]),
        ([("algo", "lr"), ("algo", "lr")], [(1, 2)], ["a"], ValueError, ["twice"]),
        ([("algo", "lr")], [], [], ValueError, ["values is empty"]),
        ([], [()], ["a"], ValueError, ["keys is empty"]),
    ],
)
def test_variant_level_refuses_malformed_levels_naming_the_cause(keys, values, dir_names, error, words):
    with pytest.raises(error) as info:
        VariantLevel(keys, values, dir_names)
    for word in words:
        assert word in str(info.value)


# ----------------------------------------------------------------------------------- make_variants


def test_make_variants_crosses_levels_and_zips_within_a_level():
    variants, log_dirs = make_variants(*example_6_levels())
    assert log_dirs == [
        "example6_0.0007lr_16B/pong",
        "example6_0.0007lr_16B/seaquest",
        "example6_0.001lr_32B/pong",
        "example6_0.001lr_32B/seaquest",
    ]
    assert variants[0] == {"algo": {"learning_rate": 7e-4}, "sampler": {"batch_B": 16}, "env": {"game": "pong"}}
    assert variants[3] == {"algo": {"learning_rate": 1e-3}, "sampler": {"batch_B": 32}, "env": {"game": "seaquest"}}
    variants[0]["algo"]["learning_rate"] = 5.0  # each variant is its own copy
    assert variants[1]["algo"]["learning_rate"] == 7e-4


def test_make_variants_edge_cases():
    assert make_variants() == ([{}], [""])
    variants, log_dirs = make_variants(([("a",)], [(1,), (2,)], ["one", "two"]))  # a plain tuple is checked too
    assert variants == [{"a": 1}, {"a": 2}] and log_dirs == ["one", "two"]
    with pytest.raises(ValueError, match="values\\[0\\]"):
        make_variants(([("a",), ("b",)], [(1,)], ["one"]))
    with pytest.raises(ValueError, match="not a dict"):  # a later level cannot nest under a set value
        make_variants(VariantLevel([("a",)], [(1,)], ["x"]), VariantLevel([("a", "b")], [(2,)], ["y"]))


# ------------------------------------------------------------------------------- save/load variant


def test_save_and_load_variant_round_trip_in_rlpyts_file(tmp_path):
    variant = {"algo": {"learning_rate": np.float32(0.5), "sizes": (64, 64)}, "env": {"game": "pong"}, "n": np.int64(3)}
    path = save_variant(variant, tmp_path / "a" / "b")
    assert path == str(tmp_path / "a" / "b" / "variant_config.json") and VARIANT == "variant_config.json"
    assert os.listdir(tmp_path / "a" / "b") == [VARIANT]  # no temporary file left behind
    assert load_variant(tmp_path / "a" / "b") == {
        "algo": {"learning_rate": 0.5, "sizes": [64, 64]},  # tuples come back as lists (JSON)
        "env": {"game": "pong"},
        "n": 3,
    }


def test_load_variant_reads_a_folder_rlpyt_wrote(tmp_path):
    with open(tmp_path / "variant_config.json", "w") as f:
        json.dump({"env": {"game": "pong"}}, f)  # rlpyt's own format: json.dump, no indent
    assert load_variant(str(tmp_path)) == {"env": {"game": "pong"}}


def test_variant_file_errors_name_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="variant_config.json"):
        load_variant(tmp_path)
    with pytest.raises(TypeError, match=r"variant\['algo'\]\['cls'\]"):
        save_variant({"algo": {"cls": object}}, tmp_path)
    with pytest.raises(TypeError, match="key 1"):
        save_variant({"algo": {1: "x"}}, tmp_path)
    assert os.listdir(tmp_path) == []  # refused before anything was written
    (tmp_path / VARIANT).write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a JSON object"):
        load_variant(tmp_path)


# ---------------------------------------------------------------------------------- update_config


def test_update_config_merges_deeply_into_a_new_dict():
    default = {"algo": {"learning_rate": 1.0, "discount": 0.99}, "env": {"game": "pong", "kw": {"a": 1}}, "n": 5}
    new = update_config(default, {"algo": {"learning_rate": 0.1}, "n": 7})
    assert new == {"algo": {"learning_rate": 0.1, "discount": 0.99}, "env": {"game": "pong", "kw": {"a": 1}}, "n": 7}
    assert default["algo"]["learning_rate"] == 1.0 and default["n"] == 5  # default untouched
    new["env"]["kw"]["a"] = 2  # nested dicts are copies, even those the variant did not touch
    assert default["env"]["kw"]["a"] == 1
    assert update_config(default, {}) == default


def test_update_config_keeps_attrdicts():
    default = AttrDict(algo=AttrDict(learning_rate=1.0))
    new = update_config(default, {"algo": {"learning_rate": 0.5}})
    assert isinstance(new, AttrDict) and isinstance(new.algo, AttrDict) and new.algo.learning_rate == 0.5


def test_update_config_unknown_key_is_a_key_error_naming_the_path():
    default = {"algo": {"learning_rate": 1.0, "discount": 0.99}}
    with pytest.raises(KeyError) as info:  # a KeyError, as rlpyt raised
        update_config(default, {"algo": {"learning_rat": 0.1}})
    message = str(info.value)
    assert "['algo']['learning_rat']" in message and "'learning_rate'" in message and "discount" in message
    with pytest.raises(KeyError, match="'sampler'"):
        update_config(default, {"sampler": {"batch_B": 8}})


def test_update_config_nesting_mismatch_is_a_type_error():
    default = {"algo": {"learning_rate": 1.0}, "model_kwargs": None}
    with pytest.raises(TypeError, match=r"\['algo'\]"):
        update_config(default, {"algo": 0.1})
    with pytest.raises(TypeError, match=r"\['model_kwargs'\]"):
        update_config(default, {"model_kwargs": {"hidden_sizes": [64]}})


def test_example_6_variants_merge_into_its_defaults(tmp_path):
    default = {"env": {"game": "pong"}, "algo": {"learning_rate": 7e-4}, "sampler": {"batch_B": 16, "batch_T": 5}}
    variants, log_dirs = make_variants(*example_6_levels())
    for variant, log_dir in zip(variants, log_dirs):
        save_variant(variant, tmp_path / log_dir)
        config = update_config(default, load_variant(tmp_path / log_dir))
        assert config["sampler"]["batch_T"] == 5
        assert log_dir == "example6_{}lr_{}B/{}".format(
            config["algo"]["learning_rate"], config["sampler"]["batch_B"], config["env"]["game"]
        )
