"""Device hygiene (issue 33 item 2): the algorithms read values back to the host at most once per
gradient step, so that an agent on a GPU is not made to wait a dozen times a step.

The count patches the tensor methods that copy device memory to the host (``item``, ``tolist``,
``cpu``, ``float()`` and ``int()``), and the agents' ``outputs_to_cpu`` (a no-op on the CPU, a copy on a
GPU), during one ``optimize_agent`` call on real small setups on the CPU; the code paths are the same as
on a GPU, except the gradient clip's, whose CPU shortcut (``HOST_DEVICE_TYPES``) the test turns off so
that the GPU path runs. ``.numpy()`` is not counted: it only works on CPU tensors (``process_returns``,
the sample buffers and the recurrent replay's cuts call it on host data).

The replay-based algorithms (SAC, TD3, DDPG, DQN, CategoricalDQN, R2D1) move each replay batch to the
agent's device once, PPO and A2C each sampled batch, and every agent's training forwards (``q``,
``target_q``, ``pi``, ``__call__``, ``target``) keep their outputs there, so the agents read nothing back
at all. PPO and A2C read their figures back once per iteration; prioritized DQN and R2D1 once per
gradient step (the replay needs the new priorities), with the step's figures.
"""

from __future__ import annotations

import collections
import sys
from collections.abc import Callable
from typing import Any

import pytest
import torch

from rlrun.agents.base import BaseAgent
from rlrun.agents.dqn.catdqn_agent import CatDqnAgent
from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.dqn.r2d1_agent import R2d1Agent
from rlrun.agents.pg.categorical import CategoricalPgAgent, RecurrentCategoricalPgAgent
from rlrun.agents.pg.gaussian import GaussianPgAgent, RecurrentGaussianPgAgent
from rlrun.agents.qpg.ddpg_agent import DdpgAgent
from rlrun.agents.qpg.sac_agent import SacAgent
from rlrun.agents.qpg.td3_agent import Td3Agent
from rlrun.algos import optim
from rlrun.algos.base import RlAlgorithm
from rlrun.algos.dqn.cat_dqn import CategoricalDQN
from rlrun.algos.dqn.dqn import DQN
from rlrun.algos.dqn.r2d1 import R2D1
from rlrun.algos.opt_info import opt_info_to_host
from rlrun.algos.pg.a2c import A2C
from rlrun.algos.pg.base import normalized
from rlrun.algos.pg.ppo import PPO
from rlrun.algos.qpg.ddpg import DDPG
from rlrun.algos.qpg.sac import SAC
from rlrun.algos.qpg.td3 import TD3
from rlrun.envs.gym import make
from rlrun.samplers.collectors import WaitResetCollector
from rlrun.samplers.serial.sampler import SerialSampler

HOST_READS = ("item", "tolist", "cpu", "__float__", "__int__")
SMALL = dict(hidden_sizes=[8])
REPLAY = dict(batch_size=8, min_steps_learn=16, replay_size=1000, replay_ratio=8)
SMALL_LSTM = dict(hidden_sizes=[8], lstm_size=4)
# R2D1: sequences of 2 warm-up and 4 trained steps (+ 2 for the 2-step targets), 2 per gradient step.
R2D1_SMALL = dict(
    batch_T=4, batch_B=2, warmup_T=2, n_step_return=2, store_rnn_state_interval=4, min_steps_learn=16,
    replay_size=1000, replay_ratio=8, target_update_interval=2,
)  # fmt: skip


