"""The console shows a short table of the figures a person reads; progress.csv keeps every column."""

from __future__ import annotations

import csv
import math

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context


def _table_keys(text: str, prefix: str = "") -> list[list[str]]:
    """The keys of each console table in ``text`` (tables are framed by lines of dashes), each line
    starting with ``prefix``."""
    tables, current = [], None
    for line in text.splitlines():
        line = line.removeprefix(prefix)
        if line and set(line) == {"-"}:
            if current is None:
                current = []
            else:
                tables.append(current)
                current = None
        elif current is not None:
            current.append(line.rsplit(None, 1)[0].strip())
    return tables


def test_runner_console_table_is_short_and_has_no_nan_while_progress_csv_keeps_all(tmp_path, capsys):
    # 4 steps per iteration, a row after each: the first rows come before any CartPole episode ends.
    sampler = SerialSampler(make, dict(id="CartPole-v1"), batch_T=4, batch_B=1)
    runner = MinibatchRl(
        algo=A2C(), agent=CategoricalPgAgent(), sampler=sampler, n_steps=60, log_interval_steps=4, seed=0
    )
    with logger_context(str(tmp_path), 0, "a2c", override_prefix=True) as run_dir:
        runner.train()
    out = capsys.readouterr().out
    tables = _table_keys(out)
    assert len(tables) == 15
    assert "nan" not in out
    assert "No episode has finished yet, so this row has no return." in out
    first, last = tables[0], tables[-1]
    assert "ReturnAverage" not in first  # no episode yet: no return row at all
    assert first[:4] == [
        "Diagnostics/Iteration",
        "Diagnostics/CumTime (s)",
        "Diagnostics/CumSteps",
        "Diagnostics/StepsPerSecond",
    ]
    for key in ("ReturnAverage", "ReturnMin", "ReturnMax", "LengthAverage", "lossAverage", "entropyAverage"):
        assert key in last
    for key in ("ReturnStd", "ReturnMedian", "DiscountedReturnAverage", "gradNormAverage", "Diagnostics/CumUpdates"):
        assert key not in last
    assert len(last) <= 14

    with open(f"{run_dir}/progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 15
    for key in ("ReturnStd", "ReturnMedian", "DiscountedReturnAverage", "gradNormMax", "Diagnostics/CumUpdates"):
        assert key in rows[0]
    assert math.isnan(float(rows[0]["ReturnAverage"]))
    assert not math.isnan(float(rows[-1]["ReturnAverage"]))


def test_rlpyt_style_logging_shows_every_recorded_key_but_not_nan(tmp_path, capsys):
    with logger_context(str(tmp_path), 0, "script", override_prefix=True) as run_dir:
        logger.record_tabular("MyLoss", 0.25)
        logger.record_tabular("NotYet", math.nan)
        logger.record_tabular("Detail", 7, console=False)
        logger.record_tabular_misc_stat("Score", [1.0, 2.0, 3.0])
        logger.record_tabular_misc_stat("Width", [4.0, 6.0], console=("Max",))
        row = logger.dump_tabular()
    keys = _table_keys(capsys.readouterr().out, prefix="script_0 ")[0]
    assert keys == ["MyLoss", "ScoreAverage", "ScoreStd", "ScoreMedian", "ScoreMin", "ScoreMax", "WidthMax"]
    assert set(row) >= {"NotYet", "Detail", "WidthAverage"}
    with open(f"{run_dir}/progress.csv", newline="") as f:
        header = next(csv.reader(f))
    assert header == list(row)


def test_full_console_table_shows_everything_recorded(tmp_path, capsys):
    with logger_context(str(tmp_path), 0, "script", override_prefix=True):
        logger.set_full_console_table(True)
        logger.record_tabular("NotYet", math.nan)
        logger.record_tabular("Detail", 7, console=False)
        logger.dump_tabular()
    out = capsys.readouterr().out
    assert _table_keys(out, prefix="script_0 ")[0] == ["NotYet", "Detail"]
    assert "nan" in out
    assert logger.get_full_console_table() is False  # the context's setting ended with it
