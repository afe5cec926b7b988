"""Weights & Biases tracking in offline mode (no network here): the run's config and every logged row reach
the W&B run file, read back record by record; a resumed run continues the same W&B run."""

from __future__ import annotations

import glob
import json
import os
import time

import pytest

pytest.importorskip("wandb")
from wandb.proto import wandb_internal_pb2  # noqa: E402

from rlrun.cli import main  # noqa: E402
from rlrun.utils.logging import logger  # noqa: E402
from rlrun.utils.logging.context import logger_context  # noqa: E402

pytestmark = pytest.mark.timeout(120)

_BLOCK = 32768  # W&B's run file is a LevelDB-style log: 32 KiB blocks of records, each with a 7-byte header
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4


def wandb_records(run_dir: str) -> list[wandb_internal_pb2.Record]:
    """Every record of the offline W&B run in ``run_dir`` (the ``run-*.wandb`` files, in order)."""
    records = []
    for path in sorted(glob.glob(os.path.join(run_dir, "wandb", "offline-run-*", "run-*.wandb"))):
        data = open(path, "rb").read()
        assert data[:4] == b":W&B", path
        pos, pending = 7, b""  # after the file header: ":W&B", magic (2 bytes), version (1 byte)
        while pos + 7 <= len(data):
            if _BLOCK - pos % _BLOCK < 7:  # a block's tail too short for a header is padding
                pos += _BLOCK - pos % _BLOCK
                continue
            length, kind = int.from_bytes(data[pos + 4 : pos + 6], "little"), data[pos + 6]
            chunk, pos = data[pos + 7 : pos + 7 + length], pos + 7 + length
            if kind in (_FULL, _LAST):
                record = wandb_internal_pb2.Record()
                record.ParseFromString(pending + chunk)
                records.append(record)
                pending = b""
            elif kind in (_FIRST, _MIDDLE):
                pending += chunk
            elif length == 0:  # zero padding
                break
    return records


def finished_records(run_dir: str, timeout: float = 15.0) -> list[wandb_internal_pb2.Record]:
    """The run's records once its ``exit`` record is on disk. ``run.finish()`` can return before wandb's
    service process has written the rows to the run file (seen 2 times in 25: a 7-byte file, complete 1 s
    later), so a read straight after a run polls, bounded."""
    deadline = time.monotonic() + timeout
    while True:
        records = wandb_records(run_dir)
        if any(r.WhichOneof("record_type") == "exit" for r in records) or time.monotonic() > deadline:
            return records
        time.sleep(0.1)


def history(records) -> list[dict[str, float]]:
    rows = []
    for record in records:
        if record.WhichOneof("record_type") == "history":
            items = {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item}
            rows.append(items)
    return rows


def config(records) -> dict[str, object]:
    found: dict[str, object] = {}
    for record in records:  # the run's start record holds it; later config records update it
        kind = record.WhichOneof("record_type")
        if kind in ("run", "config"):
            update = record.run.config.update if kind == "run" else record.config.update
            found.update({item.key: json.loads(item.value_json) for item in update})
    return found


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")


def test_logger_context_sends_config_and_every_row_to_wandb(tmp_path):
    with logger_context(str(tmp_path), 0, "tracked", {"lr": 0.001}, override_prefix=True, wandb=True) as run_dir:
        logger.set_console_output(False)
        for itr in range(3):
            logger.set_iteration(itr)
            logger.record_tabular("Iteration", itr)
            logger.record_tabular("ReturnAverage", 10.0 * itr)
            logger.dump_tabular()
    records = finished_records(run_dir)
    rows = history(records)
    assert [r["ReturnAverage"] for r in rows] == [0.0, 10.0, 20.0]
    assert [r["_step"] for r in rows] == [0, 1, 2]
    assert config(records)["lr"] == 0.001 and config(records)["name"] == "tracked"


def test_rlrun_train_wandb_tracks_the_progress_columns_and_a_resume_continues_the_same_run(tmp_path, capsys):
    argv = ["train", "--algo", "a2c", "--env", "CartPole-v1", "--n-envs", "2", "--batch-T", "8",
            "--log-interval", "16", "--eval-envs", "0", "--seed", "0", "--log-dir", str(tmp_path), "--wandb"]  # fmt: skip
    assert main([*argv, "--steps", "48"]) == 0
    run_dir = str(tmp_path / "run_0")
    first_id = open(os.path.join(run_dir, "wandb_run_id.txt")).read().strip()
    rows = history(finished_records(run_dir))
    assert len(rows) == 3 and all("Diagnostics/CumSteps" in r for r in rows)
    assert config(finished_records(run_dir))["command"]["algo"] == "a2c"
    capsys.readouterr()
    assert main(["train", "--resume", run_dir, "--steps", "96"]) == 0
    assert open(os.path.join(run_dir, "wandb_run_id.txt")).read().strip() == first_id
    # The resumed attempt logs the rows after the checkpoint (its own offline-run folder, or the same one when
    # both attempts started within one second). wandb's writer is a service process: give it a moment to flush.
    deadline = time.monotonic() + 15
    while True:
        steps = [r["Diagnostics/CumSteps"] for r in history(wandb_records(run_dir)) if "Diagnostics/CumSteps" in r]
        if max(steps) == 96 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert max(steps) == 96 and 64 in steps and 80 in steps


def test_rlrun_train_video_every_sends_the_evaluation_videos_to_wandb(tmp_path, capsys):
    pytest.importorskip("imageio_ffmpeg")
    pytest.importorskip("pygame")
    argv = ["train", "--algo", "a2c", "--env", "CartPole-v1", "--n-envs", "2", "--batch-T", "8", "--steps", "48",
            "--log-interval", "16", "--eval-envs", "0", "--seed", "0", "--log-dir", str(tmp_path), "--wandb",
            "--video-every", "2"]  # fmt: skip
    assert main(argv) == 0
    run_dir = str(tmp_path / "run_0")
    assert sorted(os.listdir(os.path.join(run_dir, "videos"))) == ["itr_1.mp4"]
    rows = history(finished_records(run_dir))
    videos = [(r["_step"], r["video/_type"], r["video/path"]) for r in rows if "video/_type" in r]
    assert len(videos) == 1 and videos[0][:2] == (1, "video-file") and videos[0][2].endswith(".mp4")
