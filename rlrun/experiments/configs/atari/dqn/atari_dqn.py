"""DQN on Atari: rlpyt's settings for the Nature-DQN agent, its double, prioritized and dueling
variants and C51.

Sections: ``env`` and ``eval_env`` for :class:`~rlrun.envs.atari.atari_env.AtariEnv` (training
envs lose an episode with each life; evaluation envs play whole games of at most 27k steps; a train
script copies ``env["game"]`` into ``eval_env["game"]``), ``sampler`` for the sampler (with
evaluation settings), ``algo`` for :class:`~rlrun.algos.dqn.dqn.DQN` (``optim`` is its
``optim_kwargs``), ``agent`` for :class:`~rlrun.agents.dqn.atari.atari_dqn_agent.AtariDqnAgent`
(``model`` is its ``model_kwargs``), ``runner`` for
:class:`~rlrun.runners.minibatch_rl.MinibatchRlEval` (:class:`~rlrun.runners.minibatch_rl.MinibatchRl`
for ``"no_eval"``).

- ``"dqn"``: 16 envs x 2 steps per batch, training batches of 128 from a 1M-step replay, Adam at
  1e-4, learning from 50k steps on, 50M steps, evaluation every 1M steps.
- ``"double"``, ``"prioritized"``, ``"dueling"``: double-DQN targets; prioritized replay (rlrun's
  default alpha 0.6 and beta 0.4 -> 1, as rlpyt's); the dueling head.
- ``"double_pri_duel"``: all three at once.
- ``"catdqn"``: Adam at 2.5e-4. ``"ernbw"``: Rainbow without noisy nets: double, dueling,
  prioritized replay, 3-step returns, Adam at 6.25e-5. Both are for
  :class:`~rlrun.algos.dqn.cat_dqn.CategoricalDQN` with
  :class:`~rlrun.agents.dqn.atari.atari_catdqn_agent.AtariCatDqnAgent`, as rlpyt's catdqn train
  script builds them (``algo``, ``agent`` and ``model`` keywords go to those classes).
- ``"rmsprop"``: RMSprop (alpha 0.95, eps 1e-6) at 2.5e-4 for 15M steps.
- ``"fast_log"``, ``"short_run"``, ``"no_eval"``: 15M steps with more frequent and shorter
  evaluations; 15M steps; no evaluation, a log row every 100k steps.
- ``"serial"``, ``"cpu"``: batches of 2 envs x 8 steps and 4 envs x 4 steps.
- ``"debug"``, ``"debug_vec_eps"``: a 30k-step run with a small replay (the second with 4 x 4
  batches and per-env exploration epsilons down to 0.001).
- ``"async_big"``: 256 envs x 4 steps and 10 evaluation envs; rlpyt ran it with its asynchronous
  runner, which rlrun does not have, but it trains under the synchronous runners too.

The names are in rlpyt's order. ``config`` is the base config, ``configs["dqn"]``.
"""

from __future__ import annotations

from typing import Any

import torch

from rlrun.experiments.configs.derive import derive

__all__ = ["configs", "config"]

configs: dict[str, dict[str, Any]] = {
    "dqn": dict(
        env=dict(game="pong", episodic_lives=True),
        eval_env=dict(game="pong", episodic_lives=False, horizon=int(27e3)),
        sampler=dict(
            batch_T=2,
            batch_B=16,
            max_decorrelation_steps=1000,
            eval_n_envs=4,
            eval_max_steps=int(125e3),
            eval_max_trajectories=100,
        ),
        algo=dict(
            discount=0.99,
            batch_size=128,
            learning_rate=1e-4,
            clip_grad_norm=10.0,
            min_steps_learn=int(5e4),
            double_dqn=False,
            prioritized_replay=False,
            n_step_return=1,
            replay_size=int(1e6),
        ),
        optim=dict(),
        agent=dict(),
        model=dict(dueling=False),
        runner=dict(n_steps=50e6, log_interval_steps=1e6),
    )
}


configs["double"] = derive(configs, "dqn", algo=dict(double_dqn=True))
configs["prioritized"] = derive(configs, "dqn", algo=dict(prioritized_replay=True))
configs["dueling"] = derive(configs, "dqn", model=dict(dueling=True))
configs["double_pri_duel"] = derive(
    configs, "dqn", algo=dict(double_dqn=True, prioritized_replay=True), model=dict(dueling=True)
)
# rlpyt's train script for these two builds CategoricalDQN and AtariCatDqnAgent from them.
configs["catdqn"] = derive(configs, "dqn", algo=dict(learning_rate=2.5e-4))
configs["ernbw"] = derive(
    configs,
    "dqn",
    algo=dict(n_step_return=3, learning_rate=6.25e-5, double_dqn=True, prioritized_replay=True),
    model=dict(dueling=True),
)
# rlpyt's entry gives only the RMSprop keywords (alpha is not an Adam keyword); OptimCls makes the
# optimizer the one the name and the keywords are for.
configs["rmsprop"] = derive(
    configs,
    "dqn",
    algo=dict(learning_rate=2.5e-4, OptimCls=torch.optim.RMSprop),
    optim=dict(alpha=0.95, eps=1e-6),
    runner=dict(n_steps=15e6),
)
configs["fast_log"] = derive(
    configs,
    "dqn",
    runner=dict(n_steps=15e6, log_interval_steps=1e5),
    sampler=dict(eval_max_steps=70e3, eval_max_trajectories=50),
)
configs["short_run"] = derive(configs, "dqn", runner=dict(n_steps=15e6))
configs["no_eval"] = derive(configs, "dqn", sampler=dict(eval_n_envs=0), runner=dict(log_interval_steps=int(1e5)))
configs["serial"] = derive(configs, "dqn", sampler=dict(batch_T=8, batch_B=2))
configs["cpu"] = derive(configs, "dqn", sampler=dict(batch_T=4, batch_B=4))
configs["debug"] = derive(
    configs,
    "dqn",
    sampler=dict(batch_T=8, batch_B=2, max_decorrelation_steps=20, eval_max_steps=8e3, eval_max_trajectories=4),
    runner=dict(n_steps=3e4, log_interval_steps=1e4),
    algo=dict(min_steps_learn=1e4, replay_size=1e4, eps_steps=2e4),
)
configs["debug_vec_eps"] = derive(configs, "debug", sampler=dict(batch_T=4, batch_B=4), agent=dict(eps_final_min=0.001))
# rlpyt set eval_n_envs=10 beside the sections, where no script read it; here it is a sampler keyword.
configs["async_big"] = derive(
    configs, "dqn", sampler=dict(batch_T=4, batch_B=256, eval_n_envs=10), algo=dict(prioritized_replay=False)
)

config = configs["dqn"]
