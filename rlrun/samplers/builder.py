"""Builds the envs and collectors of every sampler, serial or parallel, in one place.

Seeding, the collector keywords and the start-up sequence (decorrelation, per-env action streams)
live here so that a serial sampler and a parallel worker holding the same env ranks produce the
same samples. Env ``r`` (a global rank) is seeded with ``seed + r``; evaluation envs are numbered
after all training envs of all sampler ranks.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from rlrun.agents.base import BaseAgent
from rlrun.envs.base import Env
from rlrun.envs.traj_info import TrajInfo
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector, TrajInfoQueue
from rlrun.utils.collections import AttrDict, NamedArrayTuple

if TYPE_CHECKING:  # the samplers import this module
    from rlrun.samplers.base import BaseSampler

__all__ = [
    "make_envs",
    "close_envs",
    "make_collector",
    "make_eval_collector",
    "start_collector",
    "eval_env_ranks_of",
]

_log = logging.getLogger(__name__)


def make_envs(
    EnvCls: Callable[..., Env], env_kwargs: Mapping[str, object], env_ranks: Sequence[int], seed: int
) -> list[Env]:
    """One env per rank, each seeded with ``seed + rank``; closes the ones built if a later one fails."""
    envs: list[Env] = []
    try:
        for env_rank in env_ranks:
            env = EnvCls(**env_kwargs)
            envs.append(env)
            env.seed(seed + env_rank)
    except BaseException:
        close_envs(envs)
        raise
    return envs


def close_envs(envs: Sequence[Env]) -> None:
    """Close every env; an env that fails to close does not stop the others (nor mask the error that led here)."""
    for env in envs:
        try:
            env.close()
        except Exception:
            _log.exception("Error while closing an env.")


def eval_env_ranks_of(global_B: int, sampler_rank: int, n_eval: int) -> list[int]:
    """Global ranks of one sampler's evaluation envs: after every training env of every sampler rank."""
    return [global_B + sampler_rank * n_eval + i for i in range(n_eval)]


def make_collector(
    CollectorCls: type[BaseCollector],
    *,
    rank: int,
    envs: Sequence[Env],
    samples_np: NamedArrayTuple | tuple[NamedArrayTuple, NamedArrayTuple],
    batch_T: int,
    TrajInfoCls: type[TrajInfo],
    agent: BaseAgent | None,
    global_B: int,
    env_ranks: Sequence[int],
    traj_info_kwargs: Mapping[str, object] | None,
    sync: AttrDict | None = None,
    step_buffer_np: NamedArrayTuple | None = None,
) -> BaseCollector:
    return CollectorCls(
        rank=rank,
        envs=envs,
        samples_np=samples_np,
        batch_T=batch_T,
        TrajInfoCls=TrajInfoCls,
        agent=agent,
        sync=sync,
        step_buffer_np=step_buffer_np,
        global_B=global_B,
        env_ranks=list(env_ranks),
        traj_info_kwargs=traj_info_kwargs,
    )


def make_eval_collector(
    eval_CollectorCls: type[BaseEvalCollector],
    *,
    rank: int,
    envs: Sequence[Env],
    TrajInfoCls: type[TrajInfo],
    max_T: int,
    agent: BaseAgent | None,
    max_trajectories: int | None,
    env_ranks: Sequence[int],
    traj_info_kwargs: Mapping[str, object] | None,
    traj_infos_queue: TrajInfoQueue | None = None,
    sync: AttrDict | None = None,
    step_buffer_np: NamedArrayTuple | None = None,
) -> BaseEvalCollector:
    return eval_CollectorCls(
        rank=rank,
        envs=envs,
        TrajInfoCls=TrajInfoCls,
        traj_infos_queue=traj_infos_queue,
        max_T=max_T,
        agent=agent,
        sync=sync,
        step_buffer_np=step_buffer_np,
        max_trajectories=max_trajectories,
        env_ranks=list(env_ranks),
        traj_info_kwargs=traj_info_kwargs,
    )


def make_local_eval(
    sampler: BaseSampler,
    agent: BaseAgent,
    eval_ranks: list[int],
    seed: int,
    traj_info_kwargs: Mapping[str, object] | None,
) -> tuple[list[Env], BaseEvalCollector | None]:
    """The evaluation envs and collector of a sampler that evaluates in its own process (serial and
    async serial): ``([], None)`` without ``eval_n_envs``."""
    if sampler.eval_n_envs <= 0:
        return [], None
    assert sampler.eval_CollectorCls is not None and sampler.eval_max_steps is not None  # set with eval_n_envs
    envs = make_envs(sampler.EnvCls, sampler.eval_env_kwargs, eval_ranks, seed)
    collector = make_eval_collector(
        sampler.eval_CollectorCls,
        rank=0,
        envs=envs,
        TrajInfoCls=sampler.TrajInfoCls,
        max_T=max(1, sampler.eval_max_steps // sampler.eval_n_envs),
        agent=agent,
        max_trajectories=sampler.eval_max_trajectories,
        env_ranks=eval_ranks,
        traj_info_kwargs=traj_info_kwargs,
    )
    return envs, collector


def start_collector(
    collector: BaseCollector, max_decorrelation_steps: int, seed: int
) -> tuple[NamedArrayTuple, list[TrajInfo]]:
    """Reset (and decorrelate) the collector's envs; returns ``(agent_inputs, traj_infos)``.

    Decorrelation follows env ranks (``seed + env rank``). A collector written for rlpyt, whose
    ``start_envs(max_decorrelation_steps)`` takes no seed, is called the way it was written.
    """
    if _accepts(collector.start_envs, "decorrelation_seed"):
        return collector.start_envs(max_decorrelation_steps, decorrelation_seed=seed)
    return collector.start_envs(max_decorrelation_steps)


def _accepts(function: Callable[..., object], keyword: str) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == keyword or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
