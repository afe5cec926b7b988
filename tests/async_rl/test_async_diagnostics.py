"""AsyncRl keeps its diagnostics through ``store_diagnostics``, as MinibatchRl does: a subclass written for rlpyt
that overrides it sees every batch's trajectories and every optimiser step's opt_info, and progress.csv gets
the columns rlpyt users read (real sampler and copier processes, CartPole)."""

from __future__ import annotations

import csv
import math
import os

import pytest

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.algos.dqn.dqn import DQN
from rlrun.envs.gym import make
from rlrun.runners.async_rl import AsyncRl
from rlrun.samplers.async_.serial_sampler import AsyncSerialSampler
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context

N_STEPS, BATCH = 1280, 32  # 40 sampler batches, a row every 10


class RecordingAsyncRl(AsyncRl):
    """A user's subclass, as for rlpyt's runners: it counts what reaches store_diagnostics, then stores it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stored_itrs: list[int] = []
        self.stored_trajs = 0
        self.stored_opt_infos = 0

    def store_diagnostics(self, itr, traj_infos, opt_info):
        self.stored_itrs.append(itr)
        self.stored_trajs += len(traj_infos)
        self.stored_opt_infos += opt_info is not None and len(opt_info.loss) > 0
        super().store_diagnostics(itr, traj_infos, opt_info)


@pytest.mark.timeout(120)
def test_async_rl_stores_trajectories_and_opt_infos_through_store_diagnostics(tmp_path):
    sampler = AsyncSerialSampler(
        EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=4, batch_B=8, max_decorrelation_steps=0
    )
    runner = RecordingAsyncRl(
        algo=DQN(min_steps_learn=320, replay_size=2000, batch_size=32, replay_ratio=1),
        agent=DqnAgent(model_kwargs=dict(hidden_sizes=[16])),
        sampler=sampler,
        n_steps=N_STEPS,
        seed=0,
        log_interval_steps=320,
    )
    with logger_context(str(tmp_path), 0, "async_diagnostics", override_prefix=True) as run_dir:
        logger.set_console_output(False)
        last = runner.train()

    # Every batch reached the hook (its trajectories, keyed by its sampler itr), and the optimiser's steps.
    assert set(range(N_STEPS // BATCH)) <= set(runner.stored_itrs)
    assert runner.stored_itrs == sorted(runner.stored_itrs)  # keys never step back
    assert runner.stored_trajs == runner.diagnostics.cum_completed_trajs > 0
    assert runner.stored_opt_infos > 0

    with open(os.path.join(run_dir, "progress.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4  # after batches 9, 19, 29 and 39
    for key in ("ReturnAverage", "LengthAverage", "lossAverage", "gradNormAverage", "tdAbsErrAverage"):
        assert key in rows[-1], f"{key} missing from progress.csv: {sorted(rows[-1])}"
        assert not math.isnan(float(rows[-1][key])), key
    assert float(rows[-1]["ReturnAverage"]) > 5  # CartPole pays 1 per step; episodes last > 5 steps
    assert last["Diagnostics/CumSteps"] == N_STEPS
