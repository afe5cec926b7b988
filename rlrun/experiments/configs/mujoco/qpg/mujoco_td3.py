"""TD3 with the MLP TD3 agent: rlpyt's 1M-step settings for MuJoCo tasks.

Sections as in :mod:`rlrun.experiments.configs.mujoco.qpg.mujoco_sac`, for
:class:`~rlrun.algos.qpg.td3.TD3` and :class:`~rlrun.agents.qpg.td3_agent.Td3Agent` (``[400, 300]``
networks).

- ``"td3_1M_serial"``: one env, one step per iteration, batch 100 and replay ratio 100 (one gradient
  step per env step), policy and targets every second step, learning rates 1e-3.
- ``"td3_serial_bstl"``: the same with ``bootstrap_timelimit=True`` spelled out (rlrun's default).
- ``"async_cpu"``: the bstl settings with 5 x 3 batches and ``updates_per_sync=1``, for rlpyt's
  asynchronous runner (not in rlrun yet; under ``MinibatchRl`` it trains synchronously).

``learning_rate`` sets TD3's policy rate (see :class:`~rlrun.algos.qpg.td3.TD3`). The env id is
``"Hopper-v5"`` (rlpyt: ``"Hopper-v3"``). ``config`` is ``configs["td3_1M_serial"]``.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["configs", "config"]

configs: dict[str, dict[str, Any]] = {
    "td3_1M_serial": dict(
        agent=dict(model_kwargs=None, q_model_kwargs=None),
        algo=dict(
            discount=0.99,
            batch_size=100,
            replay_ratio=100,
            target_update_tau=0.005,
            target_update_interval=2,
            policy_update_interval=2,
            learning_rate=1e-3,
            q_learning_rate=1e-3,
        ),
        env=dict(id="Hopper-v5"),
        model=dict(),
        optim=dict(),
        runner=dict(n_steps=1e6, log_interval_steps=1e4),
        sampler=dict(
            batch_T=1,
            batch_B=1,
            max_decorrelation_steps=0,
            eval_n_envs=6,
            eval_max_steps=int(51e3),
            eval_max_trajectories=50,
        ),
    )
}

configs["td3_serial_bstl"] = copy.deepcopy(configs["td3_1M_serial"])
configs["td3_serial_bstl"]["algo"]["bootstrap_timelimit"] = True

configs["async_cpu"] = copy.deepcopy(configs["td3_serial_bstl"])
configs["async_cpu"]["sampler"].update(batch_T=5, batch_B=3)
configs["async_cpu"]["algo"]["updates_per_sync"] = 1

config = configs["td3_1M_serial"]
