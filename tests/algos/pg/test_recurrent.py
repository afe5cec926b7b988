"""A2C and PPO with recurrent agents on real CartPole (and Pendulum) batches.

The central check: the algorithms' forward pass over a whole batch, started from the state the agent
stored at t=0, reproduces the action probabilities and values the agent had while sampling, under
every sampler, across iterations with resets and updates in between.
"""

from __future__ import annotations

import math

import pytest
import torch

from rlrun.agents.base import AgentStep, RecurrentAgentMixin
from rlrun.agents.pg.base import AgentInfo, AgentInfoRnn, rnn_state_from_storage
from rlrun.agents.pg.categorical import RecurrentCategoricalPgAgent, RecurrentCategoricalPgAgentBase
from rlrun.agents.pg.mujoco import MujocoLstmAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.algos.pg.ppo import PPO
from rlrun.distributions.categorical import DistInfo
from rlrun.envs.gym import make
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.collectors import ResetCollector, WaitResetCollector
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.parallel.gpu.alternating_sampler import AlternatingSampler
from rlrun.samplers.parallel.gpu.collectors import GpuResetCollector, GpuWaitResetCollector
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.samplers.serial.sampler import SerialSampler

pytestmark = pytest.mark.timeout(120)

CARTPOLE = dict(id="CartPole-v1")
UNPINNED = dict(workers_cpus=[[0], [0]], set_affinity=False)
SAMPLERS = {
    "serial": (SerialSampler, WaitResetCollector, None),
    "cpu": (CpuSampler, WaitResetCollector, UNPINNED),
    "gpu": (GpuSampler, GpuWaitResetCollector, UNPINNED),
    "alternating": (AlternatingSampler, GpuWaitResetCollector, dict(UNPINNED, alternating=True)),
}


class Run:
    """A sampler and an initialised algorithm for a recurrent agent, stepped as the runner does."""

    def __init__(self, algo, agent, sampler="serial", T=40, B=4, env_kwargs=CARTPOLE, seed=0, **sampler_kwargs) -> None:
        SamplerCls, CollectorCls, affinity = SAMPLERS[sampler]
        torch.manual_seed(seed)
        self.sampler = SamplerCls(
            make,
            env_kwargs,
            batch_T=T,
            batch_B=B,
            CollectorCls=CollectorCls,
            max_decorrelation_steps=0,
            **sampler_kwargs,
        )
        self.algo, self.agent = algo, agent
        examples = self.sampler.initialize(
            agent, affinity=affinity, seed=seed, bootstrap_value=True, traj_info_kwargs=dict(discount=algo.discount)
        )
        algo.initialize(agent, 10, self.sampler.batch_spec, self.sampler.mid_batch_reset, examples)

    def samples(self, itr: int):
        self.agent.sample_mode(itr)
        samples, _ = self.sampler.obtain_samples(itr)
        self.agent.train_mode(itr)
        return samples

    def replay(self, samples):
        """The agent's forward pass over the whole batch from the stored batch-start state, with the
        episode starts it recorded (wait-reset batches start episodes at t=0 only)."""
        init_rnn_state = rnn_state_from_storage(self.algo.initial_rnn_state(samples))
        episode_start = self.algo.episode_start(samples)
        assert not episode_start[1:].any()
        with torch.no_grad():
            return self.agent(*self.algo.agent_inputs(samples), init_rnn_state, episode_start=episode_start)


@pytest.fixture
def runs():
    made: list[Run] = []

    def make_run(*args, **kwargs) -> Run:
        made.append(Run(*args, **kwargs))
        return made[-1]

    yield make_run
    for run in made:
        run.sampler.shutdown()


