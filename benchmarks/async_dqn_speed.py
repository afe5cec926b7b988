"""Environment steps per second of asynchronous DQN (AsyncRl + AsyncCpuSampler) against synchronous DQN
(MinibatchRl + CpuSampler) on Atari Pong, at the same replay ratio, measured one after the other in one run.

    python benchmarks/async_dqn_speed.py                      # 3000 steps each, learning from 1000
    python benchmarks/async_dqn_speed.py --n_steps 20000 --min_steps_learn 5000

Both use rlpyt's async-CPU example settings (8 envs x 5 steps, replay ratio 8, batch 32), the default
affinity (one worker per CPU, one torch thread for the optimiser) and the same seed. Speed is counted over
the learning phase only: from the first log row after ``min_steps_learn`` to the end, so start-up and the
replay's warm-up do not count. It prints each run's steps/s and replay ratio, and the ratio async / sync.
"""

from __future__ import annotations

import argparse
import os
import tempfile

from rlrun.agents.dqn.atari.atari_dqn_agent import AtariDqnAgent
from rlrun.algos.dqn.dqn import DQN
from rlrun.envs.atari.atari_env import AtariEnv
from rlrun.runners.async_rl import AsyncRl
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.async_.cpu_sampler import AsyncCpuSampler
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context
from rlrun.utils.plotting import read_progress


def run(kind: str, n_steps: int, min_steps_learn: int, replay_ratio: float, folder: str) -> tuple[float, float]:
    """``(steps per second over the learning phase, replay ratio over it)`` of one run."""
    SamplerCls, RunnerCls = (AsyncCpuSampler, AsyncRl) if kind == "async" else (CpuSampler, MinibatchRl)
    sampler = SamplerCls(EnvCls=AtariEnv, env_kwargs=dict(game="pong"), batch_T=5, batch_B=8, max_decorrelation_steps=0)
    algo = DQN(replay_ratio=replay_ratio, min_steps_learn=min_steps_learn, replay_size=20_000, batch_size=32)
    runner = RunnerCls(
        algo=algo, agent=AtariDqnAgent(), sampler=sampler, n_steps=n_steps, seed=0, log_interval_steps=min_steps_learn
    )
    logger.set_console_output(False)
    try:
        with logger_context(folder, 0, kind, {}, override_prefix=True) as run_dir:
            runner.train()
    finally:
        logger.set_console_output(True)
    p = read_progress(run_dir)
    steps, times, updates = p["Diagnostics/CumSteps"], p["Diagnostics/CumTime (s)"], p["Diagnostics/CumUpdates"]
    first = next(i for i, s in enumerate(steps) if s >= min_steps_learn)
    speed = (steps[-1] - steps[first]) / (times[-1] - times[first])
    ratio = (updates[-1] - updates[first]) * algo.batch_size / (steps[-1] - steps[first])
    return speed, ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n_steps", type=int, default=3000)
    parser.add_argument("--min_steps_learn", type=int, default=1000)
    parser.add_argument("--replay_ratio", type=float, default=8)
    args = parser.parse_args()
    if args.n_steps < 2 * args.min_steps_learn:
        parser.error("n_steps must be at least twice min_steps_learn (the speed is measured after learning starts).")
    with tempfile.TemporaryDirectory() as folder:
        results = {
            kind: run(kind, args.n_steps, args.min_steps_learn, args.replay_ratio, folder) for kind in ("sync", "async")
        }
    for kind, (speed, ratio) in results.items():
        print(f"{kind:5s} DQN, Pong, 8 envs x 5 steps: {speed:8.1f} env steps/s, replay ratio {ratio:.2f}")
    print(
        f"async / sync steps per second: {results['async'][0] / results['sync'][0]:.2f}  (load {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
