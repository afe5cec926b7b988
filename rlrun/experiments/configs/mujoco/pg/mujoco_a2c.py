"""A2C with the feed-forward Gaussian MuJoCo agent: rlpyt's 1M-step Hopper settings.

Sections: ``env`` for :func:`rlrun.envs.gym.make` (as ``env_kwargs``), ``sampler`` for the sampler,
``algo`` for :class:`~rlrun.algos.pg.a2c.A2C` (``optim`` is its ``optim_kwargs``), ``agent`` for
:class:`~rlrun.agents.pg.mujoco.MujocoFfAgent` (``model`` is its ``model_kwargs``), ``runner`` for
:class:`~rlrun.runners.minibatch_rl.MinibatchRl`.

- ``"a2c_1M"``: 8 envs x 100 steps per batch, Adam at 3e-5, normalised advantages, no entropy
  bonus, effectively no gradient clipping (norm 1e6), a log row every 20k of 1M steps.

The env id: rlpyt used ``"Hopper-v3"``, which Gymnasium no longer builds (its v2/v3 MuJoCo envs need
the retired mujoco-py); ``"Hopper-v5"`` is the current version of that task, on the maintained
``mujoco`` bindings (``pip install rlrun[mujoco]``). ``config`` is ``configs["a2c_1M"]``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["configs", "config"]

configs: dict[str, dict[str, Any]] = {
    "a2c_1M": dict(
        env=dict(id="Hopper-v5"),
        sampler=dict(batch_T=100, batch_B=8, max_decorrelation_steps=1000),
        algo=dict(
            discount=0.99,
            learning_rate=3e-5,
            clip_grad_norm=1e6,
            entropy_loss_coeff=0.0,
            value_loss_coeff=0.5,
            normalize_advantage=True,
        ),
        optim=dict(),
        agent=dict(),
        model=dict(normalize_observation=False),
        runner=dict(n_steps=1e6, log_interval_steps=2e4),
    )
}

config = configs["a2c_1M"]
