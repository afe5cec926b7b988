"""Frames per second of AtariEnv against raw ALEInterface stepping the same frames, in one run.

Both play ``frame_skip`` frames per random action (drawn in advance from one seed), with sticky
actions off, restarting at game over; the raw loop fetches no screens. Only frames of agent steps
count (AtariEnv's start no-ops are not credited to it). Rates are frames per second of this
process's CPU time, so other busy processes on the machine do not skew the ratio; on an idle machine
that equals wall-clock time. Raw and env take turns of ``--chunk`` seconds, so a disturbance hits
both alike; each repeat is ``--seconds`` per side. Printed: frames/s of both per repeat, best and
median, and the headline ratio: the median over adjacent turn pairs of env rate / raw rate.
``--check`` exits with status 1 when that ratio is under ``--min-ratio``. ``--frame-shape 84 84`` measures
AtariEnv's area-averaged frames (``AtariEnv(frame_shape=(84, 84))``) instead of rlpyt's 104x80.

    python benchmarks/atari_env_speed.py --check
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from rlrun.envs.atari import AtariEnv
from rlrun.envs.atari.ale_backend import ale_backend

CHECK_EVERY = 64  # steps between clock reads
clock = time.process_time  # CPU seconds of this process: other processes on the machine do not count


class RawAle:
    """A bare ALEInterface playing ``frame_skip`` act() calls per action, reading no screens."""

    def __init__(self, game: str, frame_skip: int, actions: np.ndarray) -> None:
        backend = ale_backend()
        self.ale = backend.new_interface(backend.rom_path(game), seed=0, repeat_action_probability=0.0)
        codes = backend.action_codes(self.ale)
        self.plan = [codes[a] for a in actions]
        self.frame_skip = frame_skip
        self.steps = 0

    def run(self, seconds: float) -> float:
        """Play for ``seconds`` of CPU time; returns frames per CPU second."""
        act, game_over, reset_game = self.ale.act, self.ale.game_over, self.ale.reset_game
        plan, n, frame_skip = self.plan, len(self.plan), self.frame_skip
        steps = self.steps
        start = clock()
        deadline = start + seconds
        while clock() < deadline:
            for _ in range(CHECK_EVERY):
                code = plan[steps % n]
                for _ in range(frame_skip):
                    act(code)
                if game_over():
                    reset_game()
                steps += 1
        elapsed = clock() - start
        frames = (steps - self.steps) * frame_skip
        self.steps = steps
        return frames / elapsed


class EnvLoop:
    """``AtariEnv.step`` with the same actions, resetting on ``done``."""

    def __init__(self, env: AtariEnv, actions: np.ndarray) -> None:
        self.env = env
        self.plan = actions.tolist()
        self.steps = 0
        env.reset()

    def run(self, seconds: float) -> float:
        """Play for ``seconds`` of CPU time; returns frames (of agent steps) per CPU second."""
        step, reset = self.env.step, self.env.reset
        plan, n = self.plan, len(self.plan)
        steps = self.steps
        start = clock()
        deadline = start + seconds
        while clock() < deadline:
            for _ in range(CHECK_EVERY):
                if step(plan[steps % n]).done:
                    reset()
                steps += 1
        elapsed = clock() - start
        frames = (steps - self.steps) * self.env.frame_skip
        self.steps = steps
        return frames / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="pong")
    parser.add_argument("--frame-skip", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds of each repeat, per side")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--chunk", type=float, default=0.25, help="CPU seconds of one raw or env turn")
    parser.add_argument("--check", action="store_true", help="exit 1 if the ratio is under --min-ratio")
    parser.add_argument("--min-ratio", type=float, default=0.90)
    parser.add_argument(
        "--frame-shape", type=int, nargs=2, metavar=("H", "W"), help="AtariEnv(frame_shape=(H, W)), e.g. 84 84"
    )
    args = parser.parse_args(argv)

    frame_shape = None if args.frame_shape is None else tuple(args.frame_shape)
    env = AtariEnv(args.game, frame_skip=args.frame_skip, repeat_action_probability=0.0, frame_shape=frame_shape)
    env.seed(0)
    actions = np.random.default_rng(0).integers(0, env.action_space.n, size=100_000)
    print(
        f"{args.game}, frame_skip {args.frame_skip}: {args.repeats} repeats of {args.seconds:g} CPU-s per side, "
        f"in alternating turns of {args.chunk:g} s; ALE from {ale_backend().name}, "
        f"frames {env.frame_shape[0]}x{env.frame_shape[1]}, fast screen path: {env.uses_fast_screen}"
    )
    raw_loop, env_loop = RawAle(args.game, args.frame_skip, actions), EnvLoop(env, actions)
    raw_loop.run(0.2)  # warm-up: first frames, caches
    env_loop.run(0.2)
    raw, wrapped, turn_ratios = [], [], []
    turns = max(1, round(args.seconds / args.chunk))
    for i in range(args.repeats):
        raw_rates, env_rates = [], []
        for _ in range(turns):
            raw_rates.append(raw_loop.run(args.chunk))
            env_rates.append(env_loop.run(args.chunk))
            turn_ratios.append(env_rates[-1] / raw_rates[-1])
        raw.append(len(raw_rates) / sum(1 / r for r in raw_rates))  # frames per total CPU second
        wrapped.append(len(env_rates) / sum(1 / r for r in env_rates))
        print(f"  repeat {i + 1}: raw ALE {raw[-1]:8.0f} frames/s   AtariEnv {wrapped[-1]:8.0f} frames/s")
    ratio = statistics.median(turn_ratios)
    print(
        f"best:   raw ALE {max(raw):8.0f} frames/s   AtariEnv {max(wrapped):8.0f} frames/s "
        f"({max(wrapped) / args.frame_skip:.0f} steps/s)   ratio {max(wrapped) / max(raw):.3f}"
    )
    print(
        f"median: raw ALE {statistics.median(raw):8.0f} frames/s   "
        f"AtariEnv {statistics.median(wrapped):8.0f} frames/s   ratio {statistics.median(wrapped) / statistics.median(raw):.3f}"
    )
    print(f"ratio AtariEnv / raw ALE, median over {len(turn_ratios)} adjacent turns: {ratio:.3f}")
    if args.check and ratio < args.min_ratio:
        print(f"FAIL: AtariEnv runs at {ratio:.3f} of raw ALE's rate, under {args.min_ratio:.2f}.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
