"""Collectors for workers that step envs while the master computes the actions (served sampling).

Per time step a served collector writes its envs' observations into its rows of the shared step
buffer, signals ``sync.obs_ready.release()``, waits in ``sync.act_ready.acquire()`` until the master
has written the actions there, and steps its envs with them. It signals once more after the last
step, for the bootstrap value. The master writes the agent's part of the samples batch (actions,
agent_info); the collector writes the env's part. Resets, fillers and traj infos follow the CPU
collectors exactly, so a served sampler produces :class:`~rlrun.samplers.serial.sampler.SerialSampler`'s
samples for the same seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.collectors import (
    BaseEvalCollector,
    DecorrelatingStartCollector,
    episode_quotas,
    write_env_infos,
)
from rlrun.samplers.step_checks import check_finite_batch, has_floating_fields, store_observation

__all__ = ["GpuResetCollector", "GpuWaitResetCollector", "GpuEvalCollector"]


class GpuResetCollector(DecorrelatingStartCollector):
    """Steps its envs with the actions the master serves; resets an env as soon as it is done.

    ``GpuWaitResetCollector`` is the same loop with ``mid_batch_reset = False``: a done env then
    waits for the next batch, its steps filled with done=True and reward 0 (the observation repeated).
    """

    mid_batch_reset = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.need_reset = np.zeros(len(self.envs), dtype=bool)

    def start_agent(self) -> None:
        """The agent acts in the master."""

    def reset_if_needed(self, agent_inputs: Any) -> None:
        """Reset the envs that waited for the batch end; their ``done`` stays set in the step buffer, which
        tells the master to reset the agent's state for them before it acts."""
        step = self.step_buffer_np
        for b in np.flatnonzero(self.need_reset).tolist():
            env = self.envs[b]
            store_observation(step.observation, b, env.reset(), env=env, env_rank=self.env_ranks[b], where="reset()")
        self.need_reset[:] = False

    def collect_batch(
        self, agent_inputs: Any, traj_infos: list[TrajInfo], itr: int
    ) -> tuple[Any, list[TrajInfo], list[TrajInfo]]:
        obs_ready, act_ready = self.sync.obs_ready, self.sync.act_ready
        step, env_buf = self.step_buffer_np, self.samples_np.env
        observation, action, reward = step.observation, step.action, step.reward
        envs, env_ranks, need_reset = self.envs, self.env_ranks, self.need_reset
        finite_obs = observation if has_floating_fields(observation) else None
        env_buf.prev_reward[0] = reward
        completed_infos: list[TrajInfo] = []
        env_infos: list[Any] = [None] * len(envs)
        for t in range(self.batch_T):
            env_buf.observation[t] = observation
            obs_ready.release()
            act_ready.acquire()  # the master wrote action and agent_info into the step buffer
            agent_info = step.agent_info
            where = f"step() at itr {itr}, t {t}"
            for b, env in enumerate(envs):
                if need_reset[b]:  # waiting for the batch end: filler step
                    reward[b] = 0
                    step.done[b] = True
                    env_infos[b] = None
                    continue
                o, r, d, env_info = self.step_env(b, observation[b], action[b], agent_info, traj_infos, completed_infos)
                if d:
                    if self.mid_batch_reset:
                        o = env.reset()
                        store_observation(
                            observation, b, o, env=env, env_rank=env_ranks[b], where=f"reset() after {where}"
                        )
                    else:
                        need_reset[b] = True
                else:
                    store_observation(observation, b, o, env=env, env_rank=env_ranks[b], where=where)
                reward[b] = r
                step.done[b] = d
                env_infos[b] = env_info
            write_env_infos(env_buf.env_info, t, env_infos)
            check_finite_batch(
                finite_obs,
                reward,
                envs=envs,
                env_ranks=env_ranks,
                where=where,
                reset_mask=step.done if self.mid_batch_reset else None,
            )
            env_buf.reward[t] = reward
            env_buf.done[t] = step.done
        obs_ready.release()  # the observation after the last step, for the bootstrap value
        return agent_inputs, traj_infos, completed_infos


class GpuWaitResetCollector(GpuResetCollector):
    """Served collection where a done env waits until the next batch to reset (see :class:`GpuResetCollector`)."""

    mid_batch_reset = False


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
