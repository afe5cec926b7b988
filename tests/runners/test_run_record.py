"""``run.json`` keeps a run's history: its first start, every sitting, and the code version of each."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

import rlrun
from rlrun.cli.info import describe_run
from rlrun.runners.run_record import RunRecord, code_version, read_run_record, write_run_record


def _record(argv: list[str], started: str, code: str) -> RunRecord:
    return RunRecord(runner="rlrun.runners.MinibatchRl", algo="rlrun.algos.pg.a2c.A2C", agent="rlrun.agents.A",
                     sampler="rlrun.samplers.SerialSampler", env="rlrun.envs.gym.make",
                     env_kwargs={"id": "CartPole-v1"}, n_steps=100, n_itr=10, itr_batch_size=10,
                     log_interval_steps=10, checkpoints=True, argv=argv, cwd="/w", started=started,
                     code=code)  # fmt: skip


@pytest.mark.timeout(30)
def test_three_sittings_keep_the_first_start_and_each_sittings_code(tmp_path):
    first = ["rlrun", "train", "--algo", "a2c", "--env", "CartPole-v1"]
    resume = ["rlrun", "train", "--resume", str(tmp_path)]
    write_run_record(tmp_path, _record(first, "2026-12-04T20:00:00", "rlrun 0.1.0, git aaaaaaa"))
    write_run_record(tmp_path, _record(resume, "2026-12-04T22:00:00", "rlrun 0.1.0, git bbbbbbb"))
    write_run_record(tmp_path, _record(resume, "2026-12-05T01:00:00", "rlrun 0.1.0, git bbbbbbb"))
    record = read_run_record(tmp_path)
    assert record is not None
    assert record["first_start"]["argv"] == first and record["first_start"]["started"] == "2026-12-04T20:00:00"
    assert [s["started"][11:13] for s in record["sittings"]] == ["20", "22", "01"]
    assert [s["code"][-7:] for s in record["sittings"]] == ["aaaaaaa", "bbbbbbb", "bbbbbbb"]
    assert record["argv"] == resume and record["started"] == "2026-12-05T01:00:00"  # the latest, as before

    (tmp_path / "progress.csv").write_text("Diagnostics/CumSteps,ReturnAverage\n100,9.0\n")
    text = "\n".join(describe_run(str(tmp_path)))
    assert ": rlrun train --algo a2c --env CartPole-v1 (in /w, 2026-12-04T20:00:00)" in text
    assert "sittings: 3, the latest at 2026-12-05T01:00:00; code: rlrun 0.1.0, git aaaaaaa, then" in text


@pytest.mark.timeout(30)
def test_a_record_written_before_sittings_were_kept_gives_its_first_and_latest_start(tmp_path):
    old = {"runner": "r", "argv": ["rlrun", "train", "--resume", "x"], "cwd": "/w", "started": "2026-12-04T22:38:49",
           "first_start": {"argv": ["rlrun", "train", "--algo", "td3"], "cwd": "/w", "started": "2026-12-04T20:16:41"}}  # fmt: skip
    (tmp_path / "run.json").write_text(json.dumps(old))
    write_run_record(tmp_path, _record(["rlrun", "train", "--resume", "x"], "2026-12-04T23:35:27", "rlrun 0.1.0"))
    record = read_run_record(tmp_path)
    assert record is not None
    assert record["first_start"] == old["first_start"]  # a second resume used to replace it with the first resume
    assert [s["started"] for s in record["sittings"]] == ["2026-12-04T20:16:41", "2026-12-04T22:38:49",
                                                          "2026-12-04T23:35:27"]  # fmt: skip


@pytest.mark.timeout(30)
def test_code_version_names_the_checkouts_commit():
    package = os.path.dirname(os.path.abspath(rlrun.__file__))
    head = subprocess.run(["git", "-C", package, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("rlrun is not imported from a git checkout here")
    assert code_version().startswith(f"rlrun {rlrun.__version__}, git {head.stdout.strip()}")
