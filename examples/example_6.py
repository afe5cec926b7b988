"""A grid of A2C runs on Atari, launched over this machine's cores (rlpyt's example_6).

    python examples/example_6.py                                  # 2 settings x 2 games x 2 runs
    python examples/example_6.py --n_steps 400 --runs_per_setting 1 --max_decorrelation_steps 0  # a smoke run
    python examples/example_6.py --resume     # continue every run of the newest launch after Ctrl-C

Each setting (learning rate with batch_B) is crossed with each game; every combination runs
``runs_per_setting`` times. ``run_experiments`` starts ``example_6a.py`` once per run as its own
process, at most one per run slot of the affinity code (here one core each), and starts the next as
a slot frees up. Logs land in ``data/local/<date>/<time>/example_6/<setting>/<game>/run_<ID>``.
Each run checkpoints at every log row; ``--resume`` launches the grid again into the newest launch's
folder, and each run continues its ``run_<ID>`` from its checkpoint (a finished one logs nothing more).
Run it with the settings of the first launch.
"""

from __future__ import annotations

import argparse
import os

from rlrun.utils.launching.affinity import encode_affinity
from rlrun.utils.launching.exp_launcher import run_experiments
from rlrun.utils.launching.variant import VariantLevel, make_variants

HERE = os.path.dirname(os.path.abspath(__file__))


def launch(
    n_cpu_core: int = 2,
    runs_per_setting: int = 2,
    n_steps: int = int(50e6),
    log_interval_steps: int = int(1e5),
    max_decorrelation_steps: int = 400,
    resume: bool = False,
):
    affinity_code = encode_affinity(
        n_cpu_core=n_cpu_core,
        n_gpu=0,
        cpu_per_run=1,
        set_affinity=True,  # each run keeps to its own core
    )
    variant_levels = []
    learning_rate = [7e-4, 1e-3]
    batch_B = [16, 32]
    values = list(zip(learning_rate, batch_B))
    dir_names = ["example6_{}lr_{}B".format(*v) for v in values]
    keys = [("algo", "learning_rate"), ("sampler", "batch_B")]
    variant_levels.append(VariantLevel(keys, values, dir_names))

    games = ["pong", "seaquest"]
    values = list(zip(games))
    dir_names = ["{}".format(*v) for v in values]
    keys = [("env", "game")]
    variant_levels.append(VariantLevel(keys, values, dir_names))

    variants, log_dirs = make_variants(*variant_levels)
    return run_experiments(
        script=os.path.join(HERE, "example_6a.py"),
        affinity_code=affinity_code,
        experiment_title="example_6",
        runs_per_setting=runs_per_setting,
        variants=variants,
        log_dirs=log_dirs,
        common_args=(str(n_steps), str(log_interval_steps), str(max_decorrelation_steps)),
        resume=resume,  # True: the newest launch of example_6, each run told to continue (RLRUN_RESUME=1)
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n_cpu_core", type=int, default=2, help="cores to spread the runs over")
    parser.add_argument("--runs_per_setting", type=int, default=2)
    parser.add_argument("--n_steps", type=int, default=int(50e6), help="env steps per run")
    parser.add_argument("--log_interval_steps", type=int, default=int(1e5))
    parser.add_argument(
        "--max_decorrelation_steps", type=int, default=400, help="random steps per env before the first batch"
    )
    parser.add_argument("--resume", action="store_true", help="continue the runs of the newest launch")
    args = parser.parse_args()
    launch(
        args.n_cpu_core,
        args.runs_per_setting,
        args.n_steps,
        args.log_interval_steps,
        args.max_decorrelation_steps,
        args.resume,
    )
