"""write_env_infos: one write per time step when every env returned the same record, per env otherwise."""

from __future__ import annotations

import numpy as np

from rlrun.envs.gym import make
from rlrun.samplers.collectors import write_env_infos
from rlrun.utils.buffer import buffer_from_example
from rlrun.utils.collections import NamedArrayTuple, namedtuple

Info = namedtuple("Info", ["timeout", "distance"])


def _buffer(T=3, B=4):
    return buffer_from_example(Info(False, 0.0), (T, B))


def test_a_shared_record_fills_the_row_with_one_write(monkeypatch):
    dest, record = _buffer(), Info(True, 2.5)
    writes = []
    original = NamedArrayTuple.__setitem__
    monkeypatch.setattr(NamedArrayTuple, "__setitem__", lambda s, loc, v: (writes.append(loc), original(s, loc, v)))
    write_env_infos(dest, 1, [record] * 4)
    assert writes == [1]
    assert dest.timeout[1].all() and (dest.distance[1] == 2.5).all() and not dest.timeout[[0, 2]].any()


def test_different_records_are_written_per_env_and_none_is_skipped():
    dest = _buffer()
    dest.distance[2] = -1.0
    write_env_infos(dest, 2, [Info(False, 1.0), None, Info(True, 3.0), Info(False, 4.0)])
    assert dest.distance[2].tolist() == [1.0, -1.0, 3.0, 4.0]
    assert dest.timeout[2].tolist() == [False, False, True, False]
    write_env_infos(dest, 0, [None] * 4)  # no env stepped: nothing written
    assert (dest.distance[0] == 0).all()


def test_gym_wrappers_share_their_records_for_empty_infos():
    """What makes the one-write path the common one: every CartPole wrapper returns the same records."""
    envs = [make("CartPole-v1") for _ in range(3)]
    for env in envs:
        env.reset()
    infos = [env.step(np.int64(0)).env_info for env in envs]
    assert infos[0] is infos[1] is infos[2] and infos[0].timeout is False
