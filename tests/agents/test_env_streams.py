"""Per-env random streams: an env's actions depend on (seed, env rank, step), not on its batch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.agents.pg.gaussian import GaussianPgAgent
from rlrun.envs.gym import make

SEED, T = 17, 40


def observations(rank: int, shape: tuple[int, ...]) -> np.ndarray:
    """A fixed ``[T, *shape]`` observation sequence for env ``rank``, the same in every batch."""
    return np.random.default_rng(1000 + rank).normal(size=(T, *shape)).astype(np.float32)


def run(agent, ranks, env_spaces, seed=SEED, steps=T, mode="sample", itr=0):
    """Seed streams for ``ranks``, step ``steps`` times; return ``{rank: (actions, agent_infos)}``."""
    agent.seed_env_streams(seed, ranks, eval_env_ranks=ranks)
    getattr(agent, f"{mode}_mode")(itr)
    return step_ranks(agent, ranks, env_spaces, steps)


def step_ranks(agent, ranks, env_spaces, steps=T, start=0):
    obs = {r: observations(r, env_spaces.observation.shape) for r in ranks}
    null_action = np.asarray(env_spaces.action.null_value())
    prev_action = torch.as_tensor(np.stack([null_action] * len(ranks)))
    prev_reward = torch.zeros(len(ranks))
    actions, infos = [], []
    for t in range(start, start + steps):
        step = agent.step(torch.as_tensor(np.stack([obs[r][t] for r in ranks])), prev_action, prev_reward)
        actions.append(step.action.clone())
        infos.append(step.agent_info)
    actions = torch.stack(actions)
    return {r: (actions[:, b], [info[b] for info in infos]) for b, r in enumerate(ranks)}


def leaves(info) -> list[torch.Tensor]:
    """The tensors of a (nested) agent_info namedarraytuple."""
    return [info] if isinstance(info, torch.Tensor) else [leaf for field in info for leaf in leaves(field)]


def initialized(AgentCls, env, **kwargs):
    torch.manual_seed(0)
    agent = AgentCls(**kwargs)
    agent.initialize(env.spaces, global_B=8, env_ranks=list(range(8)))
    return agent


def assert_same_env_across_batches(agent, env_spaces, rank=2, exact=True):
    alone = run(agent, [rank], env_spaces)[rank]
    for ranks in ([0, 1, 2, 3], [7, 6, 5, 4, 3, 2, 1, 0]):
        in_batch = run(agent, ranks, env_spaces)[rank]
        if exact:
            assert torch.equal(alone[0], in_batch[0]), f"actions of env {rank} changed in batch {ranks}"
        else:
            torch.testing.assert_close(alone[0], in_batch[0], atol=1e-5, rtol=1e-5)
        for a, b in zip(alone[1], in_batch[1]):
            torch.testing.assert_close(leaves(a), leaves(b), atol=1e-5, rtol=1e-5)


def test_categorical_agent_gives_an_env_the_same_actions_in_batches_of_1_4_and_8(cartpole):
    agent = initialized(CategoricalPgAgent, cartpole)
    assert_same_env_across_batches(agent, cartpole.spaces)
    actions = run(agent, [2], cartpole.spaces)[2][0]
    assert 0 < actions.float().mean() < 1  # the policy really samples


def test_gaussian_agent_gives_an_env_the_same_actions_in_batches_of_1_4_and_8(pendulum):
    agent = initialized(GaussianPgAgent, pendulum)
    assert_same_env_across_batches(agent, pendulum.spaces, exact=False)


def test_epsilon_greedy_dqn_agent_gives_an_env_the_same_actions_in_batches_of_1_4_and_8(cartpole):
    agent = initialized(DqnAgent, cartpole, eps_init=0.5, eps_final=0.5)
    assert_same_env_across_batches(agent, cartpole.spaces)


def test_per_env_epsilons_follow_env_ranks_across_batches(cartpole):
    """With log-spaced epsilons each env explores at its own rate; the rate and the coin follow the rank."""
    kwargs = dict(eps_init=1.0, eps_final=0.9, eps_final_min=0.02, eps_itr_min=0, eps_itr_max=1)
    results = {}
    for ranks in ([5], list(range(8))):
        torch.manual_seed(0)
        agent = DqnAgent(**kwargs)
        agent.initialize(cartpole.spaces, global_B=8, env_ranks=ranks)
        results[len(ranks)] = run(agent, ranks, cartpole.spaces, itr=5)
    assert torch.equal(results[1][5][0], results[8][5][0])

    def n_not_greedy(rank):
        actions, infos = results[8][rank]
        return int((actions != torch.stack([info.q.argmax(-1) for info in infos])).sum())

    assert n_not_greedy(0) < n_not_greedy(7)  # epsilon 0.02 against 0.9


def test_different_env_ranks_get_different_actions_for_the_same_observations(cartpole):
    agent = initialized(CategoricalPgAgent, cartpole)
    agent.seed_env_streams(SEED, [0, 1])
    agent.sample_mode(0)
    obs = torch.as_tensor(observations(0, (4,)))
    actions = torch.stack(
        [agent.step(obs[t].expand(2, 4), torch.zeros(2, dtype=torch.long), torch.zeros(2)).action for t in range(T)]
    )
    assert not torch.equal(actions[:, 0], actions[:, 1])


def test_different_seeds_give_different_actions(cartpole):
    agent = initialized(CategoricalPgAgent, cartpole)
    assert not torch.equal(
        run(agent, [0], cartpole.spaces, seed=1)[0][0], run(agent, [0], cartpole.spaces, seed=2)[0][0]
    )


def test_streams_do_not_touch_torch_global_rng(cartpole):
    agent = initialized(CategoricalPgAgent, cartpole)
    state = torch.get_rng_state()
    run(agent, [0, 1, 2], cartpole.spaces)
    assert torch.equal(torch.get_rng_state(), state)


def test_evaluation_does_not_advance_the_sampling_streams(cartpole):
    agent = initialized(CategoricalPgAgent, cartpole)
    ranks = [0, 1]
    straight = run(agent, ranks, cartpole.spaces, steps=20)
    agent.seed_env_streams(SEED, ranks, eval_env_ranks=[8, 9])
    agent.sample_mode(0)
    first = step_ranks(agent, ranks, cartpole.spaces, steps=10)
    agent.eval_mode(1)
    step_ranks(agent, [8, 9], cartpole.spaces, steps=7)
    agent.sample_mode(1)
    second = step_ranks(agent, ranks, cartpole.spaces, steps=10, start=10)
    for r in ranks:
        assert torch.equal(straight[r][0], torch.cat([first[r][0], second[r][0]]))


def test_eval_streams_restart_at_each_eval_mode_keyed_by_itr(cartpole):
    agent = initialized(CategoricalPgAgent, cartpole)
    agent.seed_env_streams(SEED, [0], eval_env_ranks=[8, 9])
    agent.eval_mode(3)
    first = step_ranks(agent, [8, 9], cartpole.spaces)
    agent.eval_mode(3)
    again = step_ranks(agent, [8, 9], cartpole.spaces)
    agent.eval_mode(4)
    later = step_ranks(agent, [8, 9], cartpole.spaces)
    assert torch.equal(first[8][0], again[8][0])
    assert not torch.equal(first[8][0], later[8][0])
    agent.seed_env_streams(SEED, [0], eval_env_ranks=[9])
    agent.eval_mode(3)
    assert torch.equal(step_ranks(agent, [9], cartpole.spaces)[9][0], first[9][0])


def test_unseeded_and_cleared_agents_and_train_mode_sample_from_torch_global_rng(cartpole):
    agent = initialized(CategoricalPgAgent, cartpole)
    agent.sample_mode(0)
    torch.manual_seed(3)
    first = step_ranks(agent, [0, 1], cartpole.spaces)
    torch.manual_seed(3)
    assert torch.equal(step_ranks(agent, [0, 1], cartpole.spaces)[0][0], first[0][0])

    agent.seed_env_streams(SEED, [0, 1])
    agent.train_mode(0)
    state = torch.get_rng_state()
    step_ranks(agent, [0, 1, 2], cartpole.spaces, steps=1)  # any batch size: no streams in train mode
    assert not torch.equal(torch.get_rng_state(), state)

    agent.clear_env_streams()
    agent.sample_mode(0)
    state = torch.get_rng_state()
    step_ranks(agent, [0, 1, 2], cartpole.spaces, steps=1)
    assert not torch.equal(torch.get_rng_state(), state)


def test_a_batch_that_does_not_match_the_streams_is_refused(cartpole):
    agent = initialized(CategoricalPgAgent, cartpole)
    agent.seed_env_streams(SEED, [0, 1, 2])
    agent.sample_mode(0)
    with pytest.raises(ValueError, match="one stream per env.*clear_env_streams"):
        step_ranks(agent, [0, 1], cartpole.spaces, steps=1)


def test_one_stream_serves_an_unbatched_observation(cartpole):
    agent = initialized(CategoricalPgAgent, cartpole)
    batched = run(agent, [4], cartpole.spaces, steps=5)[4][0]
    agent.seed_env_streams(SEED, [4])
    obs = torch.as_tensor(observations(4, (4,)))
    actions = [agent.step(obs[t], torch.tensor(0), torch.tensor(0.0)).action for t in range(5)]
    assert actions[0].shape == ()
    assert torch.equal(torch.stack(actions), batched)


def test_initialize_forgets_streams_of_a_previous_run(cartpole):
    agent = initialized(CategoricalPgAgent, cartpole)
    agent.seed_env_streams(SEED, [0, 1, 2])
    agent.initialize(cartpole.spaces)
    agent.sample_mode(0)
    step_ranks(agent, [0], cartpole.spaces, steps=1)  # one row: accepted, as the streams are gone


def test_categorical_greedy_eval_takes_the_most_probable_action_only_in_eval_mode():
    env = make(id="CartPole-v1")
    agent = CategoricalPgAgent(greedy_eval=True)
    agent.initialize(env.spaces)
    observation = torch.randn(64, 4)
    prev_action, prev_reward = torch.zeros(64, dtype=torch.long), torch.zeros(64)
    agent.eval_mode(0)
    step = agent.step(observation, prev_action, prev_reward)
    assert torch.equal(step.action, step.agent_info.dist_info.prob.argmax(-1))
    agent.sample_mode(0)  # a fresh policy is near uniform: sampling disagrees with argmax somewhere
    sampled = agent.step(observation, prev_action, prev_reward)
    assert not torch.equal(sampled.action, sampled.agent_info.dist_info.prob.argmax(-1))
