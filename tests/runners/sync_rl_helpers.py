"""Builders and test-only runners for the SyncRl tests, in a module that spawned ranks import by name.

Env seeds follow global env ranks: with runner seed ``s``, env ``r`` of the global batch (rank ``k``
holds ``k * B .. k * B + B - 1``) is seeded ``s + 1 + r``; :class:`RankFaultyCartPole` picks its victim
by that seed.
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import time

import gymnasium
import torch
import torch.distributed as dist

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.gym import GymEnvWrapper, make
from rlrun.runners.sync_rl import SyncRl
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.serial.sampler import SerialSampler

FAILURE_TEXT = "planned failure of RankFaultyCartPole"
CARTPOLE = dict(id="CartPole-v1")


def hang_forever() -> None:
    while True:  # a busy Python loop: alive, never reaching the next collective
        time.sleep(0.01)


class RankFaultyCartPole(GymEnvWrapper):
    """CartPole-v1 whose env seeded ``fail_seed`` fails at its ``fail_step``-th step: ``fail_in`` is
    "step" (raises), "kill" (SIGKILL to its own process), "stop" (SIGSTOP to itself) or "hang"."""

    def __init__(self, fail_in: str, fail_seed: int, fail_step: int = 30) -> None:
        super().__init__(gymnasium.make("CartPole-v1"))
        self.fail_in, self.fail_seed, self.fail_step = fail_in, fail_seed, fail_step
        self.seeded_with: int | None = None
        self.n_steps = 0

    def seed(self, seed):
        self.seeded_with = seed
        super().seed(seed)

    def step(self, action):
        if self.seeded_with == self.fail_seed:
            self.n_steps += 1
            if self.n_steps == self.fail_step:
                if self.fail_in == "step":
                    raise RuntimeError(f"{FAILURE_TEXT} at step {self.n_steps} in pid {os.getpid()}")
                if self.fail_in == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                if self.fail_in == "stop":  # SIGSTOP, as a user's `kill -STOP` or Ctrl-Z on it alone
                    os.kill(os.getpid(), signal.SIGSTOP)
                if self.fail_in == "hang":
                    hang_forever()
        return super().step(action)


def params_digest(agent) -> str:
    """SHA-256 of every tensor of the agent's state dict (nested dicts too: DQN's model and target)."""
    h = hashlib.sha256()

    def add(state, prefix=""):
        for name, value in state.items():
            if isinstance(value, dict):
                add(value, f"{prefix}{name}.")
            else:
                h.update(f"{prefix}{name}".encode())
                h.update(value.detach().cpu().contiguous().numpy().tobytes())

    add(agent.state_dict())
    return h.hexdigest()


class CheckedSyncRl(SyncRl):
    """SyncRl that, after every iteration, compares a hash of every rank's parameters (bit for bit)
    and of the observations each rank sampled; a difference in parameters raises in every rank.

    Rank 0 keeps ``param_digests`` (one per iteration) and ``obs_digests`` (per iteration, per rank).
    """

    def store_diagnostics(self, itr, traj_infos, opt_info):
        if self.world_size > 1:
            obs = self.sampler.samples_pyt.env.observation if hasattr(self.sampler, "samples_pyt") else None
            mine = (
                params_digest(self.agent),
                None if obs is None else hashlib.sha256(obs.numpy().tobytes()).hexdigest(),
            )
            digests = [None] * self.world_size
            dist.all_gather_object(digests, mine)
            params = {d[0] for d in digests}
            if len(params) != 1:
                raise AssertionError(f"itr {itr}: parameters differ between ranks: {digests}")
            if not hasattr(self, "param_digests"):
                self.param_digests, self.obs_digests = [], []
            self.param_digests.append(mine[0])
            self.obs_digests.append([d[1] for d in digests])
        super().store_diagnostics(itr, traj_infos, opt_info)


def affinities(n: int = 2) -> list[dict]:
    return [dict(master_torch_threads=1, set_affinity=False) for _ in range(n)]


def serial_sampler(EnvCls=make, env_kwargs=None, T=8, B=2, **kwargs) -> SerialSampler:
    return SerialSampler(
        EnvCls,
        CARTPOLE if env_kwargs is None else env_kwargs,
        batch_T=T,
        batch_B=B,
        max_decorrelation_steps=0,
        **kwargs,
    )


def cpu_sampler(EnvCls=make, env_kwargs=None, T=8, B=4, **kwargs) -> CpuSampler:
    return CpuSampler(
        EnvCls,
        CARTPOLE if env_kwargs is None else env_kwargs,
        batch_T=T,
        batch_B=B,
        max_decorrelation_steps=0,
        **kwargs,
    )


def cpu_affinities(n_ranks: int = 2, n_workers: int = 2) -> list[dict]:
    return [
        dict(master_torch_threads=1, workers_cpus=[[0]] * n_workers, set_affinity=False, worker_torch_threads=1)
        for _ in range(n_ranks)
    ]


def a2c_runner(sampler=None, n_itr: int = 5, RunnerCls=CheckedSyncRl, n_ranks: int = 2, seed: int = 3, **kwargs):
    sampler = serial_sampler() if sampler is None else sampler
    torch.manual_seed(seed)
    kwargs.setdefault("affinity", affinities(n_ranks))
    n_steps = n_itr * sampler.batch_spec.size * len(kwargs["affinity"])
    return RunnerCls(
        algo=A2C(learning_rate=3e-3), agent=CategoricalPgAgent(), sampler=sampler, n_steps=n_steps, seed=seed, **kwargs
    )


# A SyncRl script for torchrun: each rank trains A2C for 4 iterations and writes its parameter digests to
# <out_dir>/rank_<rank>.json. Fill in with .format(helpers=..., log_dir=..., out_dir=..., name=...).
RANK_DIGESTS_SCRIPT = """
import json, os, sys
sys.path.insert(0, {helpers!r})
from sync_rl_helpers import a2c_runner
from rlrun.utils.logging.context import logger_context

if __name__ == "__main__":
    runner = a2c_runner(n_itr=4, affinity=dict(master_torch_threads=1, set_affinity=False))
    with logger_context({log_dir!r}, 0, {name!r}, override_prefix=True):
        runner.train()
    out = dict(rank=runner.rank, world_size=runner.world_size, digests=runner.param_digests)
    with open(os.path.join({out_dir!r}, f"rank_{{runner.rank}}.json"), "w") as f:
        json.dump(out, f)
"""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a rendezvous endpoint)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
