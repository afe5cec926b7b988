"""Smoke run of device hygiene on a GPU (issue 33 item 2): each algorithm trains with its agent on ``cuda:0``
and must keep its whole gradient step there.

    python benchmarks/gpu_device_hygiene.py                  # cuda:0 when torch sees one, else the CPU
    python benchmarks/gpu_device_hygiene.py --tiny           # 8-unit networks, 4 updates per iteration
    python benchmarks/gpu_device_hygiene.py --device cpu     # the same run on the CPU

For each of SAC, TD3, DDPG (Pendulum-v1), DQN, prioritized DQN and CategoricalDQN (CartPole-v1): a
SerialSampler fills the replay for one iteration, then ``--iterations`` (3) ``optimize_agent`` calls train.
R2D1 (CartPole-v1, a recurrent agent on a wait-reset sampler) fills its sequence replay for two iterations,
then trains the same way. The policy-gradient algorithms train on each batch just sampled: PPO
(CartPole-v1; Pendulum-v1 with a Gaussian policy; CartPole-v1 with a recurrent agent) takes ``--updates``
gradient steps per iteration (epochs x minibatches); A2C (CartPole-v1, feedforward and recurrent) takes one
per batch, so each of its iterations samples and trains ``--updates`` batches.

It asserts that every loss is finite, that every trained network's parameters changed, and that the
tensors read back to the host (``item``, ``tolist``, ``cpu``, ``float()``, ``int()``, and an agent's
``outputs_to_cpu``) number at most one per gradient step, none of them by the agent. On a GPU it also
counts the operations that make the host wait for the device (``torch.cuda.set_sync_debug_mode``, which
also sees blocking host-to-device copies) and asserts the same bound. It prints one line per algorithm
with its updates per second, timed over the iterations after the first (which pays for CUDA's start-up).
A device mismatch anywhere in a loss (a CPU tensor meeting a GPU one) raises, so the run fails on it.

Exit code 0 when every check held, 1 otherwise.
"""

from __future__ import annotations

import argparse
import collections
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

HOST_READS = ("item", "tolist", "cpu", "__float__", "__int__")

# Training batch and networks of each run: the algorithms' and agents' defaults, or tiny ones.
ALGOS = (
    "SAC", "TD3", "DDPG", "DQN", "DQN-prioritized", "CatDQN", "R2D1",
    "PPO", "PPO-gaussian", "PPO-recurrent", "A2C", "A2C-recurrent",
)  # fmt: skip
BATCH = dict(SAC=256, TD3=100, DDPG=64, DQN=32, CatDQN=32)
ON_POLICY = ("PPO", "PPO-gaussian", "PPO-recurrent", "A2C", "A2C-recurrent")
RECURRENT = ("R2D1", "PPO-recurrent", "A2C-recurrent")  # trained on whole sequences: a wait-reset sampler


@dataclass
class Result:
    name: str
    device: str
    steps: int
    updates_per_s: float
    host_reads: int
    agent_reads: int
    syncs: int | None  # None on the CPU, where nothing waits for a device
    problems: list[str]

    def line(self) -> str:
        syncs = "" if self.syncs is None else f"  syncs/step {self.syncs / self.steps:.2f}"
        status = "ok" if not self.problems else "FAILED: " + "; ".join(self.problems)
        return (
            f"{self.name:16s} {self.device:7s} {self.updates_per_s:9.1f} updates/s  {self.steps:4d} steps  "
            f"host reads/step {self.host_reads / self.steps:.2f} (agent {self.agent_reads}){syncs}  {status}"
        )