def count_host_reads(call: Callable[[], Any]) -> tuple[Any, collections.Counter[str]]:
    """``call()``'s result and its host reads by the package that made them (``rlrun/agents``, ...)."""
    counts: collections.Counter[str] = collections.Counter()
    originals = {name: getattr(torch.Tensor, name) for name in HOST_READS}

    def counting(name: str) -> Callable[..., Any]:
        def read(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_code.co_filename.replace("\\", "/")
            package = next((p for p in ("rlrun/agents", "rlrun/") if p in caller), "other")
            counts[package] += 1
            return originals[name](self, *args, **kwargs)

        return read

    outputs_to_cpu = BaseAgent.outputs_to_cpu

    def agent_outputs_to_cpu(agent: BaseAgent, buffer: Any) -> Any:
        counts["rlrun/agents"] += 1  # a copy to the host on a GPU, where it is no call of a counted method
        return outputs_to_cpu(agent, buffer)

    try:
        for name in HOST_READS:
            setattr(torch.Tensor, name, counting(name))
        BaseAgent.outputs_to_cpu = agent_outputs_to_cpu  # type: ignore[method-assign]
        result = call()
    finally:
        for name, method in originals.items():
            setattr(torch.Tensor, name, method)
        BaseAgent.outputs_to_cpu = outputs_to_cpu  # type: ignore[method-assign]
    return result, counts


SETUPS: dict[str, tuple[Callable[[], BaseAgent], Callable[[], RlAlgorithm[Any]], str]] = {
    "SAC": (lambda: SacAgent(model_kwargs=SMALL, q_model_kwargs=SMALL), lambda: SAC(**REPLAY), "Pendulum-v1"),
    "TD3": (lambda: Td3Agent(model_kwargs=SMALL, q_model_kwargs=SMALL), lambda: TD3(**REPLAY), "Pendulum-v1"),
    "DDPG": (lambda: DdpgAgent(model_kwargs=SMALL, q_model_kwargs=SMALL), lambda: DDPG(**REPLAY), "Pendulum-v1"),
    "DQN": (lambda: DqnAgent(model_kwargs=SMALL), lambda: DQN(**REPLAY), "CartPole-v1"),
    # The replay's new priorities go to the host once per step: that is the one read allowed.
    "DQN-prioritized": (
        lambda: DqnAgent(model_kwargs=SMALL),
        lambda: DQN(prioritized_replay=True, **REPLAY),
        "CartPole-v1",
    ),  # fmt: skip
    "CatDQN": (
        lambda: CatDqnAgent(n_atoms=11, model_kwargs=SMALL),
        lambda: CategoricalDQN(V_min=-5, V_max=5, **REPLAY),
        "CartPole-v1",
    ),  # fmt: skip
    "PPO": (lambda: CategoricalPgAgent(model_kwargs=SMALL), lambda: PPO(epochs=2, minibatches=2), "CartPole-v1"),
    "A2C": (lambda: CategoricalPgAgent(model_kwargs=SMALL), lambda: A2C(), "CartPole-v1"),
    "PPO-gaussian": (
        lambda: GaussianPgAgent(model_kwargs=SMALL),
        lambda: PPO(epochs=2, minibatches=2, value_clip=0.2),
        "Pendulum-v1",
    ),  # fmt: skip
    "A2C-gaussian": (lambda: GaussianPgAgent(model_kwargs=SMALL), lambda: A2C(), "Pendulum-v1"),
    # The recurrent ones run on whole sequences, which a wait-reset collector gives (RECURRENT below).
    "PPO-recurrent": (
        lambda: RecurrentCategoricalPgAgent(model_kwargs=SMALL_LSTM),
        lambda: PPO(epochs=2, minibatches=2),
        "CartPole-v1",
    ),  # fmt: skip
    "A2C-recurrent": (lambda: RecurrentCategoricalPgAgent(model_kwargs=SMALL_LSTM), lambda: A2C(), "CartPole-v1"),
    "PPO-recurrent-gaussian": (
        lambda: RecurrentGaussianPgAgent(model_kwargs=SMALL_LSTM),
        lambda: PPO(epochs=2, minibatches=2),
        "Pendulum-v1",
    ),  # fmt: skip
    # Its sequence priorities go back to the replay once per step, with the step's figures, as prioritized DQN's.
    "R2D1": (
        lambda: R2d1Agent(model_kwargs=dict(hidden_sizes=[8], lstm_size=4, head_size=8)),
        lambda: R2D1(**R2D1_SMALL),
        "CartPole-v1",
    ),  # fmt: skip
}

RECURRENT = ("PPO-recurrent", "A2C-recurrent", "PPO-recurrent-gaussian", "R2D1")
ON_POLICY = tuple(name for name in SETUPS if name.startswith(("PPO", "A2C")))
PRIORITIZED = ("DQN-prioritized", "R2D1")  # the replay takes each step's new priorities on the host


@pytest.mark.parametrize("name", list(SETUPS))
def test_at_most_one_host_read_per_gradient_step(name, monkeypatch):
    monkeypatch.setattr(optim, "HOST_DEVICE_TYPES", ())  # the clip's GPU path
    make_agent, make_algo, env_id = SETUPS[name]
    torch.manual_seed(0)
    agent, algo = make_agent(), make_algo()
    collector = dict(CollectorCls=WaitResetCollector) if name in RECURRENT else {}
    sampler = SerialSampler(make, dict(id=env_id), batch_T=8, batch_B=2, max_decorrelation_steps=0, **collector)
    n_itr = 3
    try:
        examples = sampler.initialize(agent, seed=0, bootstrap_value=algo.bootstrap_value)
        algo.initialize(
            agent,
            n_itr=n_itr,
            batch_spec=sampler.batch_spec,
            mid_batch_reset=sampler.mid_batch_reset,
            examples=examples,
        )
        for itr in range(n_itr):
            agent.sample_mode(itr)
            samples, _ = sampler.obtain_samples(itr)
            agent.train_mode(itr)
            if itr < n_itr - 1:
                algo.optimize_agent(itr, samples)
        steps_before = algo.update_counter
        opt_info, reads = count_host_reads(lambda: algo.optimize_agent(n_itr - 1, samples))
    finally:
        sampler.shutdown()
    steps = algo.update_counter - steps_before
    assert steps >= 1
    # Every agent's training forwards stay on the device (the algorithm moved the batch there): no reads there.
    assert reads["rlrun/agents"] == 0, (name, steps, dict(reads))
    assert sum(reads.values()) <= steps, (name, steps, dict(reads))
    if name in ON_POLICY:  # the figures of all the iteration's steps in one read
        assert sum(reads.values()) == 1, (name, steps, dict(reads))
    if name in PRIORITIZED:  # each step's priorities and figures in one read; nothing left for the end
        assert sum(reads.values()) == steps, (name, steps, dict(reads))
    # The runner still gets lists of floats, one per gradient step (DDPG's and TD3's policy fields: per policy step).
    assert all(isinstance(value, float) for field in opt_info for value in field)
    assert len(opt_info[0]) >= 1


def test_opt_info_to_host_gives_each_tensor_its_exact_value_in_place():
    values = [torch.tensor(0.1), torch.tensor(2.5, dtype=torch.float64), torch.tensor([1 / 3]), 7.0]
    priorities = torch.tensor([0.2, 0.7])
    expected_first = [v.item() if isinstance(v, torch.Tensor) else v for v in values]
    opt_info = (list(values), [priorities, 1.5], [])
    opt_info_to_host(opt_info)
    assert opt_info == (expected_first, [*priorities.tolist(), 1.5], [])
    assert all(type(v) is float for field in opt_info for v in field)
    same_kind = ([torch.tensor(0.1), torch.tensor(0.3)],)
    opt_info_to_host(same_kind)
    assert same_kind == ([torch.tensor(0.1).item(), torch.tensor(0.3).item()],)


@pytest.mark.parametrize("max_norm", [1e9, 0.05, float("inf")])
def test_the_clips_device_path_matches_torch_and_reads_nothing_back(max_norm, monkeypatch):
    monkeypatch.setattr(optim, "HOST_DEVICE_TYPES", ())
    nets = [torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)) for _ in range(2)]
    nets[1].load_state_dict(nets[0].state_dict())
    for net in nets:
        net(torch.randn(5, 3, generator=torch.Generator().manual_seed(1))).pow(2).sum().backward()
    ours, reads = count_host_reads(lambda: optim.clip_grad_norm_tensor(nets[0].parameters(), max_norm))
    theirs = torch.nn.utils.clip_grad_norm_(nets[1].parameters(), max_norm)
    assert sum(reads.values()) == 0
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-6) and ours.item() > 0.05
    for a, b in zip(nets[0].parameters(), nets[1].parameters()):
        torch.testing.assert_close(a.grad, b.grad)


def test_minibatch_advantage_norms_device_path_weighs_the_valid_steps_as_selecting_them_does(monkeypatch):
    """On a GPU ``normalized`` weighs the valid steps instead of selecting them (a selection's size is read
    back to the host): the same normalisation, masked steps included, and nothing read back."""
    generator = torch.Generator().manual_seed(3)
    advantage = torch.randn(6, 4, generator=generator) * 3 + 1
    valid = (torch.rand(6, 4, generator=generator) > 0.3).float()
    selected = normalized(advantage, valid)
    monkeypatch.setattr(optim, "HOST_DEVICE_TYPES", ())
    weighed, reads = count_host_reads(lambda: normalized(advantage, valid))
    assert sum(reads.values()) == 0
    torch.testing.assert_close(weighed, selected)
    assert weighed[valid > 0].mean().abs() < 1e-5 and weighed[valid > 0].std(correction=0) == pytest.approx(1, abs=1e-5)
