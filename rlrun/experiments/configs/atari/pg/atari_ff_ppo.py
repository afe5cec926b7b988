"""PPO with the feed-forward Atari agent: rlpyt's settings, one dict of keyword dicts per name.

Sections: ``env`` for :class:`~rlrun.envs.atari.atari_env.AtariEnv`, ``sampler`` for the sampler,
``algo`` for :class:`~rlrun.algos.pg.ppo.PPO` (``optim`` is its ``optim_kwargs``), ``agent`` for
:class:`~rlrun.agents.pg.atari.AtariFfAgent` (``model`` is its ``model_kwargs``), ``runner`` for
:class:`~rlrun.runners.minibatch_rl.MinibatchRl`.

- ``"0"``: 32 envs x 64 steps per batch, 4 epochs of 4 minibatches, GAE lambda 0.98, Adam at
  1e-3 decaying linearly to zero over the run, 50M steps.

``config`` is ``configs["0"]``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["configs", "config"]

configs: dict[str, dict[str, Any]] = {
    "0": dict(
        env=dict(game="pong"),
        sampler=dict(batch_T=64, batch_B=32, max_decorrelation_steps=1000),
        algo=dict(
            discount=0.99,
            learning_rate=1e-3,
            value_loss_coeff=1.0,
            entropy_loss_coeff=0.01,
            clip_grad_norm=1.0,
            gae_lambda=0.98,
            linear_lr_schedule=True,
            minibatches=4,
            epochs=4,
        ),
        optim=dict(),
        agent=dict(),
        model=dict(),
        runner=dict(n_steps=50e6),
    )
}

config = configs["0"]
