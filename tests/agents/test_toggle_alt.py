"""toggle_alt / get_alt: an alternating recurrent agent keeps one recurrent state per env group.

rlpyt's alternating action server stepped group A, called ``agent.toggle_alt()``, stepped group B and
toggled back; a sampler written that way must see each group continue its own recurrent state.
"""

from __future__ import annotations

import pytest
import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.dqn.r2d1_agent import R2d1AlternatingAgent
from rlrun.agents.pg.categorical import AlternatingRecurrentCategoricalPgAgent, RecurrentCategoricalPgAgent
from rlrun.envs.gym import make

pytestmark = pytest.mark.timeout(60)

B, T = 2, 4


def _inputs(seed: int) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    return [
        (torch.randn(B, 4, generator=g), torch.randint(0, 2, (B,), generator=g), torch.randn(B, generator=g))
        for _ in range(T)
    ]


def _pair() -> tuple[AlternatingRecurrentCategoricalPgAgent, RecurrentCategoricalPgAgent]:
    env = make("CartPole-v1")
    torch.manual_seed(0)
    alt = AlternatingRecurrentCategoricalPgAgent()
    alt.initialize(env.spaces)
    ref = RecurrentCategoricalPgAgent()
    ref.initialize(env.spaces)
    ref.load_state_dict(alt.state_dict())
    alt.sample_mode(0)
    ref.sample_mode(0)
    return alt, ref


def test_each_group_continues_its_own_recurrent_state():
    alt, ref = _pair()
    group_a, group_b = _inputs(1), _inputs(2)
    for t in range(T):
        assert alt.get_alt() == 0
        step_a = alt.step(*group_a[t])
        alt.toggle_alt()
        assert alt.get_alt() == 1
        alt.step(*group_b[t])
        alt.toggle_alt()
        step_ref = ref.step(*group_a[t])  # group A alone, never interleaved
        torch.testing.assert_close(step_a.agent_info.value, step_ref.agent_info.value)
        torch.testing.assert_close(step_a.agent_info.dist_info.prob, step_ref.agent_info.dist_info.prob)


def test_without_toggling_the_groups_would_share_one_state():
    # The check above can fail: interleaving group B without toggle_alt changes group A's outputs.
    alt, ref = _pair()
    group_a, group_b = _inputs(1), _inputs(2)
    values, ref_values = [], []
    for t in range(T):
        values.append(alt.step(*group_a[t]).agent_info.value)
        alt.step(*group_b[t])
        ref_values.append(ref.step(*group_a[t]).agent_info.value)
    assert not torch.allclose(torch.stack(values[1:]), torch.stack(ref_values[1:]))


def test_mode_changes_return_to_group_0_and_sampling_resumes_both_groups():
    alt, ref = _pair()
    group_a, group_b = _inputs(1), _inputs(2)
    alt.step(*group_a[0])
    alt.toggle_alt()
    alt.step(*group_b[0])  # group B served when training starts
    ref.step(*group_a[0])
    alt.train_mode(1)
    assert alt.get_alt() == 0
    alt.sample_mode(1)
    ref.train_mode(1)
    ref.sample_mode(1)
    torch.testing.assert_close(alt.step(*group_a[1]).agent_info.value, ref.step(*group_a[1]).agent_info.value)
    alt.reset()
    assert alt.get_alt() == 0 and alt.prev_rnn_state is None


def test_r2d1_alternating_agent_keeps_episode_starts_per_group():
    env = make("CartPole-v1")
    agent = R2d1AlternatingAgent()
    agent.initialize(env.spaces)
    agent.sample_mode(0)
    obs, act, rew = _inputs(3)[0]
    agent.step(obs, act, rew)
    agent.reset_one(1)  # env 1 of group A starts a new episode
    agent.toggle_alt()
    assert agent.episode_starts(B) is not None and agent.episode_starts(B).all()  # group B: fresh, all start
    agent.step(obs, act, rew)
    agent.toggle_alt()
    starts = agent.episode_starts(B)
    assert starts is not None and starts.tolist() == [False, True]


def test_non_alternating_agents_ignore_toggle_alt():
    env = make("CartPole-v1")
    recurrent = RecurrentCategoricalPgAgent()
    recurrent.initialize(env.spaces)
    recurrent.sample_mode(0)
    recurrent.step(*_inputs(1)[0])
    state = recurrent.prev_rnn_state
    recurrent.toggle_alt()
    assert recurrent.get_alt() == 0 and recurrent.prev_rnn_state is state
    dqn = DqnAgent()
    dqn.initialize(env.spaces)
    dqn.toggle_alt()  # rlpyt's samplers may call it on any agent
