"""One run of example_6's grid: A2C on Atari with the served (GPU) sampler (rlpyt's example_6a).

``run_experiments`` calls it as ``example_6a.py <slot_affinity_code> <log_dir> <run_ID> [n_steps
log_interval_steps [max_decorrelation_steps]]``. The run reads its variant from ``log_dir``, merges it
into the defaults below, and logs into ``log_dir/run_<ID>``. Envs reset only between batches
(``GpuWaitResetCollector``). It checkpoints at every log row; launched with ``resume``
(``example_6.py --resume``: ``RLRUN_RESUME=1``) it continues ``run_<ID>`` from its newest checkpoint.
"""

from __future__ import annotations

import sys

from rlrun.agents.pg.atari import AtariFfAgent
from rlrun.algos.pg.a2c import A2C
from rlrun.envs.atari.atari_env import AtariEnv, AtariTrajInfo
from rlrun.runners.minibatch_rl import MinibatchRl
from rlrun.samplers.parallel.gpu.collectors import GpuWaitResetCollector
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.utils.launching.affinity import affinity_from_code
from rlrun.utils.launching.exp_launcher import resume_requested
from rlrun.utils.launching.variant import load_variant, update_config
from rlrun.utils.logging.context import logger_context

DEFAULTS = dict(
    env=dict(game="pong"),
    algo=dict(learning_rate=7e-4),
    sampler=dict(batch_B=16),
)


def build_and_train(
    slot_affinity_code, log_dir, run_ID, n_steps=50e6, log_interval_steps=1e5, max_decorrelation_steps=400
):
    affinity = affinity_from_code(slot_affinity_code)
    resume = resume_requested()  # run_experiments(..., resume=True) launched it to continue its folder
    config = update_config(DEFAULTS, load_variant(log_dir))

    sampler = GpuSampler(
        EnvCls=AtariEnv,
        TrajInfoCls=AtariTrajInfo,
        env_kwargs=config["env"],
        CollectorCls=GpuWaitResetCollector,
        batch_T=5,
        max_decorrelation_steps=int(max_decorrelation_steps),
        **config["sampler"],
    )
    algo = A2C(**config["algo"])
    agent = AtariFfAgent()
    runner = MinibatchRl(
        algo=algo,
        agent=agent,
        sampler=sampler,
        n_steps=float(n_steps),
        log_interval_steps=float(log_interval_steps),
        affinity=affinity,
        checkpoint=True,  # at every log row
        resume=resume,
    )
    name = "a2c_" + config["env"]["game"]
    with logger_context(log_dir, run_ID, name, config, resume=resume):  # the variant's own folder
        runner.train()


if __name__ == "__main__":
    build_and_train(*sys.argv[1:])
