"""SAC with the MLP SAC agent: rlpyt's 1M-step settings for MuJoCo tasks.

Sections: ``env`` for :func:`rlrun.envs.gym.make` (as ``env_kwargs``, also for evaluation), ``sampler``
for the sampler, ``algo`` for :class:`~rlrun.algos.qpg.sac.SAC` (``optim`` is its ``optim_kwargs``),
``agent`` for :class:`~rlrun.agents.qpg.sac_agent.SacAgent` (``None`` model kwargs: the agent's
``[256, 256]``), ``runner`` for :class:`~rlrun.runners.minibatch_rl.MinibatchRlEval`.

- ``"sac_1M_serial"``: one env, one step per iteration and one gradient step per env step (batch 256,
  replay ratio 256), Adam at 3e-4, Polyak tau 0.005 every step, learned temperature.
- ``"sac_serial_bstl"``: the same, with ``bootstrap_timelimit=True`` spelled out (rlrun's default).

The env id: rlpyt used ``"Hopper-v3"``; ``"Hopper-v5"`` is its current Gymnasium version (``make``
maps the old id with a warning). ``config`` is ``configs["sac_1M_serial"]``.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["configs", "config"]

configs: dict[str, dict[str, Any]] = {
    "sac_1M_serial": dict(
        agent=dict(model_kwargs=None, q_model_kwargs=None, v_model_kwargs=None),
        algo=dict(
            discount=0.99,
            batch_size=256,
            replay_ratio=256,
            target_update_tau=0.005,
            target_update_interval=1,
            learning_rate=3e-4,
            reparameterize=True,
            reward_scale=1,
            target_entropy="auto",
        ),
        env=dict(id="Hopper-v5"),
        model=dict(),
        optim=dict(),
        runner=dict(n_steps=1e6, log_interval_steps=1e4),
        sampler=dict(
            batch_T=1,
            batch_B=1,
            max_decorrelation_steps=0,
            eval_n_envs=4,
            eval_max_steps=int(51e3),
            eval_max_trajectories=50,
        ),
    )
}

configs["sac_serial_bstl"] = copy.deepcopy(configs["sac_1M_serial"])
configs["sac_serial_bstl"]["algo"]["bootstrap_timelimit"] = True

config = configs["sac_1M_serial"]