def build(name: str, tiny: bool, updates: int, sampler_bs: int) -> tuple[Any, Any, str]:
    """The agent, the algorithm and the env id of one run, training ``updates`` steps per iteration
    (A2C: one step per sampled batch)."""
    if name in ON_POLICY:
        return build_on_policy(name, tiny, updates)
    from rlrun.agents.dqn.catdqn_agent import CatDqnAgent
    from rlrun.agents.dqn.dqn_agent import DqnAgent
    from rlrun.agents.dqn.r2d1_agent import R2d1Agent
    from rlrun.agents.qpg.ddpg_agent import DdpgAgent
    from rlrun.agents.qpg.sac_agent import SacAgent
    from rlrun.agents.qpg.td3_agent import Td3Agent
    from rlrun.algos.dqn.cat_dqn import CategoricalDQN
    from rlrun.algos.dqn.dqn import DQN
    from rlrun.algos.dqn.r2d1 import R2D1
    from rlrun.algos.qpg.ddpg import DDPG
    from rlrun.algos.qpg.sac import SAC
    from rlrun.algos.qpg.td3 import TD3

    nets: dict[str, Any] = dict(model_kwargs=dict(hidden_sizes=[8])) if tiny else {}
    qnets: dict[str, Any] = dict(nets, q_model_kwargs=dict(hidden_sizes=[8])) if tiny else {}
    if name == "R2D1":
        # batch_B sequences of warmup_T + batch_T (+ n_step_return) steps; replay_ratio counts all their steps.
        T, B, warmup = (4, 2, 2) if tiny else (16, 32, 8)
        sequences = dict(batch_T=T, batch_B=B, warmup_T=warmup, store_rnn_state_interval=4 if tiny else 8)
        rnn_nets = dict(model_kwargs=dict(hidden_sizes=[8], lstm_size=4, head_size=8)) if tiny else {}
        algo = R2D1(
            n_step_return=2 if tiny else 5,
            min_steps_learn=2 * sampler_bs,  # two iterations fill the sequence replay
            replay_size=10_000,
            replay_ratio=updates * (T + warmup) * B / sampler_bs,
            target_update_interval=100,
            **sequences,
        )
        return R2d1Agent(**rnn_nets), algo, "CartPole-v1"
    batch_size = 8 if tiny else BATCH[name.split("-")[0]]
    # updates_per_optimize = round(replay_ratio * sampler batch / batch_size) = updates
    replay = dict(
        batch_size=batch_size,
        min_steps_learn=sampler_bs,  # the first iteration fills the replay, the next ones train
        replay_size=10_000,
        replay_ratio=updates * batch_size / sampler_bs,
    )
    if name == "SAC":
        return SacAgent(**qnets), SAC(**replay), "Pendulum-v1"
    if name == "TD3":
        return Td3Agent(**qnets), TD3(**replay), "Pendulum-v1"
    if name == "DDPG":
        return DdpgAgent(**qnets), DDPG(**replay), "Pendulum-v1"
    if name == "DQN":
        return DqnAgent(**nets), DQN(**replay), "CartPole-v1"
    if name == "DQN-prioritized":
        return DqnAgent(**nets), DQN(prioritized_replay=True, **replay), "CartPole-v1"
    if name == "CatDQN":
        return CatDqnAgent(n_atoms=11 if tiny else 51, **nets), CategoricalDQN(**replay), "CartPole-v1"
    raise ValueError(f"unknown algorithm {name!r}; choose from {ALGOS}")


