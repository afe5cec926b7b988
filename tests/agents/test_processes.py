"""Agents handed to worker processes started with spawn (as samplers do under spawn/forkserver)."""

import multiprocessing as mp

import pytest
import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent


def _report(agent, go, out):
    go.wait(timeout=60)
    agent.sample_mode(150)
    weight_sum = float(sum(p.sum() for p in agent.shared_model.parameters()))
    out.put((float(agent.distribution.epsilon), weight_sum))


def test_spawned_worker_shares_weights_and_epsilon_schedule_with_the_master(cartpole):
    agent = DqnAgent(eps_init=1.0, eps_final=0.0)
    agent.initialize(cartpole.spaces, share_memory=True)
    ctx = mp.get_context("spawn")
    go, out = ctx.Event(), ctx.Queue()
    worker = ctx.Process(target=_report, args=(agent, go, out))
    worker.start()
    try:
        agent.to_device("cpu")
        with torch.no_grad():
            for p in agent.model.parameters():
                p.fill_(0.25)
        agent.sync_shared_memory()
        agent.set_epsilon_itr_min_max(100, 200)
        go.set()
        epsilon, weight_sum = out.get(timeout=60)
    finally:
        worker.join(timeout=60)
    assert epsilon == pytest.approx(0.5)
    assert weight_sum == pytest.approx(0.25 * sum(p.numel() for p in agent.model.parameters()))
