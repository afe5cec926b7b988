"""Memory per step and append/sample speed of DQN's replays, filled past the wrap with Atari-shaped data.

``frame`` stores each frame once (``UniformReplayFrameBuffer``, DQN's default for Atari), ``whole``
stores whole frame stacks (``UniformReplayBuffer``), ``pri_frame`` is the prioritized frame replay.
Frames are random [104, 80] images in stacks of 4 with episodes of about 800 steps; the costs per
iteration are those of example_1 (append 4 steps, sample 32). RSS is this process's resident memory.

    python benchmarks/replay_memory.py frame 1000000      # rlpyt's example_1 size: must stay under 8 GiB
    python benchmarks/replay_memory.py whole 100000
    python benchmarks/replay_memory.py pri_frame 1000000
"""

import argparse
import time

import numpy as np
import psutil

from rlrun.algos.dqn.dqn import SamplesToBufferTl
from rlrun.replays.non_sequence.frame import PrioritizedReplayFrameBuffer, UniformReplayFrameBuffer
from rlrun.replays.non_sequence.uniform import UniformReplayBuffer

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("kind", choices=["frame", "whole", "pri_frame"])
parser.add_argument("size", type=int, help="replay size in steps")
args = parser.parse_args()
kind, size = args.kind, args.size
Cls = dict(frame=UniformReplayFrameBuffer, whole=UniformReplayBuffer, pri_frame=PrioritizedReplayFrameBuffer)[kind]
proc = psutil.Process()
rss0 = proc.memory_info().rss
example = SamplesToBufferTl(
    np.zeros((4, 104, 80), np.uint8), np.int64(0), np.float32(0), np.bool_(False), np.bool_(False)
)
replay = Cls(example=example, size=size, B=1, discount=0.99, n_step_return=1)
rng = np.random.default_rng(0)
pool = rng.integers(0, 256, (509, 104, 80), dtype=np.uint8)  # frames cycled through (content does not matter)
stack = np.zeros((4, 104, 80), np.uint8)
state = dict(stack=stack, count=0)


def next_batch(T):
    """T more steps of one stream of stacked frames, episodes of ~800 steps."""
    obs = np.empty((T, 1, 4, 104, 80), np.uint8)
    done = rng.random((T, 1)) < 1 / 800
    stack = state["stack"]
    for t in range(T):
        obs[t, 0] = stack
        frame = pool[state["count"] % len(pool)]
        state["count"] += 1
        stack = np.concatenate([np.zeros((3, 104, 80), np.uint8) if done[t, 0] else stack[1:], frame[None]])
    state["stack"] = stack
    return SamplesToBufferTl(
        obs, np.zeros((T, 1), np.int64), np.zeros((T, 1), np.float32), done, np.zeros((T, 1), bool)
    )


t0 = time.perf_counter()
while state["count"] < size + 2000:  # past the wrap
    replay.append_samples(next_batch(1000))
count = state["count"]
fill = time.perf_counter() - t0
rss = proc.memory_info().rss
# Per-iteration costs as in example_1: append 4 steps, sample 32 transitions.
n = 300
smalls = [next_batch(4) for _ in range(n)]
t0 = time.perf_counter()
for small in smalls:
    replay.append_samples(small)
append_ms = (time.perf_counter() - t0) / n * 1e3
t0 = time.perf_counter()
for _ in range(n):
    batch = replay.sample_batch(32)
    if kind.startswith("pri"):
        replay.update_batch_priorities(np.random.random(32))
sample_ms = (time.perf_counter() - t0) / n * 1e3
gib = 2**30
print(
    f"{Cls.__name__} size={size}: filled {count} steps in {fill:.1f} s; RSS {rss / gib:.2f} GiB "
    f"(replay adds {(rss - rss0) / gib:.2f} GiB, {(rss - rss0) / size:.0f} B/step; "
    f"bytes_per_step() {replay.storage.bytes_per_step(example)}); append(4 steps) {append_ms:.3f} ms, "
    f"sample_batch(32){' + update' if kind.startswith('pri') else ''} {sample_ms:.3f} ms; peak RSS "
    f"{psutil.Process().memory_info().rss / gib:.2f} GiB"
)
