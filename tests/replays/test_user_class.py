"""A user's ReplayBufferCls is checked once, the same way for DQN and the qpg algorithms."""

from __future__ import annotations

import pytest

from rlrun.replays.base import BaseReplayBuffer
from rlrun.replays.non_sequence.uniform import AsyncUniformReplayBuffer, UniformReplayBuffer
from rlrun.replays.user_class import replay_class_kwargs, takes_keyword


class PlainReplay:  # rlpyt-style: no BaseReplayBuffer base, so no async_, and no mid_batch_reset keyword
    def __init__(self, example: object, size: int, B: int) -> None:
        self.size = size


class KeywordReplay(BaseReplayBuffer):
    def __init__(self, **kwargs: object) -> None:
        self.kwargs = kwargs


def test_a_class_that_fits_the_run_gets_the_keywords_it_needs():
    assert replay_class_kwargs(UniformReplayBuffer, "DQN") == {}
    assert replay_class_kwargs(UniformReplayBuffer, "SAC", mid_batch_reset=False) == {"mid_batch_reset": False}
    assert replay_class_kwargs(AsyncUniformReplayBuffer, "DQN", async_=True) == {}
    assert replay_class_kwargs(KeywordReplay, "TD3", mid_batch_reset=False) == {"mid_batch_reset": False}


@pytest.mark.parametrize("ReplayCls", [PlainReplay, UniformReplayBuffer])
def test_an_async_run_refuses_a_replay_that_does_not_say_it_is_async(ReplayCls):
    with pytest.raises(TypeError, match=rf"ReplayBufferCls={ReplayCls.__name__} is not an asynchronous.*R2D1"):
        replay_class_kwargs(ReplayCls, "R2D1", async_=True)


def test_a_wait_reset_sampler_refuses_a_replay_without_the_mid_batch_reset_keyword():
    with pytest.raises(TypeError, match="PlainReplay takes no mid_batch_reset keyword, which DDPG passes"):
        replay_class_kwargs(PlainReplay, "DDPG", mid_batch_reset=False)
    assert replay_class_kwargs(PlainReplay, "DDPG") == {}  # resets mid-batch: nothing to pass


def test_takes_keyword_reads_signatures_and_lets_unreadable_ones_through():
    assert takes_keyword(PlainReplay, "size") and not takes_keyword(PlainReplay, "mid_batch_reset")
    assert takes_keyword(KeywordReplay, "anything")
