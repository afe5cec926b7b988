"""A2C with the recurrent Atari agent: rlpyt's settings, one dict of keyword dicts per name.

Sections: ``env`` for :class:`~rlrun.envs.atari.atari_env.AtariEnv` (``num_img_obs`` frames per
observation: the LSTM carries the history the stacked frames give a feedforward agent), ``sampler``
for the sampler, ``algo`` for :class:`~rlrun.algos.pg.a2c.A2C` (``optim`` is its ``optim_kwargs``),
``agent`` for :class:`~rlrun.agents.pg.atari.AtariLstmAgent` (``model`` is its ``model_kwargs``),
``runner`` for :class:`~rlrun.runners.minibatch_rl.MinibatchRl`. Recurrent agents train with a
wait-reset collector (see ``docs/recurrent_pg.md``), as rlpyt's LSTM train scripts sample.

- ``"0"``: one frame per observation, 32 envs x 20 steps per batch, Adam at 3e-4, gradient norm
  clipped at 1, 50M steps.
- ``"4frame"``: ``"0"`` with 4 stacked frames, 16 envs x 5 steps and learning rate 1e-4.
- ``"like_ff"``: ``"4frame"`` with 32 envs and learning rate 7e-4 (4 frames, 32 x 5 batches: the
  feedforward agent's settings).

Each config derives from the one before it, as in rlpyt. ``config`` is the base config,
``configs["0"]``.
"""

from __future__ import annotations

from typing import Any

from rlrun.experiments.configs.derive import derive

__all__ = ["configs", "config"]

configs: dict[str, dict[str, Any]] = {
    "0": dict(
        env=dict(game="pong", num_img_obs=1),
        sampler=dict(batch_T=20, batch_B=32, max_decorrelation_steps=1000),
        algo=dict(
            discount=0.99,
            learning_rate=3e-4,
            value_loss_coeff=0.5,
            entropy_loss_coeff=0.01,
            clip_grad_norm=1.0,
        ),
        optim=dict(),
        agent=dict(),
        model=dict(),
        runner=dict(n_steps=50e6),
    )
}


configs["4frame"] = derive(
    configs, "0", env=dict(num_img_obs=4), sampler=dict(batch_T=5, batch_B=16), algo=dict(learning_rate=1e-4)
)
configs["like_ff"] = derive(
    configs, "4frame", algo=dict(learning_rate=7e-4, clip_grad_norm=1), sampler=dict(batch_B=32)
)

config = configs["0"]
