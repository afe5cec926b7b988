"""Append and sample speed of the uniform and prioritized transition replays (CartPole-shaped rows).

Each round appends ``T x B`` sampler batches and draws ``batch_B``-transition batches (the prioritized
replay also takes new priorities), as DQN does per iteration; the rounds of the two buffers alternate, so
a load on the machine touches both alike. Times are this process's CPU time (``time.process_time``), which
other processes on a shared machine disturb far less than wall time. Printed: the fastest round's
microseconds of one append and of one draw, and the median round's.
Constructs the buffers by keyword only, so the same script times any rlrun version:

    PYTHONPATH=. python benchmarks/replay_speed.py
    PYTHONPATH=/path/to/other/rlrun python benchmarks/replay_speed.py --rounds 9
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from rlrun.algos.dqn.dqn import SamplesToBufferTl
from rlrun.replays.non_sequence.prioritized import PrioritizedReplayBuffer
from rlrun.replays.non_sequence.uniform import UniformReplayBuffer

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--rounds", type=int, default=7)
parser.add_argument("--calls", type=int, default=400, help="appends and draws per round")
parser.add_argument("--T", type=int, default=4)
parser.add_argument("--B", type=int, default=8)
parser.add_argument("--batch-B", type=int, default=64)
args = parser.parse_args()

example = SamplesToBufferTl(np.zeros(4, np.float32), np.int64(0), np.float32(0), np.bool_(False), np.bool_(False))
rng = np.random.default_rng(0)
T, B = args.T, args.B


def make_batch() -> SamplesToBufferTl:
    timeout = rng.random((T, B)) < 0.005
    done = (rng.random((T, B)) < 0.02) | timeout  # a time-limit cut ends the episode too
    observation = rng.standard_normal((T, B, 4)).astype(np.float32)
    return SamplesToBufferTl(observation, rng.integers(0, 2, (T, B)), np.ones((T, B), np.float32), done, timeout)


batches = [make_batch() for _ in range(64)]
replays = {
    "uniform": UniformReplayBuffer(example=example, size=100_000, B=B, discount=0.99, n_step_return=3),
    "prioritized": PrioritizedReplayBuffer(example=example, size=100_000, B=B, discount=0.99, n_step_return=3),
}
for replay in replays.values():
    for i in range(100_000 // (T * B) + 50):  # past the wrap
        replay.append_samples(batches[i % len(batches)])

append_us: dict[str, list[float]] = {k: [] for k in replays}
sample_us: dict[str, list[float]] = {k: [] for k in replays}
priorities = rng.random(args.batch_B)
for _ in range(args.rounds):
    for name, replay in replays.items():
        t0 = time.process_time()
        for i in range(args.calls):
            replay.append_samples(batches[i % len(batches)])
        append_us[name].append((time.process_time() - t0) / args.calls * 1e6)
        t0 = time.process_time()
        for _ in range(args.calls):
            replay.sample_batch(args.batch_B)
            if name == "prioritized":
                replay.update_batch_priorities(priorities)
        sample_us[name].append((time.process_time() - t0) / args.calls * 1e6)
for name in replays:
    a, s = append_us[name], sample_us[name]
    print(
        f"{name:12s} append_samples({T}x{B}) {min(a):6.1f} us (median {statistics.median(a):6.1f})   "
        f"sample_batch({args.batch_B}){' + update_batch_priorities' if name == 'prioritized' else ''} "
        f"{min(s):6.1f} us (median {statistics.median(s):6.1f})"
    )
