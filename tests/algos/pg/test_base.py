"""PolicyGradientAlgo.process_returns on hand-built batches."""

import pytest
import torch

from rlrun.agents.pg.base import AgentInfo
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import make
from rlrun.samplers.collections import AgentSamples, AgentSamplesBsv, BatchSpec, EnvSamples, Samples
from rlrun.utils.collections import namedarraytuple

EnvInfo = namedarraytuple("EnvInfo", ["timeout"])
NoInfo = namedarraytuple("EnvInfo", [])


def column(*xs, dtype=torch.float32):
    return torch.tensor(xs, dtype=dtype).unsqueeze(1)  # [T, 1]


def batch(timeout=True):
    # discount .5, lambda .5; episode ends at t=1 (by time limit when timeout=True).
    done = column(0, 1, 0, dtype=torch.bool)
    env_info = EnvInfo(timeout=done.clone()) if timeout else NoInfo()
    return Samples(
        agent=AgentSamplesBsv(
            action=None,
            prev_action=None,
            agent_info=AgentInfo(dist_info=None, value=column(0.5, 1, 1.5)),
            bootstrap_value=torch.tensor([[2.0]]),
        ),
        env=EnvSamples(None, column(1, 2, 3), None, done, env_info),
    )


def algo(mid_batch_reset=True, **kwargs):
    a2c = A2C(discount=0.5, gae_lambda=0.5, **kwargs)
    agent = CategoricalPgAgent()
    agent.initialize(make(id="CartPole-v1").spaces)
    a2c.initialize(agent, n_itr=1, batch_spec=BatchSpec(3, 1), mid_batch_reset=mid_batch_reset)
    return a2c


def test_process_returns_bootstraps_through_timeouts():
    # Hand values from tests/algos/test_utils.py: cut at t=1, A = 1.375, 1.5, 2.5; R = A + V.
    return_, advantage, valid = algo().process_returns(batch(timeout=True))
    torch.testing.assert_close(advantage[:, 0], torch.tensor([1.375, 1.5, 2.5]))
    torch.testing.assert_close(return_[:, 0], torch.tensor([1.875, 2.5, 4.0]))
    assert valid is None


def test_process_returns_treats_done_as_terminal_without_timeout_field():
    # Terminal at t=1: A1 = 2 - 1 = 1, A0 = (1 + .5*1 - .5) + .25*1 = 1.25.
    _, advantage, _ = algo().process_returns(batch(timeout=False))
    torch.testing.assert_close(advantage[:, 0], torch.tensor([1.25, 1.0, 2.5]))


def test_process_returns_masks_steps_after_done_without_mid_batch_reset():
    _, _, valid = algo(mid_batch_reset=False).process_returns(batch())
    torch.testing.assert_close(valid[:, 0], torch.tensor([1.0, 1.0, 0.0]))


def test_normalize_advantage_uses_valid_steps_only():
    # Valid advantages 1.375 and 1.5: mean 1.4375, std 0.0625, so -1, 1, and (2.5 - 1.4375) / 0.0625 = 17.
    _, advantage, _ = algo(mid_batch_reset=False, normalize_advantage=True).process_returns(batch())
    torch.testing.assert_close(advantage[:, 0], torch.tensor([-1.0, 1.0, 17.0]))


@pytest.mark.parametrize("timeout", [True, False])
def test_process_returns_in_numpy_on_the_cpu_matches_the_torch_path(timeout):
    # CPU tensors without grad go through numpy views; a value tensor that requires grad keeps the torch
    # path. Random [T, B] batches with dones and time-limit cuts: the two give the same numbers.
    gen = torch.Generator().manual_seed(int(timeout))
    T, B = 16, 8
    done = torch.rand(T, B, generator=gen) < 0.2
    env_info = EnvInfo(timeout=done & (torch.rand(T, B, generator=gen) < 0.5)) if timeout else NoInfo()
    value = torch.randn(T, B, generator=gen)

    def samples(value):
        return Samples(
            agent=AgentSamplesBsv(
                action=None,
                prev_action=None,
                agent_info=AgentInfo(dist_info=None, value=value),
                bootstrap_value=torch.randn(1, B, generator=torch.Generator().manual_seed(5)),
            ),
            env=EnvSamples(None, torch.randn(T, B, generator=torch.Generator().manual_seed(6)), None, done, env_info),
        )

    a2c = A2C(discount=0.97, gae_lambda=0.9)
    agent = CategoricalPgAgent()
    agent.initialize(make(id="CartPole-v1").spaces)
    a2c.initialize(agent, n_itr=1, batch_spec=BatchSpec(T, B))
    return_np, advantage_np, _ = a2c.process_returns(samples(value))
    return_pt, advantage_pt, _ = a2c.process_returns(samples(value.clone().requires_grad_()))
    assert advantage_pt.requires_grad and not advantage_np.requires_grad  # each path was taken
    assert isinstance(return_np, torch.Tensor) and return_np.dtype == torch.float32 and return_np.shape == (T, B)
    torch.testing.assert_close(advantage_np, advantage_pt.detach(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(return_np, return_pt.detach(), rtol=1e-6, atol=1e-6)


def test_missing_bootstrap_value_names_the_sampler_setting():
    samples = batch()
    samples = Samples(AgentSamples(None, None, samples.agent.agent_info), samples.env)
    with pytest.raises(ValueError, match="bootstrap_value=algo.bootstrap_value"):
        algo().process_returns(samples)


def test_bad_settings_are_refused_at_construction():
    with pytest.raises(ValueError, match="gae_lambda"):
        A2C(gae_lambda=1.5)
    with pytest.raises(ValueError, match="clip_grad_norm"):
        A2C(clip_grad_norm=0)


def test_real_time_limited_batch_bootstraps_from_value_at_each_cut(pg_run):
    # CartPole cut after 5 steps (it cannot fail that fast): every done is a timeout, and with
    # gae_lambda=1 the return there is reward + discount * value.
    a2c = A2C(discount=0.9)
    _, _, samples = pg_run(a2c, T=12, B=2, env_kwargs=dict(id="CartPole-v1", max_episode_steps=5))
    timeout = samples.env.env_info.timeout
    assert timeout.sum() >= 4 and torch.equal(timeout, samples.env.done)
    return_, _, _ = a2c.process_returns(samples)
    value = samples.agent.agent_info.value
    torch.testing.assert_close(return_[timeout], 1 + 0.9 * value[timeout])


def test_entropy_joins_the_graph_only_for_an_entropy_bonus_and_perplexity_reuses_it():
    from rlrun.algos.pg.base import entropy_and_perplexity
    from rlrun.distributions.categorical import Categorical, DistInfo

    logits = torch.randn(6, 3, requires_grad=True)
    info = DistInfo(prob=torch.softmax(logits, -1))
    dist = Categorical(dim=3)
    valid = torch.tensor([1.0, 1, 1, 0, 1, 0])
    for with_grad in (False, True):
        entropy, perplexity = entropy_and_perplexity(dist, info, valid, with_grad)
        assert entropy.requires_grad == with_grad and not perplexity.requires_grad
        torch.testing.assert_close(entropy, dist.mean_entropy(info, valid))
        torch.testing.assert_close(perplexity, dist.mean_perplexity(info, valid).detach())

    class Twice(Categorical):  # a distribution with its own perplexity is asked for it
        def perplexity(self, dist_info):
            return 2 * torch.exp(self.entropy(dist_info))

    _, perplexity = entropy_and_perplexity(Twice(dim=3), info, None, False)
    torch.testing.assert_close(perplexity, 2 * dist.mean_perplexity(info).detach())
