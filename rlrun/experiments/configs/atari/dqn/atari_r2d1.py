"""R2D1 on Atari: rlpyt's settings for recurrent replay DQN with the convolutional-LSTM Atari agent.

Sections: ``env`` and ``eval_env`` for :class:`~rlrun.envs.atari.atari_env.AtariEnv` (4 stacked
frames, unclipped rewards, which R2D1's value rescaling handles; a train script copies
``env["game"]`` into ``eval_env["game"]``), ``sampler`` for the sampler (with evaluation settings),
``algo`` for :class:`~rlrun.algos.dqn.r2d1.R2D1` (``optim`` is its ``optim_kwargs``; ``batch_T``,
``batch_B`` and ``warmup_T`` there are the replayed sequences' training steps, count and burn-in
steps, not the sampler's), ``agent`` for :class:`~rlrun.agents.dqn.atari.atari_r2d1_agent.AtariR2d1Agent`
(``model`` is its ``model_kwargs``), ``runner`` for :class:`~rlrun.runners.minibatch_rl.MinibatchRlEval`.
rlpyt's train script for the synchronous runs sampled with wait-reset collectors, as R2D1 intends.

- ``"r2d1"``: 32 envs x 30 steps per batch; 32 sequences of 40 burn-in and 80 training steps with a
  state stored every 40 steps, replay ratio 4, Adam at 1e-4, gradient norm clipped at 80, 5-step
  double-DQN targets, the dueling head, prioritized replay (alpha 0.9, beta 0.6 throughout, input
  priorities given to the sequence start 2 stored states back), learning from 100k steps on, 100M
  steps, life loss ends an episode.
- ``"r2d1_long"``: a 4M-step replay, 64 sequences per update and replay ratio 1; 192 envs x 40 steps
  (one update per batch); per-env final epsilons from 0.0005 to 0.1; whole games as episodes; 20G
  steps, a log row every 10M, 6 evaluation envs.
- ``"r2d1_profile"``: the long settings for 1M steps, learning from 50k, 2 evaluation games.
  ``"r2d1_prof_halftrain"``, ``"r2d1_prof_quartertrain"``: 32 sequences at replay ratio 0.5, and 16
  at 0.25.
- ``"r2d1_long_4tr"``: the long settings at replay ratio 4, 12 evaluation envs.
- ``"r2d1_test"``: a small run of the long settings: 8 envs x 5 steps, a 100k-step replay, 16
  sequences of 5 burn-in and 10 training steps (a state every 5 steps), learning from 10k steps,
  epsilon annealed over 100k steps, life loss ends an episode again, 8 short evaluations.
- ``"async_gpu"``: the long settings with 256 envs x 40 steps and 20 evaluation envs;
  ``"async_alt_pabti"``, ``"async_alt_dgx"``, ``"async_alt_got"``, ``"async_gpu_dgx"``: the same with
  264, 312, 252 and 312 envs (44, 78, 36 and 39 evaluation envs, each evaluation long enough for a
  full game per env), sized for rlpyt's machines. rlpyt ran the ``async_*`` configs with its
  asynchronous runner and samplers, which rlrun does not have yet; they train under
  ``MinibatchRlEval`` too, with sampling and optimisation taking turns.

Every key is one of the rlrun classes' keywords, with rlpyt's meaning. The names are in rlpyt's order;
``config`` is the base config, ``configs["r2d1"]``.
"""

from __future__ import annotations

from typing import Any

from rlrun.experiments.configs.derive import derive

__all__ = ["configs", "config"]

configs: dict[str, dict[str, Any]] = {
    "r2d1": dict(
        env=dict(game="pong", episodic_lives=True, clip_reward=False, horizon=int(27e3), num_img_obs=4),
        eval_env=dict(game="pong", episodic_lives=False, horizon=int(27e3), clip_reward=False, num_img_obs=4),
        sampler=dict(
            batch_T=30,
            batch_B=32,
            max_decorrelation_steps=1000,
            eval_n_envs=4,
            eval_max_steps=int(161e3),
            eval_max_trajectories=100,
        ),
        algo=dict(
            discount=0.997,
            batch_T=80,
            batch_B=32,  # R2D2 trained on 64 sequences per update
            warmup_T=40,
            store_rnn_state_interval=40,
            replay_ratio=4,
            learning_rate=1e-4,
            clip_grad_norm=80.0,
            min_steps_learn=int(1e5),
            double_dqn=True,
            prioritized_replay=True,
            n_step_return=5,
            pri_alpha=0.9,
            pri_beta_init=0.6,
            pri_beta_final=0.6,
            input_priority_shift=2,
        ),
        optim=dict(),
        agent=dict(),
        model=dict(dueling=True),
        runner=dict(n_steps=100e6, log_interval_steps=1e6),
    )
}