@pytest.mark.parametrize("sampler", sorted(SAMPLERS))
def test_the_training_forward_reproduces_sampling_from_the_stored_state(runs, sampler):
    run = runs(A2C(), RecurrentCategoricalPgAgent(), sampler=sampler, T=16)
    carried = reset = 0
    was_done = torch.ones(4, dtype=torch.bool)  # the first batch starts from zeros
    for itr in range(4):
        samples = run.samples(itr)
        dist_info, value, _ = run.replay(samples)
        # Every step, fillers after a done included: the agent saw exactly what the batch holds.
        torch.testing.assert_close(dist_info.prob, samples.agent.agent_info.dist_info.prob, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(value, samples.agent.agent_info.value, rtol=1e-4, atol=1e-5)
        # Each env starts from the state it ended the last batch with, or from zeros where it was reset.
        start_norm = samples.agent.agent_info.prev_rnn_state.h[0].flatten(1).abs().sum(1)
        assert torch.equal(start_norm == 0, was_done)
        assert torch.equal(samples.agent.agent_info.episode_start[0], was_done)  # where the model saw zeros
        if itr:
            carried, reset = carried + int((~was_done).sum()), reset + int(was_done.sum())
        was_done = samples.env.done[-1].clone()
        run.algo.optimize_agent(itr, samples)  # new weights sample the next batch
    assert carried and reset  # both happened


@pytest.mark.parametrize("sampler", sorted(SAMPLERS))
def test_evaluation_between_batches_leaves_the_sampling_state_alone(runs, sampler):
    kwargs = dict(eval_n_envs=2, eval_max_steps=2 * 600, eval_max_trajectories=4)
    run = runs(A2C(), RecurrentCategoricalPgAgent(), sampler=sampler, T=16, **kwargs)
    final_state, was_done, carried = None, torch.ones(4, dtype=torch.bool), 0
    for itr in range(4):
        samples = run.samples(itr)
        start = rnn_state_from_storage(samples.agent.agent_info.prev_rnn_state[0])
        if final_state is not None:  # each env goes on from where the last batch left it, unless it was reset
            going_on = ~was_done
            torch.testing.assert_close(start.h[:, going_on], final_state.h[:, going_on], rtol=1e-4, atol=1e-5)
            torch.testing.assert_close(start.c[:, going_on], final_state.c[:, going_on], rtol=1e-4, atol=1e-5)
            carried += int(going_on.sum())
        dist_info, _value, final_state = run.replay(samples)
        torch.testing.assert_close(dist_info.prob, samples.agent.agent_info.dist_info.prob, rtol=1e-4, atol=1e-5)
        was_done = samples.env.done[-1].clone()
        run.algo.optimize_agent(itr, samples)
        run.agent.eval_mode(itr)
        trajs = run.sampler.evaluate_agent(itr)
        assert len(trajs) == 4 and all(t.Length > 0 for t in trajs)
    assert carried


def test_the_gaussian_agents_training_forward_reproduces_sampling(runs):
    agent = MujocoLstmAgent(model_kwargs=dict(hidden_sizes=[16], lstm_size=16))
    run = runs(A2C(), agent, T=30, B=3, env_kwargs=dict(id="Pendulum-v1"))
    for itr in range(2):
        samples = run.samples(itr)
        dist_info, value, _ = run.replay(samples)
        stored = samples.agent.agent_info.dist_info
        torch.testing.assert_close(dist_info.mean, stored.mean, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(dist_info.log_std, stored.log_std, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(value, samples.agent.agent_info.value, rtol=1e-4, atol=1e-5)
        run.algo.optimize_agent(itr, samples)


def test_a2c_takes_one_step_on_the_whole_batch_masking_steps_after_done(runs):
    run = runs(A2C(), RecurrentCategoricalPgAgent())
    samples = run.samples(0)
    assert samples.env.done.any()
    before = [p.detach().clone() for p in run.agent.parameters()]
    opt_info = run.algo.optimize_agent(0, samples)
    assert all(len(v) == 1 and math.isfinite(v[0]) for v in opt_info)
    assert any(not torch.equal(b, p) for b, p in zip(before, run.agent.parameters()))
    # The loss sees only the steps up to each env's first done: fillers change nothing.
    loss = run.algo.loss(samples).loss
    filler = samples.env.done.clone()
    filler[1:] &= samples.env.done[:-1]  # steps after a done (done repeated while waiting)
    filler[0] = False
    assert filler.any()
    samples.env.reward[filler] += 100.0
    samples.agent.agent_info.value[filler] -= 100.0
    torch.testing.assert_close(run.algo.loss(samples).loss, loss)


class RecordingPPO(PPO):
    """Records what each minibatch holds, with rlpyt's ``loss`` signature."""

    def initialize(self, *args, **kwargs):
        super().initialize(*args, **kwargs)
        self.seen: list[dict] = []

    def loss(self, agent_inputs, action, return_, advantage, valid, old_dist_info, init_rnn_state=None):
        terms = super().loss(agent_inputs, action, return_, advantage, valid, old_dist_info, init_rnn_state)
        self.seen.append(
            dict(
                observation=agent_inputs.observation.clone(),
                init_rnn_state=None if init_rnn_state is None else init_rnn_state.h.clone(),
                approx_kl=float(terms.approx_kl),
                clip_fraction=float(terms.clip_fraction),
            )
        )
        return terms


def test_ppo_minibatches_are_whole_sequences_of_envs_from_their_stored_states(runs):
    T, B = 24, 8
    algo = RecordingPPO(minibatches=4, epochs=2)
    run = runs(algo, RecurrentCategoricalPgAgent(), T=T, B=B)
    samples = run.samples(0)
    assert algo.batch_size == T * B // 4
    opt_info = algo.optimize_agent(0, samples)
    assert len(algo.seen) == 8 and all(len(v) == 8 for v in opt_info)
    stored = samples.agent.agent_info.prev_rnn_state.h[0]  # [B, N, H] at t=0
    for epoch in range(2):
        envs = []
        for mb in algo.seen[epoch * 4 : (epoch + 1) * 4]:
            assert mb["observation"].shape == (T, 2, 4) and mb["init_rnn_state"].shape[0] == 2
            for j in range(2):  # find which env this sequence is: whole, in order, with its own state
                (b,) = [b for b in range(B) if torch.equal(samples.env.observation[:, b], mb["observation"][:, j])]
                assert torch.equal(mb["init_rnn_state"][j], stored[b])
                envs.append(b)
        assert sorted(envs) == list(range(B))  # each epoch covers every env once
    # The first minibatch replays the sampling policy exactly: ratio 1, no KL.
    assert abs(algo.seen[0]["approx_kl"]) < 1e-6 and algo.seen[0]["clip_fraction"] == 0


def test_ppo_with_a_recurrent_agent_needs_as_many_envs_as_minibatches(runs):
    with pytest.raises(ValueError, match=r"minibatches=8 needs at least that many envs, but batch_B = 4"):
        runs(PPO(minibatches=8), RecurrentCategoricalPgAgent(), T=16, B=4)


class NoEpisodeStartAgent(RecurrentCategoricalPgAgent):
    """A recurrent agent that records its state but not where episodes start (plain AgentInfoRnn)."""

    @torch.no_grad()
    def step(self, observation, prev_action, prev_reward):
        agent_step = super().step(observation, prev_action, prev_reward)
        info = agent_step.agent_info
        return AgentStep(agent_step.action, AgentInfoRnn(info.dist_info, info.value, info.prev_rnn_state))


@pytest.mark.parametrize("AlgoCls", [A2C, PPO])
@pytest.mark.parametrize(
    "SamplerCls, CollectorCls, affinity",
    [(SerialSampler, ResetCollector, None), (GpuSampler, GpuResetCollector, UNPINNED)],
)
def test_recurrent_agents_without_episode_starts_refuse_samplers_that_reset_mid_batch_naming_the_fix(
    AlgoCls, SamplerCls, CollectorCls, affinity
):
    sampler = SamplerCls(make, CARTPOLE, batch_T=8, batch_B=2, CollectorCls=CollectorCls, max_decorrelation_steps=0)
    agent = NoEpisodeStartAgent()
    try:
        examples = sampler.initialize(agent, affinity=affinity, seed=0, bootstrap_value=True)
        assert sampler.mid_batch_reset
        with pytest.raises(ValueError, match=r"episode_start.*CollectorCls=WaitResetCollector .* CollectorCls=GpuWait"):
            AlgoCls().initialize(agent, 10, sampler.batch_spec, sampler.mid_batch_reset, examples)
    finally:
        sampler.shutdown()


@pytest.mark.parametrize(
    "AlgoCls, sampler", [(A2C, "serial"), (PPO, "serial"), (A2C, "cpu"), (PPO, "gpu"), (A2C, "alternating")]
)
def test_mid_batch_resets_are_replayed_from_the_recorded_episode_starts(AlgoCls, sampler, runs, monkeypatch):
    """With ResetCollector a done env starts its next episode at the next step; the agent records that
    start, and the training forward replays every step (all valid, no filler) as sampled."""
    SamplerCls, _wait_reset, affinity = SAMPLERS[sampler]
    CollectorCls = ResetCollector if sampler in ("serial", "cpu") else GpuResetCollector
    monkeypatch.setitem(SAMPLERS, "reset", (SamplerCls, CollectorCls, affinity))
    algo = AlgoCls(**(dict(minibatches=2, epochs=2) if AlgoCls is PPO else {}))
    agent = RecurrentCategoricalPgAgent()
    run = runs(algo, agent, sampler="reset", T=40, B=4)
    assert algo.mid_batch_reset
    mid_starts = 0
    for itr in range(3):
        samples = run.samples(itr)
        done = samples.env.done
        episode_start = run.algo.episode_start(samples)
        # A start right after every done, and nowhere else after t = 0.
        assert torch.equal(episode_start[1:], done[:-1])
        mid_starts += int(episode_start[1:].sum())
        with torch.no_grad():  # the training forward: restarts at the recorded starts (run_with_resets)
            dist_info, value = run.algo.recurrent_forward(
                run.algo.agent_inputs(samples), run.algo.initial_rnn_state(samples), episode_start
            )
        torch.testing.assert_close(dist_info.prob, samples.agent.agent_info.dist_info.prob, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(value, samples.agent.agent_info.value, rtol=1e-4, atol=1e-5)
        _return, _advantage, valid = run.algo.process_returns(samples)
        assert valid is None  # every step is a real one
        run.algo.optimize_agent(itr, samples)
    assert mid_starts > 0


class NoStoredStateAgent(RecurrentAgentMixin, RecurrentCategoricalPgAgentBase):
    """A recurrent agent that records no prev_rnn_state (as a hand-written one might)."""

    @torch.no_grad()
    def step(self, observation, prev_action, prev_reward):
        pi, value, state = self.model(*self._model_inputs(observation, prev_action, prev_reward, self.prev_rnn_state))
        self.advance_rnn_state(state)
        action = self.distribution.sample(DistInfo(prob=pi))
        return AgentStep(action=action, agent_info=AgentInfo(dist_info=DistInfo(prob=pi), value=value))


def test_a_recurrent_agent_without_a_stored_state_is_refused_with_what_to_record(runs):
    with pytest.raises(ValueError, match=r"no 'prev_rnn_state'.*AgentInfoRnn\(dist_info, value, prev_rnn_state\)"):
        runs(A2C(), NoStoredStateAgent())


@pytest.mark.parametrize("AlgoCls", [A2C, PPO])
def test_the_runner_trains_recurrent_agents_with_serial_and_cpu_samplers(AlgoCls, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for SamplerCls, affinity in [(SerialSampler, {}), (CpuSampler, dict(affinity=UNPINNED))]:
        sampler = SamplerCls(
            make, CARTPOLE, batch_T=16, batch_B=4, CollectorCls=WaitResetCollector, max_decorrelation_steps=0
        )
        algo = AlgoCls(**(dict(minibatches=2, epochs=2) if AlgoCls is PPO else {}))
        runner = MinibatchRl(
            algo=algo, agent=RecurrentCategoricalPgAgent(), sampler=sampler, n_steps=64 * 3, seed=0, **affinity
        )
        runner.train()
        assert algo.update_counter == (3 if AlgoCls is A2C else 3 * 2 * 2)


@pytest.mark.parametrize("AlgoCls", [A2C, PPO])
def test_the_algorithms_fold_each_batch_into_the_recurrent_models_observation_statistics(AlgoCls, runs):
    agent = RecurrentCategoricalPgAgent(model_kwargs=dict(normalize_observation=True))
    run = runs(AlgoCls(), agent, T=16, B=4)
    observations = []
    for itr in range(2):
        samples = run.samples(itr)
        observations.append(samples.env.observation.reshape(-1, 4).clone())
        run.algo.optimize_agent(itr, samples)
        seen = torch.cat(observations)
        rms = agent.model.obs_rms
        assert int(rms.count) == len(seen)
        torch.testing.assert_close(rms.mean, seen.mean(0), rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(rms.var, seen.var(0, unbiased=False), rtol=1e-3, atol=1e-5)
