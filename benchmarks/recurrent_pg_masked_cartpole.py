"""Steps to solve velocity-masked CartPole with recurrent PPO (or A2C), one process per seed.

Solved: the first greedy evaluation over 10 whole episodes averaging at least 475, every 5k steps
(tests/algos/pg/test_recurrent_ppo_learning.py), within ``--steps``. Settings are those of
tests/algos/pg/masked_cartpole.py; ``--set key=value`` overrides an algorithm keyword and
``--sampler key=value`` a sampler one and ``--model key=value`` a model one. Prints one JSON line
per seed, then a summary.

    python benchmarks/recurrent_pg_masked_cartpole.py --seeds 0 1 2 3 4 --jobs 2
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "algos" / "pg"))


def _value(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def run_seed(
    seed: int,
    algo: str,
    steps: int,
    algo_kwargs: dict,
    sampler_kwargs: dict,
    model_kwargs: dict,
    mid_batch_reset: bool | None = None,
) -> dict:
    """Train one seed until solved or ``steps``; its steps to solve, wall time and evaluation curve."""
    from masked_cartpole import build_runner, steps_to_solve

    start = time.perf_counter()
    runner = build_runner(
        seed,
        steps,
        5000,
        algo=algo,
        ppo_kwargs=algo_kwargs,
        sampler_kwargs=sampler_kwargs,
        model_kwargs=model_kwargs,
        mid_batch_reset=mid_batch_reset,
    )
    with tempfile.TemporaryDirectory() as log_dir:
        solved, curve = steps_to_solve(runner, seed, log_dir, f"recurrent_{algo}_masked_cartpole")
    return dict(
        seed=seed,
        algo=algo,
        solved=solved,
        wall_s=round(time.perf_counter() - start, 1),
        best=max(r for _s, r in curve),
        curve=[(int(s), round(r, 1)) for s, r in curve],
        algo_kwargs=algo_kwargs,
        sampler_kwargs=sampler_kwargs,
        model_kwargs=model_kwargs,
        mid_batch_reset=mid_batch_reset,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algo", choices=["ppo", "a2c"], default="ppo")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--steps", type=int, default=150_000)
    parser.add_argument("--jobs", type=int, default=1, help="seeds run at once, one process each")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="algorithm keywords")
    parser.add_argument("--sampler", nargs="*", default=[], metavar="KEY=VALUE", help="sampler keywords")
    parser.add_argument(
        "--collector",
        choices=["reset", "wait"],
        help="ResetCollector (done envs reset at once) or WaitResetCollector; by default the algorithm's setting",
    )
    parser.add_argument("--model", nargs="*", default=[], metavar="KEY=VALUE", help="model keywords")
    args = parser.parse_args()
    algo_kwargs = {k: _value(v) for k, v in (kv.split("=", 1) for kv in args.set)}
    sampler_kwargs = {k: _value(v) for k, v in (kv.split("=", 1) for kv in args.sampler)}
    model_kwargs = {k: _value(v) for k, v in (kv.split("=", 1) for kv in args.model)}
    mid_batch_reset = None if args.collector is None else args.collector == "reset"
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = [
            pool.submit(run_seed, s, args.algo, args.steps, algo_kwargs, sampler_kwargs, model_kwargs, mid_batch_reset)
            for s in args.seeds
        ]
        results = []
        for future in futures:
            results.append(future.result())
            print(json.dumps(results[-1]), flush=True)
    solved = [r for r in results if r["solved"] is not None]
    print(
        f"{args.algo} {algo_kwargs} {sampler_kwargs} {model_kwargs} collector={args.collector or 'default'}: "
        f"solved {len(solved)}/{len(results)} "
        f"within {args.steps} steps; "
        f"steps to solve {[r['solved'] for r in results]}; wall {[r['wall_s'] for r in results]} s",
        flush=True,
    )


if __name__ == "__main__":
    main()
