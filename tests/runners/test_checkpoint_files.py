"""The checkpoint files: atomic writes, checks on load, pruning, and the policy of when to write."""

from __future__ import annotations

import json
import os

import pytest
import torch

from rlrun.runners import checkpoint as ckpt
from rlrun.runners.checkpoint import CheckpointError, CheckpointPolicy


def state(value: float) -> dict:
    return dict(format=ckpt.FORMAT_VERSION, weights=torch.full((64,), value), note="x" * 1000)


def latest_value(folder) -> float | None:
    found = ckpt.load_latest_checkpoint(folder)
    return None if found is None else float(found[1]["weights"][0])


def test_a_written_checkpoint_loads_back_with_its_manifest(tmp_path):
    info = ckpt.write_checkpoint(tmp_path, 7, state(1.5), cum_steps=224)
    manifest = json.loads(info.manifest.read_text())
    assert manifest["itr"] == 7 and manifest["cum_steps"] == 224 and manifest["size"] == info.path.stat().st_size
    found_info, loaded = ckpt.load_latest_checkpoint(tmp_path)
    assert found_info == info and torch.equal(loaded["weights"], state(1.5)["weights"])
    assert not list(tmp_path.glob("*.tmp"))


def test_a_crash_between_writing_and_renaming_leaves_the_previous_checkpoint_the_latest(tmp_path, monkeypatch):
    ckpt.write_checkpoint(tmp_path, 1, state(1.0), cum_steps=1)

    def crash(src, dst):
        raise KeyboardInterrupt("killed before the rename")

    monkeypatch.setattr(ckpt.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        ckpt.write_checkpoint(tmp_path, 2, state(2.0), cum_steps=2)
    monkeypatch.undo()
    assert latest_value(tmp_path) == 1.0
    assert not list(tmp_path.glob("itr_000000002*"))  # the temporary file went with the error


def test_a_data_file_without_its_manifest_is_ignored_and_pruned(tmp_path, monkeypatch):
    ckpt.write_checkpoint(tmp_path, 1, state(1.0), cum_steps=1)
    real_replace = os.replace

    def crash_on_manifest(src, dst):
        if str(dst).endswith(".json"):
            raise KeyboardInterrupt("killed between the data and its manifest")
        real_replace(src, dst)

    monkeypatch.setattr(ckpt.os, "replace", crash_on_manifest)
    with pytest.raises(KeyboardInterrupt):
        ckpt.write_checkpoint(tmp_path, 2, state(2.0), cum_steps=2)
    monkeypatch.undo()
    assert (tmp_path / "itr_000000002.ckpt").exists()
    assert latest_value(tmp_path) == 1.0
    ckpt.prune_checkpoints(tmp_path, keep_last=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["itr_000000001.ckpt", "itr_000000001.json"]


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete"])
def test_a_damaged_newest_checkpoint_is_never_loaded_the_one_before_is(tmp_path, damage, caplog):
    ckpt.write_checkpoint(tmp_path, 1, state(1.0), cum_steps=1)
    info = ckpt.write_checkpoint(tmp_path, 2, state(2.0), cum_steps=2)
    data = info.path.read_bytes()
    if damage == "truncate":
        info.path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        info.path.write_bytes(data[:100] + bytes([data[100] ^ 1]) + data[101:])
    else:
        info.path.unlink()
    assert latest_value(tmp_path) == 1.0
    assert "itr 2 cannot be used" in caplog.text
    with pytest.raises(CheckpointError):
        ckpt.load_checkpoint(info)


def test_a_truncated_manifest_is_skipped(tmp_path):
    ckpt.write_checkpoint(tmp_path, 1, state(1.0), cum_steps=1)
    info = ckpt.write_checkpoint(tmp_path, 2, state(2.0), cum_steps=2)
    info.manifest.write_text(info.manifest.read_text()[:20])
    assert latest_value(tmp_path) == 1.0


def test_no_checkpoint_gives_none_and_a_named_missing_file_is_an_error(tmp_path):
    assert ckpt.load_latest_checkpoint(tmp_path) is None
    assert ckpt.load_latest_checkpoint(tmp_path / "nowhere") is None
    with pytest.raises(CheckpointError, match="no readable manifest"):
        ckpt.load_latest_checkpoint(tmp_path / "itr_000000003.ckpt")


def test_a_run_folder_its_checkpoints_folder_or_one_file_can_be_resumed_from(tmp_path):
    folder = ckpt.checkpoint_dir(tmp_path)
    first = ckpt.write_checkpoint(folder, 1, state(1.0), cum_steps=1)
    ckpt.write_checkpoint(folder, 2, state(2.0), cum_steps=2)
    assert latest_value(tmp_path) == 2.0 and latest_value(folder) == 2.0
    assert latest_value(first.path) == 1.0 and latest_value(first.manifest) == 1.0


def test_prune_keeps_the_newest_n(tmp_path):
    for itr in range(5):
        ckpt.write_checkpoint(tmp_path, itr, state(float(itr)), cum_steps=itr)
        ckpt.prune_checkpoints(tmp_path, keep_last=3)
    assert [i.itr for i in ckpt.list_checkpoints(tmp_path)] == [2, 3, 4]
    assert len(list(tmp_path.iterdir())) == 6


def test_the_policy_is_due_every_n_iterations_or_log_intervals_and_refuses_bad_values():
    assert [i for i in range(10) if CheckpointPolicy(every_itrs=3).due(i, log_interval_itrs=2)] == [2, 5, 8]
    assert [i for i in range(10) if CheckpointPolicy(every_logs=2).due(i, log_interval_itrs=2)] == [3, 7]
    for bad in (dict(every_itrs=0), dict(every_logs=-1), dict(keep_last=0), dict(keep_last=True)):
        with pytest.raises(ValueError, match="positive integer"):
            CheckpointPolicy(**bad)


def test_rng_states_come_back():
    import random

    import numpy as np

    saved = ckpt.capture_rng_state()
    first = (random.random(), np.random.random(), torch.rand(1).item())
    ckpt.restore_rng_state(saved)
    assert (random.random(), np.random.random(), torch.rand(1).item()) == first


def test_progress_csv_continues_after_its_header_and_rewinds_to_a_saved_state(tmp_path):
    from rlrun.utils.logging.tabular import CsvOutput

    path = tmp_path / "progress.csv"
    out = CsvOutput(str(path))
    out.write_row(dict(a=1, b=2.5))
    saved = out.state()
    out.write_row(dict(a=2, b=3.5))
    out.close()
    resumed = CsvOutput(str(path), append=True)
    assert resumed.columns == ["a", "b"]
    assert resumed.rewind(saved)
    resumed.write_row(dict(b=9.0, a=3))
    resumed.close()
    assert path.read_text().splitlines() == ["a,b", "1,2.5", "3,9.0"]
    longer = dict(saved, size=saved["size"] + 1000)
    assert not CsvOutput(str(path), append=True).rewind(longer)  # another file: left as it is
    cut = CsvOutput(str(tmp_path / "cut.csv"))
    cut._file.write(b"a,")  # a header cut short by a crash
    cut.close()
    again = CsvOutput(str(tmp_path / "cut.csv"), append=True)
    again.write_row(dict(a=1))
    again.close()
    assert (tmp_path / "cut.csv").read_text().splitlines() == ["a", "1"]