# The sampler's 40 steps match warmup_T and the state interval, and 192 x 40 steps are one update
# of 64 sequences of 120 steps at replay ratio 1.
configs["r2d1_long"] = derive(
    configs,
    "r2d1",
    algo=dict(replay_size=int(4e6), batch_B=64, replay_ratio=1),
    agent=dict(eps_final=0.1, eps_final_min=0.0005),
    runner=dict(n_steps=20e9, log_interval_steps=10e6),
    sampler=dict(batch_T=40, batch_B=192, eval_n_envs=6, eval_max_steps=int(28e3 * 6)),
    env=dict(episodic_lives=False),
)
configs["r2d1_profile"] = derive(
    configs,
    "r2d1_long",
    runner=dict(n_steps=1e6, log_interval_steps=1e6),
    algo=dict(min_steps_learn=5e4),
    sampler=dict(eval_max_trajectories=2),
)
configs["r2d1_prof_halftrain"] = derive(configs, "r2d1_profile", algo=dict(batch_B=32, replay_ratio=0.5))
configs["r2d1_prof_quartertrain"] = derive(configs, "r2d1_profile", algo=dict(batch_B=16, replay_ratio=0.25))
configs["r2d1_long_4tr"] = derive(
    configs, "r2d1_long", algo=dict(replay_ratio=4), sampler=dict(eval_n_envs=12, eval_max_steps=int(28e3 * 12))
)
# For rlpyt's asynchronous GPU sampler (not in rlrun yet); rlpyt scaled the 64 sequences per update
# with the number of optimizing GPUs.
configs["async_gpu"] = derive(
    configs,
    "r2d1_long",
    sampler=dict(batch_B=256, batch_T=40, eval_n_envs=20, eval_max_steps=int(28e3 * 20)),
    algo=dict(replay_size=int(4e6), batch_B=64),
)
configs["r2d1_test"] = derive(
    configs,
    "r2d1_long",
    sampler=dict(
        batch_B=8,
        batch_T=5,
        max_decorrelation_steps=20,
        eval_n_envs=8,
        eval_max_steps=int(8 * 1.5e3),
        eval_max_trajectories=8,
    ),
    env=dict(episodic_lives=True),  # more resets to exercise
    algo=dict(
        replay_size=int(1e5),
        batch_B=16,
        batch_T=10,
        warmup_T=5,
        min_steps_learn=1e4,
        eps_steps=1e5,
        store_rnn_state_interval=5,
    ),
    runner=dict(log_interval_steps=1e5),
)
# rlpyt's machine-sized variants of async_gpu: envs to fill the sampling GPUs and CPUs, evaluation
# envs each given at least one full-length game, and enough evaluation games not to favour short ones.
configs["async_alt_pabti"] = derive(
    configs,
    "async_gpu",
    sampler=dict(batch_B=264, eval_n_envs=44, eval_max_steps=int(44 * 28e3), eval_max_trajectories=120),
)
configs["async_alt_dgx"] = derive(
    configs,
    "async_gpu",
    sampler=dict(batch_B=312, eval_n_envs=78, eval_max_steps=int(78 * 28e3), eval_max_trajectories=210),
)
configs["async_alt_got"] = derive(
    configs,
    "async_gpu",
    sampler=dict(batch_B=252, eval_n_envs=36, eval_max_steps=int(36 * 28e3), eval_max_trajectories=100),
)
configs["async_gpu_dgx"] = derive(
    configs,
    "async_gpu",
    sampler=dict(batch_B=312, eval_n_envs=39, eval_max_steps=int(39 * 28e3), eval_max_trajectories=210),
)

config = configs["r2d1"]