def build_on_policy(name: str, tiny: bool, updates: int) -> tuple[Any, Any, str]:
    """PPO's or A2C's agent, algorithm and env id; PPO takes ``updates`` gradient steps per batch."""
    from rlrun.agents.pg.categorical import CategoricalPgAgent, RecurrentCategoricalPgAgent
    from rlrun.agents.pg.gaussian import GaussianPgAgent
    from rlrun.algos.pg.a2c import A2C
    from rlrun.algos.pg.ppo import PPO

    nets: dict[str, Any] = dict(model_kwargs=dict(hidden_sizes=[8])) if tiny else {}
    rnn_nets: dict[str, Any] = dict(model_kwargs=dict(hidden_sizes=[8], lstm_size=4)) if tiny else {}
    minibatches = 2 if tiny else 4  # a recurrent agent's minibatches split the sampler's batch_B envs
    ppo = dict(minibatches=minibatches, epochs=max(1, updates // minibatches))
    if name == "PPO":
        return CategoricalPgAgent(**nets), PPO(**ppo), "CartPole-v1"
    if name == "PPO-gaussian":  # with value clipping, so that the sampled values take part
        return GaussianPgAgent(**nets), PPO(value_clip=0.2, **ppo), "Pendulum-v1"
    if name == "PPO-recurrent":
        return RecurrentCategoricalPgAgent(**rnn_nets), PPO(**ppo), "CartPole-v1"
    if name == "A2C":
        return CategoricalPgAgent(**nets), A2C(), "CartPole-v1"
    if name == "A2C-recurrent":
        return RecurrentCategoricalPgAgent(**rnn_nets), A2C(), "CartPole-v1"
    raise ValueError(f"unknown algorithm {name!r}; choose from {ALGOS}")


def trained_modules(agent: Any) -> dict[str, torch.nn.Module]:
    """The networks a gradient step moves (targets follow them and are left out)."""
    others = agent.other_models() if hasattr(agent, "other_models") else {}
    return dict(model=agent.model, **{k: m for k, m in others.items() if not k.startswith("target_")})


class HostReads:
    """Counts host reads by the file that made them, while active (a context manager)."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self._originals = {name: getattr(torch.Tensor, name) for name in HOST_READS}

    def __enter__(self) -> HostReads:
        from rlrun.agents.base import BaseAgent

        for name, original in self._originals.items():
            setattr(torch.Tensor, name, self._counting(original))
        # An agent's copy of its outputs to the host: no call of a counted method on the CPU, a copy on a GPU.
        outputs_to_cpu, counts = BaseAgent.outputs_to_cpu, self.counts
        self._outputs_to_cpu = outputs_to_cpu

        def counted(agent: Any, buffer: Any) -> Any:
            counts["agent"] += 1
            return outputs_to_cpu(agent, buffer)

        BaseAgent.outputs_to_cpu = counted  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        from rlrun.agents.base import BaseAgent

        for name, original in self._originals.items():
            setattr(torch.Tensor, name, original)
        BaseAgent.outputs_to_cpu = self._outputs_to_cpu  # type: ignore[method-assign]

    def _counting(self, original: Callable[..., Any]) -> Callable[..., Any]:
        counts = self.counts

        def read(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_code.co_filename.replace("\\", "/")
            counts["agent" if "rlrun/agents" in caller else "other"] += 1
            return original(tensor, *args, **kwargs)

        return read


class DeviceSyncs:
    """Counts the CUDA operations that make the host wait (a context manager; counts nothing on the CPU)."""

    def __init__(self, device: torch.device) -> None:
        self.active = device.type == "cuda"
        self.count = 0
        self.examples: list[str] = []  # the first few, to say where they come from
        self._catch: warnings.catch_warnings[list[warnings.WarningMessage]] | None = None
        self._caught: list[warnings.WarningMessage] = []

    def __enter__(self) -> DeviceSyncs:
        if self.active:
            self._catch = warnings.catch_warnings(record=True)
            self._caught = self._catch.__enter__()
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active and self._catch is not None:
            torch.cuda.set_sync_debug_mode("default")
            self._catch.__exit__(*exc)
            syncs = [w for w in self._caught if "synchroniz" in str(w.message)]
            self.count += len(syncs)
            self.examples.extend(f"{w.filename}:{w.lineno}" for w in syncs[: max(0, 5 - len(self.examples))])


def run_one(name: str, device: torch.device, tiny: bool, iterations: int, updates: int) -> Result:
    """Fill the replay (if any), then train ``iterations`` iterations of ``updates`` steps; check and time them."""
    from rlrun.envs.gym import make
    from rlrun.samplers.collectors import WaitResetCollector
    from rlrun.samplers.serial.sampler import SerialSampler
    from rlrun.utils.seed import set_seed

    set_seed(0)
    batch_T, batch_B = (8, 2) if tiny else (32, 4)
    agent, algo, env_id = build(name, tiny, updates, batch_T * batch_B)
    collector = dict(CollectorCls=WaitResetCollector) if name in RECURRENT else {}
    sampler = SerialSampler(
        make, dict(id=env_id), batch_T=batch_T, batch_B=batch_B, max_decorrelation_steps=0, **collector
    )
    # A2C takes one gradient step per batch: an iteration here samples and trains ``updates`` batches.
    batches = updates if name.startswith("A2C") else 1
    problems: list[str] = []
    reads, syncs, steps, seconds = HostReads(), DeviceSyncs(device), 0, 0.0
    from rlrun.algos import optim

    # The gradient clip reads its norm back on the CPU, where that costs nothing; count the GPU's path.
    host_device_types, optim.HOST_DEVICE_TYPES = optim.HOST_DEVICE_TYPES, ()
    try:
        examples = sampler.initialize(agent, seed=0, bootstrap_value=algo.bootstrap_value)
        agent.to_device(None if device.type == "cpu" else device)
        fill = 0  # the iterations that only fill a replay
        n_itr = iterations * batches
        algo.initialize(
            agent, n_itr=n_itr, batch_spec=sampler.batch_spec, mid_batch_reset=sampler.mid_batch_reset,
            examples=examples,
        )  # fmt: skip
        if name not in ON_POLICY:
            fill = algo.min_itr_learn
            n_itr += fill
        before: dict[str, list[torch.Tensor]] = {}
        for itr in range(n_itr):
            agent.sample_mode(itr)
            samples, _ = sampler.obtain_samples(itr)
            agent.train_mode(itr)
            if itr < fill:
                algo.optimize_agent(itr, samples)
                continue
            if not before:
                before = {k: [p.detach().clone() for p in m.parameters()] for k, m in trained_modules(agent).items()}
            steps_before = algo.update_counter
            start = time.perf_counter()
            with reads, syncs:
                opt_info = algo.optimize_agent(itr, samples)  # reads its figures back: the device is done
            elapsed = time.perf_counter() - start
            if itr >= fill + batches:  # the first training iteration pays for CUDA's start-up
                seconds += elapsed
            steps += algo.update_counter - steps_before
            for field, values in zip(type(opt_info)._fields, opt_info):
                if not all(math.isfinite(v) for v in values):
                    problems.append(f"{field} not finite at itr {itr}: {values[:3]}")
        for key, module in trained_modules(agent).items():
            if all(torch.equal(a, b) for a, b in zip(before[key], module.parameters())):
                problems.append(f"{key}'s parameters did not change")
    finally:
        optim.HOST_DEVICE_TYPES = host_device_types
        sampler.shutdown()
    host_reads = sum(reads.counts.values())
    if steps < iterations:
        problems.append(f"only {steps} gradient steps in {iterations} iterations")
    if host_reads > steps:
        problems.append(f"{host_reads} host reads in {steps} steps ({dict(reads.counts)})")
    if reads.counts["agent"]:
        problems.append(f"the agent read {reads.counts['agent']} tensors back to the host")
    if syncs.active and syncs.count > steps:
        problems.append(f"{syncs.count} device synchronisations in {steps} steps, e.g. at {syncs.examples}")
    timed_steps = steps * (iterations - 1) / iterations if iterations > 1 else steps
    rate = timed_steps / seconds if seconds > 0 else float("nan")
    return Result(
        name=name,
        device=str(device),
        steps=steps,
        updates_per_s=rate,
        host_reads=host_reads,
        agent_reads=reads.counts["agent"],
        syncs=syncs.count if syncs.active else None,
        problems=problems,
    )


def run(
    device: str | None = None, tiny: bool = False, iterations: int = 3, updates: int | None = None,
    algos: tuple[str, ...] = ALGOS,
) -> list[Result]:  # fmt: skip
    """Run each algorithm of ``algos``; ``device=None`` picks cuda:0 when torch sees one, else the CPU."""
    chosen = torch.device(device if device is not None else ("cuda:0" if torch.cuda.is_available() else "cpu"))
    per_itr = updates if updates is not None else (4 if tiny else 100)
    return [run_one(name, chosen, tiny, iterations, per_itr) for name in algos]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="cuda:0, cpu, ...; default: cuda:0 when available")
    parser.add_argument("--tiny", action="store_true", help="8-unit networks and batches of 8 (a quick check)")
    parser.add_argument("--iterations", type=int, default=3, help="training iterations after the filling one")
    parser.add_argument("--updates", type=int, default=None, help="gradient steps per iteration (100; 4 tiny)")
    parser.add_argument("--algos", nargs="+", default=list(ALGOS), choices=ALGOS)
    args = parser.parse_args(argv)
    if args.iterations < 1:
        parser.error("--iterations must be at least 1")
    if args.device is None and not torch.cuda.is_available():
        print("No CUDA device: running on the CPU (same checks; device synchronisations are not counted).")
    torch.set_num_threads(1)  # as the update-speed benchmarks; the GPU does the arithmetic there anyway
    results = run(args.device, args.tiny, args.iterations, args.updates, tuple(args.algos))
    for result in results:
        print(result.line(), flush=True)
    failed = [r.name for r in results if r.problems]
    print("RESULT: " + ("every check held" if not failed else f"checks failed for {', '.join(failed)}"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    sys.exit(main())
