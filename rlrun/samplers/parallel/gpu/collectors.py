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

from rlrun.samplers.action_sources import ServedActions
from rlrun.samplers.collectors import BaseEvalCollector, DecorrelatingStartCollector

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
    """Evaluation episodes with the actions served by the master: the evaluation loop of
    :class:`~rlrun.samplers.collectors.BaseEvalCollector` with
    :class:`~rlrun.samplers.action_sources.ServedActions`. The worker stops after ``max_T`` steps or once
    every quota is met, and then ends its round, which tells the master to stop serving it."""

    ActionSourceCls = ServedActions
