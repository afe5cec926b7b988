"""A2C with the feed-forward Atari agent: rlpyt's settings, one dict of keyword dicts per name.

Each config's sections are the keywords of the objects a train script builds: ``env`` for
:class:`~rlrun.envs.atari.atari_env.AtariEnv` (as ``env_kwargs``), ``sampler`` for the sampler,
``algo`` for :class:`~rlrun.algos.pg.a2c.A2C` (with ``optim`` as its ``optim_kwargs``), ``agent`` for
:class:`~rlrun.agents.pg.atari.AtariFfAgent` (with ``model`` as its ``model_kwargs``) and ``runner``
for :class:`~rlrun.runners.minibatch_rl.MinibatchRl`.

- ``"0"``: 32 envs x 5 steps per batch, Adam at 3e-4, gradient norm clipped at 1, 50M steps.
- ``"low_lr"``: learning rate 4e-4 (rlpyt's name; the rate is in fact above the base's).
- ``"2gpu"``: 16 envs per sampler, for rlpyt's run split over two GPUs (rlrun has no multi-GPU
  runner yet; the config trains under ``MinibatchRl`` as well).

``config`` is the base config, ``configs["0"]``.
"""

from __future__ import annotations

from typing import Any

from rlrun.experiments.configs.derive import derive

__all__ = ["configs", "config"]

configs: dict[str, dict[str, Any]] = {
    "0": dict(
        env=dict(game="pong"),
        sampler=dict(batch_T=5, batch_B=32, max_decorrelation_steps=1000),
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


configs["low_lr"] = derive(configs, "0", algo=dict(learning_rate=4e-4))
configs["2gpu"] = derive(configs, "0", sampler=dict(batch_B=16))

config = configs["0"]
