"""PPO with the feed-forward Gaussian MuJoCo agent: rlpyt's 1M-step Hopper settings.

Sections: ``env`` for :func:`rlrun.envs.gym.make` (as ``env_kwargs``), ``sampler`` for the sampler,
``algo`` for :class:`~rlrun.algos.pg.ppo.PPO` (``optim`` is its ``optim_kwargs``), ``agent`` for
:class:`~rlrun.agents.pg.mujoco.MujocoFfAgent` (``model`` is its ``model_kwargs``), ``runner`` for
:class:`~rlrun.runners.minibatch_rl.MinibatchRl`.

- ``"ppo_1M_serial"``: one env x 2048 steps per batch, 10 epochs of 32 minibatches, clip ratio 0.2,
  GAE lambda 0.95, Adam at 3e-4 decaying linearly, normalised advantages, no entropy bonus.
- ``"ppo_1M_cpu"``: the same with 8 envs x 256 steps per batch (for parallel samplers).
- ``"ppo_32ep_1mb"``: the CPU batches with 32 epochs over one whole-batch minibatch.

In rlpyt's module the last two names were one shared dict, so ``"ppo_1M_cpu"`` also got 32 epochs
of one minibatch; here they are separate, and ``"ppo_1M_cpu"`` keeps the serial config's 10 x 32.

The env id: rlpyt used ``"Hopper-v3"``, which Gymnasium no longer builds (its v2/v3 MuJoCo envs need
the retired mujoco-py); ``"Hopper-v5"`` is the current version of that task, on the maintained
``mujoco`` bindings (``pip install rlrun[mujoco]``). ``config`` is ``configs["ppo_1M_serial"]``.
"""

from __future__ import annotations

from typing import Any

from rlrun.experiments.configs.derive import derive

__all__ = ["configs", "config"]

configs: dict[str, dict[str, Any]] = {
    "ppo_1M_serial": dict(
        env=dict(id="Hopper-v5"),
        sampler=dict(batch_T=2048, batch_B=1, max_decorrelation_steps=0),
        algo=dict(
            discount=0.99,
            learning_rate=3e-4,
            clip_grad_norm=1e6,
            entropy_loss_coeff=0.0,
            gae_lambda=0.95,
            minibatches=32,
            epochs=10,
            ratio_clip=0.2,
            normalize_advantage=True,
            linear_lr_schedule=True,
        ),
        optim=dict(),
        agent=dict(),
        model=dict(normalize_observation=False),
        runner=dict(n_steps=1e6, log_interval_steps=2048 * 10),
    )
}


configs["ppo_1M_cpu"] = derive(configs, "ppo_1M_serial", sampler=dict(batch_T=256, batch_B=8))
configs["ppo_32ep_1mb"] = derive(configs, "ppo_1M_cpu", algo=dict(minibatches=1, epochs=32))

config = configs["ppo_1M_serial"]
