"""The serial sampler's evaluation collector, under rlpyt's name and with rlpyt's argument order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rlrun.agents.base import BaseAgent
from rlrun.envs.base import Env
from rlrun.envs.traj_info import BoundTrajInfoCls, TrajInfo
from rlrun.samplers.collectors import EvalCollector, TrajInfoQueue
from rlrun.utils.collections import AttrDict, NamedArrayTuple

__all__ = ["SerialEvalCollector"]


class SerialEvalCollector(EvalCollector):
    """:class:`EvalCollector` taking rlpyt's serial order ``(envs, agent, TrajInfoCls, max_T,
    max_trajectories)``, which a script or subclass written for rlpyt passes by position. What the
    samplers also give every evaluation collector (``rank``, ``traj_infos_queue``, ``sync``,
    ``step_buffer_np``, ``env_ranks``, ``traj_info_kwargs``) comes by keyword."""

    def __init__(
        self,
        envs: Sequence[Env],
        agent: BaseAgent | None,
        TrajInfoCls: type[TrajInfo] | BoundTrajInfoCls,
        max_T: int,
        max_trajectories: int | None = None,
        *,
        rank: int = 0,
        traj_infos_queue: TrajInfoQueue | None = None,
        sync: AttrDict | None = None,
        step_buffer_np: NamedArrayTuple | None = None,
        env_ranks: Sequence[int] | None = None,
        traj_info_kwargs: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(
            rank=rank,
            envs=envs,
            TrajInfoCls=TrajInfoCls,
            traj_infos_queue=traj_infos_queue,
            max_T=max_T,
            agent=agent,
            sync=sync,
            step_buffer_np=step_buffer_np,
            max_trajectories=max_trajectories,
            env_ranks=env_ranks,
            traj_info_kwargs=traj_info_kwargs,
        )
