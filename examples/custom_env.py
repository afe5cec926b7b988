"""Your own environment on the CPU-parallel sampler: a Gymnasium env, a TrajInfo that records more.

    python examples/custom_env.py                          # PPO, 2 workers started with spawn, 20k steps
    python examples/custom_env.py --start_method fork --n_steps 50000
    python examples/custom_env.py --resume                 # continue after Ctrl-C, from the checkpoint

``Corridor`` is a Gymnasium env written from scratch; ``CorridorTrajInfo`` adds two statistics to
every finished episode, which the runner logs beside the return. Both live at module level and the
training code sits under ``if __name__ == "__main__":``, so workers started with spawn or forkserver
can import them (docs/tutorial_custom_env.md walks through it).
"""

from __future__ import annotations

import argparse
import glob
import os

import gymnasium
import numpy as np

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.ppo import PPO
from rlrun.envs.gym import GymEnvWrapper
from rlrun.envs.traj_info import TrajInfo
from rlrun.runners.minibatch_rl import MinibatchRlEval
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.utils.logging.context import logger_context

LOG_DIR = os.path.join("data", "custom_env")  # one fixed folder, so that --resume finds the run again


def newest_run(run_ID: int) -> str:
    """The ID of the newest run folder of ``run_ID`` under LOG_DIR (``0``, ``0-2``, ...)."""
    runs = glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}")) + glob.glob(os.path.join(LOG_DIR, f"run_{run_ID}-*"))
    if not runs:
        return str(run_ID)
    return os.path.basename(max(runs, key=os.path.getmtime)).removeprefix("run_")


class Corridor(gymnasium.Env):
    """Walk from cell 0 to the last cell of a corridor: +1 on arrival, -0.01 per other step.

    Observations are the one-hot position; action 1 steps right, 0 steps left (the walls stop you).
    The episode ends on arrival (terminated) or after ``max_steps`` steps (truncated).
    ``info["position"]`` reports the cell reached.
    """

    def __init__(self, length: int = 8, max_steps: int = 50) -> None:
        self.length, self.max_steps = int(length), int(max_steps)
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (self.length,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)

    def _observation(self) -> np.ndarray:
        observation = np.zeros(self.length, dtype=np.float32)
        observation[self.position] = 1.0
        return observation

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.position, self.steps = 0, 0
        return self._observation(), {"position": self.position}

    def step(self, action):
        self.position = int(np.clip(self.position + (1 if int(action) == 1 else -1), 0, self.length - 1))
        self.steps += 1
        terminated = self.position == self.length - 1
        truncated = self.steps >= self.max_steps and not terminated
        reward = 1.0 if terminated else -0.01
        return self._observation(), reward, terminated, truncated, {"position": self.position}


def make_corridor(**kwargs) -> GymEnvWrapper:
    """The sampler's ``EnvCls``: builds one env in whichever process calls it."""
    return GymEnvWrapper(Corridor(**kwargs))


class CorridorTrajInfo(TrajInfo):
    """Also records whether the episode reached the goal and the furthest cell it saw."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.ReachedGoal = 0
        self.FurthestCell = 0

    def step(self, observation, action, reward, done, agent_info, env_info) -> None:
        super().step(observation, action, reward, done, agent_info, env_info)
        self.FurthestCell = max(self.FurthestCell, int(env_info.position))
        self.ReachedGoal = int(bool(done) and not bool(env_info.timeout))


def build_and_train(
    n_steps: int = 20_000,
    seed: int = 0,
    n_workers: int = 2,
    start_method: str = "spawn",
    log_interval_steps: int = 5_000,
    resume: bool = False,
) -> dict:
    sampler = CpuSampler(
        EnvCls=make_corridor,
        env_kwargs=dict(length=8, max_steps=50),
        TrajInfoCls=CorridorTrajInfo,
        batch_T=32,
        batch_B=8,
        eval_n_envs=2,
        eval_max_steps=2 * 10 * 50,
        eval_max_trajectories=10,
        start_method=start_method,
    )
    runner = MinibatchRlEval(
        algo=PPO(discount=0.98, learning_rate=1e-3, epochs=4, minibatches=4),
        agent=CategoricalPgAgent(greedy_eval=True),
        sampler=sampler,
        n_steps=n_steps,
        seed=seed,
        log_interval_steps=log_interval_steps,
        affinity=dict(workers_cpus=[[i] for i in range(n_workers)], set_affinity=False, master_torch_threads=1),
        checkpoint=True,  # at every log row, so that --resume continues after Ctrl-C
        resume=resume,
    )
    run_name = newest_run(0) if resume else 0  # a later run of the same ID took run_<ID>-2, ...
    config = dict(n_steps=n_steps, seed=seed)
    with logger_context(LOG_DIR, run_name, "ppo_corridor", config, snapshot_mode="last", resume=resume):
        result = runner.train()
    print(
        f"Final evaluation: return {result['ReturnAverage']:.2f}, reached the goal in "
        f"{result['ReachedGoalAverage']:.0%} of episodes, after {int(result['Diagnostics/CumSteps'])} steps"
    )
    return result


if __name__ == "__main__":  # needed under spawn and forkserver: workers import this file
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n_steps", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n_workers", type=int, default=2)
    parser.add_argument("--start_method", choices=["fork", "spawn", "forkserver"], default="spawn")
    parser.add_argument("--log_interval_steps", type=int, default=5_000)
    parser.add_argument("--resume", action="store_true", help="continue run_0 from its newest checkpoint")
    args = parser.parse_args()
    build_and_train(args.n_steps, args.seed, args.n_workers, args.start_method, args.log_interval_steps, args.resume)
