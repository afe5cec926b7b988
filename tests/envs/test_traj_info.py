"""TrajInfo: per-trajectory statistics that collectors fill step by step."""

from __future__ import annotations

import pickle

import pytest

from rlrun.envs.traj_info import BoundTrajInfoCls, TrajInfo


def play(traj_info: TrajInfo, rewards) -> TrajInfo:
    for r in rewards:
        traj_info.step(None, None, r, False, None, None)
    return traj_info


def test_step_accumulates_length_return_nonzero_rewards_and_discounted_return():
    info = play(TrajInfo(discount=0.5), [1.0, 0.0, 4.0])

    assert info.Length == 3 and info.Return == 5.0 and info.NonzeroRewards == 2
    assert info.DiscountedReturn == pytest.approx(1.0 + 0.5**2 * 4.0)


def test_default_discount_is_one():
    assert play(TrajInfo(), [1.0, 2.0]).DiscountedReturn == 3.0


def test_terminate_returns_the_record_and_loggable_skips_private_keys():
    info = play(TrajInfo(discount=0.9), [1.0])

    finished = info.terminate(None)

    assert finished is info
    assert finished.loggable() == {"Length": 1.0, "Return": 1.0, "NonzeroRewards": 1.0, "DiscountedReturn": 1.0}


def test_copy_and_pickle_keep_the_counters():
    info = play(TrajInfo(discount=0.5), [2.0, 2.0])

    copied = info.copy()
    loaded = pickle.loads(pickle.dumps(info))
    copied.step(None, None, 2.0, False, None, None)

    assert type(copied) is TrajInfo and copied.Length == 3 and info.Length == 2
    assert copied.DiscountedReturn == pytest.approx(2.0 + 1.0 + 0.5)
    assert loaded == info and loaded.loggable() == info.loggable()


def test_subclass_records_more_through_step():
    class LivesTrajInfo(TrajInfo):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.LivesLost = 0

        def step(self, observation, action, reward, done, agent_info, env_info):
            super().step(observation, action, reward, done, agent_info, env_info)
            self.LivesLost += env_info

    info = LivesTrajInfo(discount=0.99)
    info.step(None, None, 1.0, False, None, 1)

    assert info.LivesLost == 1 and info.Length == 1 and "LivesLost" in info.loggable()


def test_a_bound_class_builds_with_the_runs_keywords_and_reads_as_the_class():
    bound = BoundTrajInfoCls(TrajInfo, dict(discount=0.5))
    info = bound()
    assert type(info) is TrajInfo and info._discount == 0.5
    assert bound(discount=0.25)._discount == 0.25  # a keyword in the call wins
    assert isinstance(info, bound) and issubclass(TrajInfo, bound) and bound.__name__ == "TrajInfo"
    assert BoundTrajInfoCls(bound, dict(extra=1)).traj_info_kwargs == dict(discount=0.5, extra=1)
    assert pickle.loads(pickle.dumps(info)) == info  # the instance is of the plain class
    assert pickle.loads(pickle.dumps(bound))().DiscountedReturn == 0.0


def test_a_bound_class_names_the_fix_when_a_subclass_refuses_the_keywords():
    class Strict(TrajInfo):
        def __init__(self):
            super().__init__()

    with pytest.raises(TypeError, match=r"define __init__\(self, \*\*kwargs\)"):
        BoundTrajInfoCls(Strict, dict(discount=0.5))()
