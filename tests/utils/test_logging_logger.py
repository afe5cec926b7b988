"""The module-level logger: messages, tabular rows, progress.csv columns, snapshots, TensorBoard calls."""

import csv
import math
import warnings

import numpy as np
import pytest
import torch

from rlrun.utils.logging import logger
from rlrun.utils.logging.tabular import CsvOutput


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_log_without_context_prints_to_console_and_creates_no_files(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with logger.prefix("itr #3 "):
        logger.log("hello")
    logger.record_tabular("Loss", 0.5)
    row = logger.dump_tabular()
    out = capsys.readouterr().out
    assert "itr #3 hello" in out
    assert "Loss" in out and "0.5" in out
    assert row == {"Loss": 0.5}
    assert list(tmp_path.iterdir()) == []
    assert logger.save_itr_params(0, {"a": 1}) == []


def test_misc_stat_records_average_std_median_min_max():
    logger.record_tabular_misc_stat("Return", [1.0, 2.0, 3.0, 10.0])
    row = logger.dump_tabular()
    assert row == pytest.approx(
        {
            "ReturnAverage": 4.0,
            "ReturnStd": float(np.std([1, 2, 3, 10])),
            "ReturnMedian": 2.5,
            "ReturnMin": 1.0,
            "ReturnMax": 10.0,
        }
    )


def test_misc_stat_of_empty_values_records_nan_for_every_stat():
    logger.record_tabular_misc_stat("Loss", [])
    row = logger.dump_tabular()
    assert list(row) == ["LossAverage", "LossStd", "LossMedian", "LossMin", "LossMax"]
    assert all(math.isnan(v) for v in row.values())


def test_misc_stat_accepts_tensors_numpy_arrays_and_lists_of_scalars():
    logger.record_tabular_misc_stat("A", torch.tensor([1.0, 3.0]))
    logger.record_tabular_misc_stat("B", np.array([[1, 3]]))
    logger.record_tabular_misc_stat("C", [torch.tensor(1.0), np.float32(3.0)])
    row = logger.dump_tabular()
    assert row["AAverage"] == row["BAverage"] == row["CAverage"] == 2.0


def test_misc_stat_front_placement_puts_stat_name_first():
    logger.record_tabular_misc_stat("Return", [2.0], placement="front")
    assert set(logger.dump_tabular()) == {"AverageReturn", "StdReturn", "MedianReturn", "MinReturn", "MaxReturn"}
    with pytest.raises(ValueError, match="placement"):
        logger.record_tabular_misc_stat("Return", [2.0], placement="middle")


def test_tabular_prefix_applies_inside_block_and_is_removed_after_an_error():
    with pytest.raises(RuntimeError), logger.tabular_prefix("Diagnostics/"):
        logger.record_tabular("Iteration", 1)
        raise RuntimeError
    logger.record_tabular("Other", 2)
    assert logger.dump_tabular() == {"Diagnostics/Iteration": 1, "Other": 2}


def test_record_tabular_converts_numpy_and_torch_scalars_and_last_value_wins():
    logger.record_tabular("a", np.float32(1.5))
    logger.record_tabular("b", torch.tensor(7))
    logger.record_tabular("a", np.int64(4))
    row = logger.dump_tabular()
    assert row == {"a": 4, "b": 7}
    assert type(row["a"]) is int and type(row["b"]) is int


def test_dump_tabular_clears_the_row_and_returns_empty_when_nothing_recorded():
    logger.record_tabular("x", 1)
    assert logger.dump_tabular() == {"x": 1}
    assert logger.dump_tabular() == {}


def test_progress_csv_adds_a_column_for_a_late_key_with_earlier_rows_blank(tmp_path):
    """rlpyt rewrote the header for a key first recorded late; nothing a user records may be lost."""
    path = tmp_path / "progress.csv"
    logger.add_tabular_output(str(path))
    logger.record_tabular("Iteration", 0)
    logger.record_tabular("Loss", 0.25)
    logger.dump_tabular()
    logger.record_tabular("Iteration", 1)
    logger.record_tabular("Late", 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        logger.dump_tabular()
    logger.record_tabular("Iteration", 2)
    logger.record_tabular("Late", 6)
    logger.record_tabular("Loss", 0.125)
    logger.record_tabular("Later", "x,y")  # a cell that needs quoting survives the rewrite
    logger.dump_tabular()
    assert read_csv(path) == [
        ["Iteration", "Loss", "Late", "Later"],
        ["0", "0.25", "", ""],
        ["1", "", "5", ""],
        ["2", "0.125", "6", "x,y"],
    ]
    assert not (tmp_path / "progress.csv.rewrite").exists()


def test_progress_csv_rewinds_past_a_column_added_after_the_checkpoint(tmp_path):
    path = tmp_path / "progress.csv"
    out = CsvOutput(str(path))
    out.write_row(dict(a=1))
    saved = out.state()
    out.write_row(dict(a=2, b=7))  # after the checkpoint: a new column
    out.close()
    resumed = CsvOutput(str(path), append=True)
    assert resumed.columns == ["a", "b"] and resumed.state()["rows"] == 2
    assert resumed.rewind(saved)
    resumed.write_row(dict(a=3))
    resumed.close()
    assert path.read_text().splitlines() == ["a", "1", "3"]
    stale = dict(saved, columns=["a", "zzz"])  # names a column this file never had: another file
    assert not CsvOutput(str(path), append=True).rewind(stale)
    assert path.read_text().splitlines() == ["a", "1", "3"]


def test_csv_cells_round_trip_floats_and_write_nan(tmp_path):
    out = CsvOutput(str(tmp_path / "p.csv"))
    out.write_row({"f": 0.1 + 0.2, "i": 3, "n": float("nan"), "b": True, "s": "text"})
    out.close()
    header, cells = read_csv(tmp_path / "p.csv")
    values = dict(zip(header, cells))
    assert float(values["f"]) == 0.1 + 0.2
    assert values["i"] == "3" and values["n"] == "nan" and values["b"] == "1" and values["s"] == "text"


def test_text_output_receives_messages_and_tables(tmp_path):
    path = tmp_path / "sub" / "debug.log"
    logger.add_text_output(str(path))
    logger.log("message one")
    logger.record_tabular("Metric", 1.25)
    logger.dump_tabular()
    logger.remove_text_output(str(path))
    logger.log("not in the file")
    text = path.read_text()
    assert "message one" in text and "Metric" in text and "1.25" in text
    assert "not in the file" not in text


def test_log_tabular_only_drops_messages_but_still_shows_the_table(capsys):
    logger.set_log_tabular_only(True)
    logger.log("hidden message")
    logger.record_tabular("Shown", 1)
    logger.dump_tabular()
    out = capsys.readouterr().out
    assert "hidden message" not in out and "Shown" in out


def test_disabled_logger_writes_nothing_but_still_returns_the_row(capsys, tmp_path):
    path = tmp_path / "progress.csv"
    logger.add_tabular_output(str(path))
    logger.disable()
    logger.log("quiet")
    logger.record_tabular("x", 1)
    assert logger.dump_tabular() == {"x": 1}
    assert capsys.readouterr().out == ""
    logger.enable()
    logger.record_tabular("y", 2)
    assert logger.dump_tabular() == {"y": 2}  # nothing left over from the disabled row
    assert read_csv(path) == [["y"], ["2"]]


def test_unknown_log_color_is_refused_with_the_valid_colors():
    with pytest.raises(ValueError, match="yellow"):
        logger.log("x", color="chartreuse")


def test_unknown_snapshot_mode_is_refused_naming_the_valid_modes():
    with pytest.raises(ValueError, match="'last'"):
        logger.set_snapshot_mode("sometimes")


@pytest.mark.parametrize("gap", [0, -1, 1.5, True])
def test_snapshot_gap_must_be_a_positive_integer(gap):
    with pytest.raises(ValueError, match="positive integer"):
        logger.set_snapshot_gap(gap)


@pytest.mark.parametrize(
    "mode, gap, expected",
    [
        ("none", 1, set()),
        ("last", 1, {"params.pkl"}),
        ("all", 1, {f"itr_{i}.pkl" for i in range(6)}),
        ("gap", 2, {"itr_0.pkl", "itr_1.pkl", "itr_3.pkl", "itr_5.pkl"}),
        ("gap", 3, {"itr_0.pkl", "itr_2.pkl", "itr_5.pkl"}),
        ("last+gap", 3, {"params.pkl", "itr_0.pkl", "itr_2.pkl", "itr_5.pkl"}),
    ],
)
def test_save_itr_params_writes_the_files_of_each_snapshot_mode(tmp_path, mode, gap, expected):
    logger.set_snapshot_dir(str(tmp_path))
    logger.set_snapshot_mode(mode)
    logger.set_snapshot_gap(gap)
    for itr in range(6):
        logger.save_itr_params(itr, {"itr": itr, "w": torch.full((2,), float(itr))})
    assert {p.name for p in tmp_path.iterdir()} == expected
    if "params.pkl" in expected:
        last = torch.load(tmp_path / "params.pkl")
        assert last["itr"] == 5 and torch.equal(last["w"], torch.full((2,), 5.0))


def test_summary_writer_gets_every_numeric_value_at_the_set_iteration_with_grouped_stat_tags():
    class RecordingWriter:
        def __init__(self):
            self.scalars = []
            self.flushes = 0

        def add_scalar(self, tag, value, step):
            self.scalars.append((tag, value, step))

        def flush(self):
            self.flushes += 1

    writer = RecordingWriter()
    logger.set_tf_summary_writer(writer)
    logger.set_iteration(7)
    with logger.tabular_prefix("Diagnostics/"):
        logger.record_tabular("CumSteps", 100)
    logger.record_tabular("Name", "not a number")
    logger.record_tabular_misc_stat("Return", [1.0, 3.0])
    logger.dump_tabular()
    tags = {tag: (value, step) for tag, value, step in writer.scalars}
    assert tags["Diagnostics/CumSteps"] == (100.0, 7)
    assert tags["Return/Average"] == (2.0, 7)
    assert "Name" not in tags and "ReturnAverage" not in tags
    assert writer.flushes == 1


def test_pop_state_without_push_is_refused():
    logger.pop_state()  # the fixture's state
    try:
        with pytest.raises(RuntimeError, match="push_state"):
            while True:
                logger.pop_state()
    finally:
        logger.push_state()  # for the fixture's pop


def test_rlpyt_keywords_of_the_logger_are_accepted(tmp_path):
    logger.add_text_output(str(tmp_path / "debug.log"))
    try:
        with logger.prefix(key="[a] "):
            logger.log(s="hello")
        logger.push_prefix(prefix="[b] ")
        logger.pop_prefix()
        with logger.tabular_prefix(key="Diagnostics/"):
            logger.record_tabular("x", 1.0, "ignored", also="ignored")
        logger.push_tabular_prefix(key="P/")
        logger.pop_tabular_prefix()
        logger.set_tf_summary_writer(writer_name=None)
    finally:
        logger.remove_text_output(str(tmp_path / "debug.log"))
    assert "[a] hello" in (tmp_path / "debug.log").read_text()
