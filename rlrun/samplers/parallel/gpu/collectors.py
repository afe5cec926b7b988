"""Collectors for workers that step envs while the master computes the actions (served sampling).

Per time step a served collector writes its envs' observations into its rows of the shared step
buffer, signals ``sync.obs_ready.release()``, waits in ``sync.act_ready.acquire()`` until the master
has written the actions there, and steps its envs with them. It signals once more after the last
step, for the bootstrap value. The master writes the agent's part of the samples batch (actions,
agent_info); the collector writes the env's part. The env-step loop is the CPU collectors' own
(:meth:`~rlrun.samplers.collectors.BaseCollector.collect_batch`) with
:class:`~rlrun.samplers.action_sources.ServedActions` as its action source, so a served sampler
produces :class:`~rlrun.samplers.serial.sampler.SerialSampler`'s samples for the same seed.
"""

from __future__ import annotations

import numpy as np

from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.action_sources import ServedActions
from rlrun.samplers.collectors import BaseEvalCollector, DecorrelatingStartCollector, episode_quotas
from rlrun.samplers.step_checks import check_finite_batch, has_floating_fields, store_observation

__all__ = ["GpuResetCollector", "GpuWaitResetCollector", "GpuEvalCollector"]


class GpuResetCollector(DecorrelatingStartCollector):
    """Steps its envs with the actions the master serves; resets an env as soon as it is done."""

    mid_batch_reset = True
    ActionSourceCls = ServedActions


class GpuWaitResetCollector(DecorrelatingStartCollector):
    """Served collection where a done env waits until the next batch to reset: its steps until then are
    filled with done=True and reward 0 (the observation repeated)."""

    mid_batch_reset = False
    ActionSourceCls = ServedActions


class GpuEvalCollector(BaseEvalCollector):
    """Evaluation episodes with the actions served by the master.

    Each env runs its quota of episodes (:func:`~rlrun.samplers.collectors.episode_quotas`); the
    worker stops after ``max_T`` steps or once every quota is met, and then ends its round, which
    tells the master to stop serving it. Episodes cut by ``max_T`` are counted in ``n_unfinished``.
    """

    def collect_evaluation(self, itr: int) -> list[TrajInfo]:
        obs_ready, act_ready = self.sync.obs_ready, self.sync.act_ready
        step = self.step_buffer_np
        observation, action, reward = step.observation, step.action, step.reward
        envs, env_ranks = self.envs, self.env_ranks
        n = len(envs)
        quotas = episode_quotas(n, self.max_trajectories)
        traj_infos = [self.new_traj_info() for _ in range(n)]
        completed: list[TrajInfo] = []
        for b, env in enumerate(envs):
            store_observation(observation, b, env.reset(), env=env, env_rank=env_ranks[b], where="evaluation reset()")
        action[:] = envs[0].action_space.null_value()
        reward[:] = 0
        step.done[:] = False
        finite_obs = observation if has_floating_fields(observation) else None
        active = quotas > 0
        stop_eval = getattr(self.sync, "stop_eval", None)
        for t in range(self.max_T):
            if not active.any() or (stop_eval is not None and stop_eval.value):
                break
            obs_ready.release()
            act_ready.acquire()
            agent_info = step.agent_info
            where = f"evaluation step() at itr {itr}, t {t}"
            step.done[:] = False
            for b in np.flatnonzero(active).tolist():
                o, r, d = self.step_env(b, observation[b], action[b], agent_info, traj_infos, quotas, active, completed)
                store_observation(observation, b, o, env=envs[b], env_rank=env_ranks[b], where=where)
                reward[b] = r
                step.done[b] = d
            check_finite_batch(finite_obs, reward, envs=envs, env_ranks=env_ranks, where=where, reset_mask=step.done)
        self.n_unfinished = int(quotas.sum())
        if self.traj_infos_queue is not None:
            for info in completed:
                self.traj_infos_queue.put(info)
        return completed
