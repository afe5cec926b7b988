"""logger_context: the run folder, its files, snapshots, TensorBoard, and restoring the logger after it."""

import collections
import csv
import datetime
import importlib.util
import json
import pathlib
import sys

import numpy as np
import pytest
import torch

from rlrun.utils.logging import logger
from rlrun.utils.logging.context import claim_run_dir, get_log_dir, jsonable, logger_context

HAS_TENSORBOARD = importlib.util.find_spec("tensorboard") is not None


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def today():
    return datetime.date.today().strftime("%Y%m%d")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_context_writes_params_progress_and_debug_log_under_cwd_data_local_date_time(in_tmp):
    before = datetime.datetime.now().replace(microsecond=0)
    with logger_context("cartpole_a2c", 3, "a2c", log_params=dict(lr=1e-3, n_envs=8)) as run_dir:
        logger.log("inside the run")
        logger.record_tabular("Iteration", 0)
        logger.dump_tabular()
    after = datetime.datetime.now()
    date, time = pathlib.Path(run_dir).relative_to(in_tmp / "data" / "local").parts[:2]
    assert before <= datetime.datetime.strptime(date + time, "%Y%m%d%H%M%S") <= after
    expected = in_tmp / "data" / "local" / date / time / "cartpole_a2c" / "run_3"
    assert pathlib.Path(run_dir) == expected
    assert {p.name for p in expected.iterdir()} == {"params.json", "progress.csv", "debug.log", ".run.lock"}
    assert json.loads((expected / "params.json").read_text()) == {"lr": 1e-3, "n_envs": 8, "name": "a2c", "run_ID": 3}
    assert read_csv(expected / "progress.csv") == [["Iteration"], ["0"]]
    assert "a2c_3 inside the run" in (expected / "debug.log").read_text()


def test_override_prefix_uses_log_dir_as_given_plus_run_folder(in_tmp):
    with logger_context("results/exp", "seed0", "x", override_prefix=True) as run_dir:
        pass
    assert pathlib.Path(run_dir) == in_tmp / "results" / "exp" / "run_seed0"
    assert (in_tmp / "results" / "exp" / "run_seed0" / "params.json").exists()
    assert not (in_tmp / "data").exists()


def test_absolute_log_dir_is_used_as_given(in_tmp):
    target = in_tmp / "elsewhere"
    with logger_context(str(target), 1, "x") as run_dir:
        pass
    assert pathlib.Path(run_dir) == target / "run_1"


def test_get_log_dir_is_relative_to_the_current_directory_at_call_time(in_tmp):
    log_dir = pathlib.Path(get_log_dir("e"))
    assert log_dir.parent.parent == in_tmp / "data" / "local" / today() and log_dir.name == "e"
    assert len(log_dir.parent.name) == 6 and log_dir.parent.name.isdigit()  # HHMMSS
    assert get_log_dir("e", root_log_dir=str(in_tmp / "r"), date=False) == str(in_tmp / "r" / "local" / "e")


def test_params_json_holds_non_json_values_converted_and_log_params_is_not_mutated(in_tmp):
    Point = collections.namedtuple("Point", "x y")
    params = dict(
        arr=np.arange(3),
        scalar=np.float32(0.5),
        tensor=torch.tensor([1.5]),
        cls=torch.optim.Adam,
        fn=np.mean,
        path=pathlib.Path("a/b"),
        nan=float("nan"),
        point=Point(1, 2),
        nested={"t": (1, 2), 3: {4}},
        obj=object(),
    )
    original = dict(params)
    with logger_context("e", 0, "n", log_params=params) as run_dir:
        pass
    saved = json.loads((pathlib.Path(run_dir) / "params.json").read_text())
    assert saved["arr"] == [0, 1, 2]
    assert saved["scalar"] == 0.5
    assert saved["tensor"] == [1.5]
    assert saved["cls"] == "torch.optim.adam.Adam"
    assert saved["fn"].endswith("mean")
    assert saved["path"] == "a/b"
    assert saved["nan"] == "nan"
    assert saved["point"] == {"x": 1, "y": 2}
    assert saved["nested"] == {"t": [1, 2], "3": [4]}
    assert saved["obj"].startswith("<object object")
    assert params == original and "name" not in params


