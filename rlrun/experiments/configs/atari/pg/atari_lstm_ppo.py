"""PPO with the recurrent Atari agent: rlpyt's settings, one dict of keyword dicts per name.

Sections: ``env`` for :class:`~rlrun.envs.atari.atari_env.AtariEnv` (one frame per observation),
``sampler`` for the sampler, ``algo`` for :class:`~rlrun.algos.pg.ppo.PPO` (``optim`` is its
``optim_kwargs``), ``agent`` for :class:`~rlrun.agents.pg.atari.AtariLstmAgent` (``model`` is its
``model_kwargs``), ``runner`` for :class:`~rlrun.runners.minibatch_rl.MinibatchRl`. Recurrent agents
train with a wait-reset collector (see ``docs/recurrent_pg.md``).

- ``"0"``: 32 envs x 64 steps per batch, GAE lambda 0.98, Adam at 1e-3 decaying linearly to zero
  over the run, 50M steps. No ``minibatches`` or ``epochs``, as in rlpyt: PPO's defaults, 4 epochs
  of 4 minibatches of 8 envs' whole sequences each.

``config`` is ``configs["0"]``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["configs", "config"]

configs: dict[str, dict[str, Any]] = {
    "0": dict(
        env=dict(game="pong", num_img_obs=1),
        sampler=dict(batch_T=64, batch_B=32, max_decorrelation_steps=1000),
        algo=dict(
            discount=0.99,
            learning_rate=1e-3,
            value_loss_coeff=1.0,
            entropy_loss_coeff=0.01,
            clip_grad_norm=1.0,
            gae_lambda=0.98,
            linear_lr_schedule=True,
        ),
        optim=dict(),
        agent=dict(),
        model=dict(),
        runner=dict(n_steps=50e6),
    )
}

config = configs["0"]
