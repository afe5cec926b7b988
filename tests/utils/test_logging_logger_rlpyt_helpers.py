"""rlpyt's smaller logger switches: tabular on/off, held CSV outputs, prefix off, summary dir, log_variant."""

import csv
import enum
import json

import numpy as np
import pytest

from rlrun.utils.collections import RESERVED_NAMES, namedarraytuple
from rlrun.utils.logging import logger

pytestmark = pytest.mark.timeout(30)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_disable_tabular_skips_csv_rows_but_still_prints_and_returns_them(tmp_path, capsys):
    path = tmp_path / "progress.csv"
    logger.add_tabular_output(str(path))
    logger.record_tabular("A", 1)
    logger.dump_tabular()
    logger.disable_tabular()
    logger.record_tabular("A", 2)
    assert logger.dump_tabular() == {"A": 2}
    assert "2" in capsys.readouterr().out
    logger.enable_tabular()
    logger.record_tabular("A", 3)
    logger.dump_tabular()
    assert read_csv(path) == [["A"], ["1"], ["3"]]


def test_held_tabular_output_stays_open_and_resumes_in_the_same_file(tmp_path):
    path = tmp_path / "eval" / "progress.csv"
    logger.add_tabular_output(str(path))
    logger.record_tabular("A", 1)
    logger.dump_tabular()
    logger.hold_tabular_output(str(path))
    logger.record_tabular("A", 2)
    logger.dump_tabular()
    logger.add_tabular_output(str(path))
    logger.record_tabular("A", 3)
    logger.dump_tabular()
    assert read_csv(path) == [["A"], ["1"], ["3"]]


def test_remove_tabular_output_closes_a_held_output(tmp_path):
    path = tmp_path / "progress.csv"
    logger.add_tabular_output(str(path))
    logger.hold_tabular_output(str(path))
    logger.remove_tabular_output(str(path))
    logger.add_tabular_output(str(path))  # a fresh file: truncated, new columns
    logger.record_tabular("B", 1)
    logger.dump_tabular()
    assert read_csv(path) == [["B"], ["1"]]


def test_disable_prefix_drops_the_pushed_prefixes_from_messages(capsys):
    with logger.prefix("[run] "):
        logger.set_disable_prefix(True)
        assert logger.get_disable_prefix() is True
        logger.log("plain", with_timestamp=False)
        logger.set_disable_prefix(False)
        logger.log("prefixed", with_timestamp=False)
    out = capsys.readouterr().out.splitlines()
    assert out == ["plain", "[run] prefixed"]


def test_tf_summary_dir_is_remembered_per_logger_state(tmp_path):
    assert logger.get_tf_summary_dir() is None
    logger.set_tf_summary_dir(str(tmp_path))
    assert logger.get_tf_summary_dir() == str(tmp_path)
    logger.push_state()
    try:
        assert logger.get_tf_summary_dir() is None
    finally:
        logger.pop_state()
    assert logger.get_tf_summary_dir() == str(tmp_path)


class Color(enum.Enum):
    RED = 1


class Variant:
    def dump(self):
        return {"n": 1}


def test_log_variant_writes_json_with_classes_enums_and_arrays(tmp_path):
    path = tmp_path / "sub" / "variant.json"
    logger.log_variant(str(path), {"cls": Variant, "color": Color.RED, "arr": np.arange(3), "x": 0.5})
    data = json.loads(path.read_text())
    assert data["cls"] == {"$class": f"{__name__}.Variant"}
    assert data["color"] == {"$enum": f"{__name__}.Color.RED"}
    assert data["arr"] == [0, 1, 2] and data["x"] == 0.5


def test_log_variant_calls_dump_on_variant_objects(tmp_path):
    path = tmp_path / "variant.json"
    logger.log_variant(str(path), Variant())
    assert json.loads(path.read_text()) == {"n": 1}


def test_reserved_names_are_the_field_names_namedarraytuple_refuses():
    assert RESERVED_NAMES == ("get", "items")
    for name in RESERVED_NAMES:
        with pytest.raises(ValueError, match=name):
            namedarraytuple("Bad", ["x", name])