def test_jsonable_turns_a_dataclass_into_a_dict():
    import dataclasses

    @dataclasses.dataclass
    class Config:
        lr: float = 0.1
        sizes: tuple = (64, 64)

    assert jsonable(Config()) == {"lr": 0.1, "sizes": [64, 64]}


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("none", set()),
        ("last", {"params.pkl"}),
        ("all", {"itr_0.pkl", "itr_1.pkl", "itr_2.pkl", "itr_3.pkl"}),
        ("gap", {"itr_0.pkl", "itr_1.pkl", "itr_3.pkl"}),
    ],
)
def test_snapshot_mode_of_the_context_decides_the_snapshot_files(in_tmp, mode, expected):
    with logger_context("e", 0, "n", snapshot_mode=mode, snapshot_gap=2) as run_dir:
        for itr in range(4):
            logger.save_itr_params(itr, {"itr": itr})
    snapshots = {p.name for p in pathlib.Path(run_dir).glob("*.pkl")}
    assert snapshots == expected
    assert logger.get_snapshot_gap() == 1  # the context's gap ended with it


def test_bad_snapshot_arguments_are_refused_before_any_folder_is_made(in_tmp):
    with pytest.raises(ValueError, match="snapshot_mode"), logger_context("e", 0, "n", snapshot_mode="every"):
        pass
    with pytest.raises(ValueError, match="positive integer"), logger_context("e", 0, "n", snapshot_gap=0):
        pass
    assert not (in_tmp / "data").exists()


def test_nested_context_has_its_own_files_and_the_outer_one_resumes_after_it(in_tmp):
    logger.set_snapshot_gap(5)
    with logger_context("outer", 0, "outer", snapshot_mode="all") as outer_dir:
        with logger.tabular_prefix("Outer/"):
            logger.record_tabular("Key", 1)
            logger.dump_tabular()
            with logger_context("inner", 0, "inner", snapshot_mode="last") as inner_dir:
                assert logger.get_snapshot_dir() == inner_dir
                assert logger.get_snapshot_gap() == 5  # settings made before a context carry into it
                logger.record_tabular("InnerKey", 2)
                logger.dump_tabular()
                logger.log("inner message")
            assert logger.get_snapshot_dir() == outer_dir
            assert logger.get_snapshot_mode() == "all"
            logger.record_tabular("Key", 3)
        logger.dump_tabular()
        logger.log("outer message")
    assert logger.get_snapshot_dir() is None
    outer, inner = pathlib.Path(outer_dir), pathlib.Path(inner_dir)
    assert read_csv(outer / "progress.csv") == [["Outer/Key"], ["1"], ["3"]]
    assert read_csv(inner / "progress.csv") == [["InnerKey"], ["2"]]
    assert "inner message" not in (outer / "debug.log").read_text()
    assert "outer message" not in (inner / "debug.log").read_text()


def test_context_restores_the_logger_and_closes_files_when_the_run_raises(in_tmp, capsys):
    with pytest.raises(KeyError), logger_context("e", 0, "n", snapshot_mode="last") as run_dir:
        logger.record_tabular("logged", 1)
        logger.dump_tabular()  # the run started, so its folder stays (a run failing before is removed)
        logger.record_tabular("pending", 1)
        raise KeyError("boom")
    assert logger.get_snapshot_dir() is None
    logger.log("after the run")
    logger.record_tabular("after", 1)
    assert logger.dump_tabular() == {"after": 1}  # the failed run's pending row is gone with its state
    assert "after the run" not in (pathlib.Path(run_dir) / "debug.log").read_text()
    assert "n_0 after the run" not in capsys.readouterr().out  # the run's prefix was popped


def test_consecutive_runs_in_one_process_get_their_own_columns(in_tmp):
    for run_ID, key in [(0, "A"), (1, "B")]:
        with logger_context("e", run_ID, "n") as run_dir:
            logger.record_tabular(key, run_ID)
            logger.dump_tabular()
        assert read_csv(pathlib.Path(run_dir) / "progress.csv") == [[key], [str(run_ID)]]


def test_rerunning_a_run_id_keeps_the_earlier_logs_and_takes_the_next_folder(in_tmp):
    run_dirs = []
    for value in (1, 2, 3):
        with logger_context(str(in_tmp / "e"), 0, "n") as run_dir:
            logger.record_tabular("v", value)
            logger.dump_tabular()
        run_dirs.append(pathlib.Path(run_dir))
    assert run_dirs == [in_tmp / "e" / "run_0", in_tmp / "e" / "run_0-2", in_tmp / "e" / "run_0-3"]
    for run, value in zip(run_dirs, (1, 2, 3)):
        assert read_csv(run / "progress.csv") == [["v"], [str(value)]]
    assert "holds an earlier run's logs, which are kept" in (run_dirs[1] / "debug.log").read_text()


def test_a_relative_log_dir_inside_data_is_used_as_given(in_tmp):
    with logger_context("data/local/20260101/000000/exp", 1, "n") as run_dir:
        pass
    assert pathlib.Path(run_dir) == in_tmp / "data" / "local" / "20260101" / "000000" / "exp" / "run_1"


