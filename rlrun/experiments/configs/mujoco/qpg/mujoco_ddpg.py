"""DDPG with the MLP DDPG agent: rlpyt's 1M-step settings for MuJoCo tasks, taken from TD3's.

Sections as in :mod:`rlrun.experiments.configs.mujoco.qpg.mujoco_sac` (no ``model`` section, as in
rlpyt), for :class:`~rlrun.algos.qpg.ddpg.DDPG` and :class:`~rlrun.agents.qpg.ddpg_agent.DdpgAgent`.

- ``"ddpg_from_td3_1M_serial"``: one env, one step per iteration, batch 100 and replay ratio 100,
  policy, critic and Polyak (tau 0.01) updates every step, learning rates 1e-3.
- ``"ddpg_from_td3_serial_bstl"``: the same with ``bootstrap_timelimit=True`` spelled out.
- ``"async_serial"``: the bstl settings with 5 steps per batch and ``updates_per_sync=1``, for
  rlpyt's asynchronous runner (not in rlrun yet).

The env id is ``"Hopper-v5"`` (rlpyt: ``"Hopper-v3"``). ``config`` is
``configs["ddpg_from_td3_1M_serial"]``.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["configs", "config"]

configs: dict[str, dict[str, Any]] = {
    "ddpg_from_td3_1M_serial": dict(
        agent=dict(model_kwargs=None, q_model_kwargs=None),
        algo=dict(
            discount=0.99,
            batch_size=100,
            replay_ratio=100,
            target_update_tau=0.01,
            target_update_interval=1,
            policy_update_interval=1,
            learning_rate=1e-3,
            q_learning_rate=1e-3,
        ),
        env=dict(id="Hopper-v5"),
        optim=dict(),
        runner=dict(n_steps=1e6, log_interval_steps=1e4),
        sampler=dict(
            batch_T=1,
            batch_B=1,
            max_decorrelation_steps=0,
            eval_n_envs=5,
            eval_max_steps=int(51e3),
            eval_max_trajectories=50,
        ),
    )
}

configs["ddpg_from_td3_serial_bstl"] = copy.deepcopy(configs["ddpg_from_td3_1M_serial"])
configs["ddpg_from_td3_serial_bstl"]["algo"]["bootstrap_timelimit"] = True

configs["async_serial"] = copy.deepcopy(configs["ddpg_from_td3_serial_bstl"])
configs["async_serial"]["sampler"]["batch_T"] = 5
configs["async_serial"]["algo"]["updates_per_sync"] = 1

config = configs["ddpg_from_td3_1M_serial"]
