"""The Checkpointer on its own: given a folder, with no logger context open."""

from __future__ import annotations

import pytest
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.runners.checkpoint import FORMAT_VERSION, CheckpointError, CheckpointPolicy
from rlrun.runners.checkpointer import Checkpointer
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging import logger


@pytest.fixture(autouse=True)
def no_logger_context():
    assert logger.get_snapshot_dir() is None  # the checkpointer must not need one


def state(itr: int) -> dict:
    return dict(format=FORMAT_VERSION, itr=itr, weights=torch.full((3,), float(itr)))


def test_saved_checkpoints_load_back_and_only_the_newest_keep_last_stay(tmp_path):
    checkpointer = Checkpointer(tmp_path, CheckpointPolicy(keep_last=2))
    for itr in range(4):
        info = checkpointer.save(itr, state(itr), cum_steps=10 * (itr + 1))
        assert info.path == checkpointer.path(itr) == tmp_path / "checkpoints" / f"itr_{itr:09d}.ckpt"
    assert sorted(p.name for p in (tmp_path / "checkpoints").glob("*.ckpt")) == [
        "itr_000000002.ckpt",
        "itr_000000003.ckpt",
    ]
    assert checkpointer.last_saved_itr == 3
    found = Checkpointer(tmp_path).resume()
    assert found is not None
    info, loaded = found
    assert (info.itr, info.cum_steps) == (3, 40)
    assert torch.equal(loaded["weights"], torch.full((3,), 3.0))


def test_resume_picks_the_newest_usable_checkpoint_and_skips_a_corrupt_one(tmp_path):
    writer = Checkpointer(tmp_path, CheckpointPolicy(keep_last=5))
    for itr in range(3):
        writer.save(itr, state(itr), cum_steps=itr)
    newest = writer.path(2)
    newest.write_bytes(newest.read_bytes()[:-5] + b"xxxxx")  # same size, other bytes
    reader = Checkpointer(tmp_path)
    found = reader.resume()
    assert found is not None and found[0].itr == 1 and found[1]["itr"] == 1
    assert reader.last_saved_itr == 1
    # Another run's folder, its checkpoint folder or one checkpoint file, named explicitly:
    assert Checkpointer(None).resume(tmp_path / "checkpoints")[0].itr == 1
    assert Checkpointer(None).resume(writer.path(0))[0].itr == 0
    assert Checkpointer(None).resume(tmp_path / "elsewhere") is None


def test_checkpoints_are_due_as_the_policy_says_and_always_after_the_last_iteration(tmp_path):
    every_2 = Checkpointer(tmp_path, CheckpointPolicy(every_itrs=2))
    assert [itr for itr in range(7) if every_2.due(itr, log_interval_itrs=3, last_itr=6)] == [1, 3, 5, 6]
    every_log = Checkpointer(tmp_path, CheckpointPolicy())
    assert [itr for itr in range(7) if every_log.due(itr, log_interval_itrs=3, last_itr=6)] == [2, 5, 6]
    assert not any(Checkpointer(tmp_path).due(itr, 1, 6) for itr in range(7))  # no policy: none


def test_a_checkpointer_without_a_folder_refuses_checkpoints_and_writes_no_snapshot():
    with pytest.raises(ValueError, match="run_dir"):
        Checkpointer(None, CheckpointPolicy())
    with pytest.raises(ValueError, match="run folder"):
        Checkpointer(None).resume()
    assert not Checkpointer(None, snapshot_mode="last").wants_snapshot(0)
    assert Checkpointer(None, snapshot_mode="last").save_snapshot(0, {}) == []


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("none", []),
        ("last", ["params.pkl"]),
        ("all", ["itr_0.pkl", "itr_1.pkl", "itr_2.pkl", "itr_3.pkl"]),
        ("gap", ["itr_0.pkl", "itr_1.pkl", "itr_3.pkl"]),
        ("last+gap", ["itr_0.pkl", "itr_1.pkl", "itr_3.pkl", "params.pkl"]),
    ],
)
def test_snapshots_follow_the_snapshot_mode_and_gap(tmp_path, mode, expected):
    checkpointer = Checkpointer(tmp_path, snapshot_mode=mode, snapshot_gap=2)
    for itr in range(4):
        assert checkpointer.wants_snapshot(itr) == bool(checkpointer.save_snapshot(itr, dict(itr=itr)))
    assert sorted(p.name for p in tmp_path.iterdir()) == expected
    if "params.pkl" in expected:
        assert torch.load(tmp_path / "params.pkl", weights_only=True) == dict(itr=3)


def test_unknown_snapshot_mode_or_gap_is_refused(tmp_path):
    with pytest.raises(ValueError, match="snapshot_mode"):
        Checkpointer(tmp_path, snapshot_mode="every")
    with pytest.raises(ValueError, match="snapshot_gap"):
        Checkpointer(tmp_path, snapshot_mode="gap", snapshot_gap=0)


def test_a_run_state_restores_the_agent_and_refuses_another_batch_size(tmp_path):
    sampler = SerialSampler(make, dict(id="CartPole-v1"), batch_T=4, batch_B=2, max_decorrelation_steps=0)
    agent = CategoricalPgAgent()
    runner = MinibatchRl(algo=A2C(), agent=agent, sampler=sampler, n_steps=8, seed=0)
    runner.startup()  # builds the parts; no logger context, so no checkpoints of its own
    try:
        parts = (agent, runner.algo, sampler)
        checkpointer = Checkpointer(tmp_path, CheckpointPolicy())
        saved = {k: v.clone() for k, v in agent.state_dict().items()}
        run_state = checkpointer.run_state(0, 8, 8, parts, runner={"mine": 1}, log_files={})
        checkpointer.save(0, run_state, cum_steps=8)
        with torch.no_grad():
            for p in agent.model.parameters():
                p.add_(1.0)
        info, loaded = Checkpointer(tmp_path).restore(None, 8, parts)
        assert info.itr == 0 and loaded["runner"] == {"mine": 1}
        for key, value in agent.state_dict().items():
            assert torch.equal(value, saved[key]), key
        with pytest.raises(CheckpointError, match="8 steps per iteration, this one takes 16"):
            Checkpointer(tmp_path).restore(None, 16, parts)
    finally:
        runner.shutdown()
