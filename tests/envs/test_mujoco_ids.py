"""rlpyt's MuJoCo ids (v2-v4) run as Gymnasium's v5, with one warning per id."""

from __future__ import annotations

import warnings

import pytest

from rlrun.envs import mujoco_ids
from rlrun.envs.mujoco_ids import current_mujoco_id


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(mujoco_ids, "_warned", set())


@pytest.mark.parametrize("old", ["Hopper-v3", "HalfCheetah-v2", "Walker2d-v4", "Ant-v3", "Humanoid-v2"])
def test_old_ids_map_to_v5_with_a_warning_naming_both(old):
    new = old.rsplit("-", 1)[0] + "-v5"
    with pytest.warns(UserWarning, match=f"{old} runs as {new}"):
        assert current_mujoco_id(old) == new


def test_each_old_id_warns_once_per_process():
    with pytest.warns(UserWarning):
        current_mujoco_id("Hopper-v3")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert current_mujoco_id("Hopper-v3") == "Hopper-v5"


@pytest.mark.parametrize(
    "other", ["Hopper-v5", "Pendulum-v1", "CartPole-v1", "ALE/Pong-v5", "MyHopper-v3", "Hopper-v1"]
)
def test_other_ids_pass_unchanged_and_silently(other):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert current_mujoco_id(other) == other


def test_make_builds_the_v5_env_for_rlpyts_hopper_id(tmp_path, monkeypatch):
    pytest.importorskip("mujoco", reason="MuJoCo envs need the mujoco package (pip install rlrun[mujoco])")
    from rlrun.envs.gym import make

    monkeypatch.chdir(tmp_path)  # MuJoCo may write MUJOCO_LOG.TXT here
    with pytest.warns(UserWarning, match="Hopper-v3 runs as Hopper-v5"):
        env = make("Hopper-v3")
    assert env.env.spec.id == "Hopper-v5"
    assert env.spaces.observation.shape == (11,) and env.spaces.action.shape == (3,)
