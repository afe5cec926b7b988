"""The least an A2C step on CartPole can cost, beside rlrun's and Stable-Baselines3's whole training loops.

    python benchmarks/a2c_floor.py                  # 10 alternating rounds of 50 iterations each
    python benchmarks/a2c_floor.py --rounds 3 --iterations 10

All three run the RL Zoo's A2C on CartPole-v1 (8 envs x 5 steps, one RMSprop step at 7e-4 per batch,
gradient norm clipped at 0.5, no entropy bonus; SB3's MLPs: separate 64x64 tanh networks for the policy
and the value) for the same number of iterations, in turns, on one torch thread:

- ``sb3``: ``model.learn`` over a round's steps (SB3's rollout collection and ``train()``);
- ``rlrun``: the runner's iteration (``train_iteration``: ``obtain_samples``, ``optimize_agent``, ``store_diagnostics``)
  with ``rlrun.experiments.configs.cartpole``'s config, as ``learning_cartpole.py`` times it;
- ``bare``: a Gymnasium ``SyncVectorEnv`` (resetting in the same step, so no step is wasted), the model
  under ``no_grad`` with ``torch.multinomial``, each env's episode return summed, and a hand-written A2C
  update: discounted returns in numpy bootstrapped from the value head alone, one forward over the 40
  steps, the loss, backward, ``clip_grad_norm_`` and RMSprop on torch's multi-tensor kernels. Nothing is
  checked, nothing is logged, nothing is written except what the update reads: the least any framework
  can do. It learns: its episodes' average return over the last round is printed beside the times.

Printed: microseconds per env step of each over all rounds, and the ratios. ``bare / sb3`` bounds what any
framework can reach at these settings: at equal steps to solve, the wall-time ratio to SB3 cannot fall below
it. Needs ``pip install stable-baselines3``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import gymnasium as gym
import numpy as np
import torch

BATCH_T, BATCH_B = 5, 8
DISCOUNT, LEARNING_RATE, MAX_GRAD_NORM, VALUE_COEFF = 0.99, 7e-4, 0.5, 0.5  # SB3's vf_coef on the MSE


def sb3_stepper(seed: int) -> Callable[[int], None]:
    from learning_cartpole import sb3_model

    model = sb3_model("a2c", seed)
    model.learn(BATCH_T * BATCH_B)  # SB3's first learn() sets up its logger and resets the envs

    def advance(iterations: int) -> None:
        model.learn(iterations * BATCH_T * BATCH_B, reset_num_timesteps=False)

    return advance


@contextmanager
def rlrun_stepper(seed: int) -> Iterator[Callable[[int], None]]:
    from rlrun.experiments.configs.cartpole import build_runner
    from rlrun.utils.logging import logger
    from rlrun.utils.logging.context import logger_context

    runner = build_runner("a2c", seed=seed, n_steps=10**9, log_interval_steps=10**9)
    itr = [0]

    def advance(iterations: int) -> None:
        for _ in range(iterations):
            runner.train_iteration(itr[0])
            itr[0] += 1

    with tempfile.TemporaryDirectory() as tmp, logger.quiet_console():
        with logger_context(tmp, seed, "a2c_floor", {}, override_prefix=True):
            runner.startup()
            try:
                yield advance
            finally:
                runner.shutdown()


class BareA2C:
    """A2C with nothing but the work itself (see the module docstring)."""

    def __init__(self, seed: int) -> None:
        from rlrun.models.pg.mlp import CategoricalPgMlpModel

        torch.manual_seed(seed)
        self.envs = gym.vector.SyncVectorEnv(
            [lambda: gym.make("CartPole-v1") for _ in range(BATCH_B)], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
        )
        self.obs, _ = self.envs.reset(seed=seed)
        self.model = CategoricalPgMlpModel(
            self.envs.single_observation_space.shape, int(self.envs.single_action_space.n)
        )
        self.params = list(self.model.parameters())
        self.optimizer = torch.optim.RMSprop(self.params, lr=LEARNING_RATE, alpha=0.99, eps=1e-5, foreach=True)
        self.observations = np.zeros((BATCH_T, BATCH_B, 4), np.float32)
        self.actions = np.zeros((BATCH_T, BATCH_B), np.int64)
        self.rewards = np.zeros((BATCH_T, BATCH_B), np.float32)
        self.dones = np.zeros((BATCH_T, BATCH_B), np.float32)
        self.episode_return = np.zeros(BATCH_B)
        self.finished: list[float] = []
        self.seconds = {"env steps": 0.0, "update": 0.0}  # the rest of the time is the policy's and the loop's

    def reset_timers(self) -> None:
        self.seconds = dict.fromkeys(self.seconds, 0.0)

    def advance(self, iterations: int) -> None:
        for _ in range(iterations):
            self._collect()
            start = time.perf_counter()
            self._update()
            self.seconds["update"] += time.perf_counter() - start

    @torch.no_grad()
    def _collect(self) -> None:
        for t in range(BATCH_T):
            self.observations[t] = self.obs
            pi, _value = self.model(torch.from_numpy(self.obs))
            action = torch.multinomial(pi, 1).squeeze(-1).numpy()
            start = time.perf_counter()
            self.obs, reward, terminated, truncated, _info = self.envs.step(action)
            self.seconds["env steps"] += time.perf_counter() - start
            done = terminated | truncated
            self.actions[t], self.rewards[t], self.dones[t] = action, reward, terminated
            self.episode_return += reward
            if done.any():
                self.finished.extend(self.episode_return[done].tolist())
                self.episode_return[done] = 0.0
        self.bootstrap = self.model.v(torch.from_numpy(self.obs)).squeeze(-1).numpy()

    def _update(self) -> None:
        returns = np.empty_like(self.rewards)
        ret = self.bootstrap
        for t in reversed(range(BATCH_T)):
            ret = self.rewards[t] + DISCOUNT * ret * (1.0 - self.dones[t])
            returns[t] = ret
        pi, value = self.model(torch.from_numpy(self.observations.reshape(BATCH_T * BATCH_B, -1)))
        actions = torch.from_numpy(self.actions.reshape(-1, 1))
        log_prob = torch.log(pi.gather(1, actions).squeeze(1))
        return_ = torch.from_numpy(returns.reshape(-1))
        advantage = return_ - value.detach()
        loss = -(log_prob * advantage).mean() + VALUE_COEFF * torch.nn.functional.mse_loss(value, return_)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, MAX_GRAD_NORM, foreach=True)
        self.optimizer.step()


def timed(advance: Callable[[int], None], iterations: int) -> float:
    start = time.perf_counter()
    advance(iterations)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=50, help="A2C iterations (40 env steps each) per round")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)

    bare = BareA2C(args.seed)
    sb3 = sb3_stepper(args.seed)
    with rlrun_stepper(args.seed) as rlrun:
        methods = {"sb3": sb3, "rlrun": rlrun, "bare": bare.advance}
        for advance in methods.values():  # warm up
            advance(5)
        seconds: dict[str, list[float]] = {name: [] for name in methods}
        bare.reset_timers()
        episodes_before_last_round = 0
        for i in range(args.rounds):
            if i == args.rounds - 1:
                episodes_before_last_round = len(bare.finished)
            for name, advance in methods.items():
                seconds[name].append(timed(advance, args.iterations))

    steps = args.rounds * args.iterations * BATCH_T * BATCH_B
    per_step = {name: 1e6 * sum(values) / steps for name, values in seconds.items()}
    print(
        f"A2C on CartPole-v1, the RL Zoo's settings ({BATCH_B} envs x {BATCH_T} steps, one RMSprop step per batch), "
        f"{args.rounds} rounds of {args.iterations} iterations each, in turns, 1 torch thread"
    )
    for name, value in per_step.items():
        print(f"  {name:6s} {value:6.1f} us per env step")
    parts = {name: 1e6 * value / steps for name, value in bare.seconds.items()}
    parts["policy and loop"] = per_step["bare"] - sum(parts.values())
    print("  the bare loop's step: " + ", ".join(f"{name} {value:.1f} us" for name, value in parts.items()))
    round_ratios = {
        pair: statistics.median(a / b for a, b in zip(seconds[pair[0]], seconds[pair[1]]))
        for pair in (("rlrun", "sb3"), ("bare", "sb3"), ("rlrun", "bare"))
    }
    for (a, b), median in round_ratios.items():
        print(f"  {a} / {b}: {per_step[a] / per_step[b]:.2f}  (median of the rounds' ratios {median:.2f})")
    last = bare.finished[episodes_before_last_round:] or bare.finished[-10:]
    trained = (args.rounds * args.iterations + 5) * BATCH_T * BATCH_B
    if last:
        print(
            f"  the bare loop learns: its {len(last)} episodes of the last round averaged {statistics.fmean(last):.0f} "
            f"(after {trained:,} steps; 500 is the most)"
        )
    print(
        f"  At equal steps to solve, no framework's wall time at these settings falls below "
        f"{per_step['bare'] / per_step['sb3']:.2f} of SB3's."
    )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # learning_cartpole's SB3 settings
    sys.exit(main())