def test_an_existing_folder_without_run_files_is_used(in_tmp):
    (in_tmp / "e" / "run_0").mkdir(parents=True)
    (in_tmp / "e" / "run_0" / "notes.txt").write_text("mine")
    with logger_context(str(in_tmp / "e"), 0, "n") as run_dir:
        pass
    assert pathlib.Path(run_dir) == in_tmp / "e" / "run_0"


def _claim(args):
    return claim_run_dir(args)


def test_processes_claiming_one_folder_at_once_each_get_their_own(tmp_path):
    import multiprocessing as mp

    with mp.get_context("fork").Pool(4) as pool:
        claimed = pool.map(_claim, [str(tmp_path / "run_0")] * 8)
    assert len(set(claimed)) == 8
    assert {pathlib.Path(c).name for c in claimed} == {"run_0", *(f"run_0-{k}" for k in range(2, 9))}


def test_summary_writer_without_tensorboard_names_the_install_command(in_tmp, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # as if tensorboard were not installed
    with pytest.raises(ImportError, match=r"pip install rlrun\[tensorboard\]"):
        with logger_context("e", 0, "n", use_summary_writer=True):
            pass
    assert not (in_tmp / "data").exists()


@pytest.mark.skipif(not HAS_TENSORBOARD, reason="needs tensorboard")
def test_summary_writer_writes_event_files_into_the_run_folder(in_tmp):
    with logger_context("e", 0, "n", use_summary_writer=True) as run_dir:
        logger.record_tabular("x", 1.0)
        logger.dump_tabular()
        assert logger.get_tf_summary_writer() is not None
    assert logger.get_tf_summary_writer() is None
    assert list(pathlib.Path(run_dir).glob("events.out.tfevents.*"))
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir))
    events.Reload()
    (tag,) = [t for t in events.Tags()["scalars"] if t.endswith("x")]
    assert [e.value for e in events.Scalars(tag)] == [1.0]


def test_library_log_records_reach_the_runs_debug_log_and_warnings_the_console(in_tmp, capsys):
    import logging

    module_log = logging.getLogger("rlrun.samplers.parallel.pool")
    with logger_context("channel", 0, "exp", {}) as run_dir:
        module_log.info("four workers started")
        module_log.warning("a worker is slow")
        logging.getLogger("elsewhere").warning("not ours")
    module_log.info("after the run")
    text = (pathlib.Path(run_dir) / "debug.log").read_text()
    assert "exp_0 four workers started" in text and "WARNING: a worker is slow" in text
    assert "not ours" not in text and "after the run" not in text
    out = capsys.readouterr().out
    assert "a worker is slow" in out and "four workers started" not in out
    assert not any(type(h).__name__ == "RunLogHandler" for h in logging.getLogger("rlrun").handlers)


def test_add_exp_param_tags_every_run_below_a_folder_and_keeps_values_unless_told(in_tmp):
    from rlrun.utils.logging.context import add_exp_param, check_progress

    for run_ID in (0, 1):
        with logger_context(str(in_tmp / "grid" / "a"), run_ID, "n", log_params=dict(opt=dict(lr=1))):
            logger.record_tabular("x", run_ID)
            logger.dump_tabular()
    changed = add_exp_param("label", "small-lr", exp_dir=str(in_tmp / "grid"))
    assert len(changed) == 2
    assert add_exp_param("label", "other", exp_dir=str(in_tmp / "grid")) == []  # kept without overwrite
    add_exp_param("opt", dict(eps=0.5), exp_dir=str(in_tmp / "grid"), overwrite=True)
    params = json.loads((in_tmp / "grid" / "a" / "run_1" / "params.json").read_text())
    assert params["label"] == "small-lr" and params["opt"] == {"lr": 1, "eps": 0.5}
    rows = check_progress(str(in_tmp / "grid"))
    assert sorted(rows.values()) == [1, 1]


def test_quiet_console_prints_nothing_writes_the_files_and_restores_the_setting(tmp_path, capsys):
    """``logger.quiet_console()`` around a run: nothing on the console, debug.log and progress.csv written,
    and afterwards the console as it was before, also when the block raised or the console was already off."""
    with pytest.raises(RuntimeError, match="boom"):
        with logger.quiet_console(), logger_context(str(tmp_path), 0, "quiet", override_prefix=True) as run_dir:
            logger.log("a message")
            logger.record_tabular("Loss", 0.5)
            logger.dump_tabular()
            raise RuntimeError("boom")
    assert capsys.readouterr().out == ""
    assert "a message" in (pathlib.Path(run_dir) / "debug.log").read_text()
    assert "Loss" in (pathlib.Path(run_dir) / "progress.csv").read_text()
    logger.log("after")
    assert "after" in capsys.readouterr().out
    logger.set_console_output(False)
    try:
        with logger.quiet_console():
            pass
        logger.log("still off")
        assert capsys.readouterr().out == ""
    finally:
        logger.set_console_output(True)
