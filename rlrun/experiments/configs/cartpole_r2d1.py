"""R2D1 on CartPole-v1 with the LSTM :class:`~rlrun.agents.dqn.r2d1_agent.R2d1Agent`: the settings of
the R2D1 learning tests (tests/algos/dqn/r2d1_cartpole.py, tuned there on CartPole without its
velocities; docs/r2d1.md has what they measured), for ``rlrun train``.

Sections as in :mod:`rlrun.experiments.configs.atari.dqn.atari_r2d1`: ``env`` for
:func:`rlrun.envs.gym.make`, ``sampler`` (with wait-reset collectors, chosen by the builder),
``algo`` for :class:`~rlrun.algos.dqn.r2d1.R2D1` (its ``batch_T``, ``batch_B`` and ``warmup_T`` are the
replayed sequences' steps, count and burn-in, not the sampler's), ``agent`` (``model`` is its
``model_kwargs``), ``runner`` for :class:`~rlrun.runners.minibatch_rl.MinibatchRlEval`.

- ``"r2d1"``: sampler batches of 8 envs x 10 steps; 32 sequences of 10 burn-in and 20 trained steps
  from a state stored every 10 steps; 5-step returns; replay ratio 32 (about 3 updates per batch),
  Adam at 1e-3, gradient norm clipped at 10, the target copied every 50 updates, epsilon down to
  0.01 over 10k steps, 100k steps; 10 greedy evaluation episodes every 10k steps.

``config`` is ``configs["r2d1"]``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["configs", "config"]

configs: dict[str, dict[str, Any]] = {
    "r2d1": dict(
        env=dict(id="CartPole-v1"),
        sampler=dict(
            batch_T=10,
            batch_B=8,
            max_decorrelation_steps=0,
            eval_n_envs=5,
            eval_max_steps=3 * 501 * 5,  # 10 whole episodes of at most 500 steps on 5 envs
            eval_max_trajectories=10,
        ),
        algo=dict(
            discount=0.99,
            batch_T=20,
            batch_B=32,
            warmup_T=10,
            store_rnn_state_interval=10,
            n_step_return=5,
            min_steps_learn=2_000,
            replay_size=50_000,
            replay_ratio=32,
            target_update_interval=50,
            learning_rate=1e-3,
            clip_grad_norm=10.0,
            eps_steps=10_000,
        ),
        optim=dict(),
        agent=dict(eps_final=0.01, eps_eval=0.0),
        model=dict(hidden_sizes=(128,), lstm_size=128, head_size=128),
        runner=dict(n_steps=100_000, log_interval_steps=10_000),
    )
}

config = configs["r2d1"]
