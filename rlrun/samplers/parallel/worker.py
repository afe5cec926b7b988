"""The sampler worker process: builds its envs and collectors, then runs one round per ``barrier_in``."""

from __future__ import annotations

import logging
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Sequence
from typing import Any

import torch

from rlrun.samplers.parallel.sync import ParentWatch
from rlrun.utils.collections import AttrDict
from rlrun.utils.launching.pinning import pin_to_cpus
from rlrun.utils.seed import set_seed

__all__ = ["initialize_worker", "sampling_process", "CollectedTrajInfos", "EvalStop"]

_log = logging.getLogger(__name__)


def initialize_worker(
    rank: int,
    seed: int | None = None,
    cpu: int | Sequence[int] | None = None,
    torch_threads: int | None = None,
    group: Any = None,
) -> None:
    """Pin this process to ``cpu`` (where the OS allows), set torch's threads and seed the global RNGs.

    ``torch_threads`` defaults to the number of CPUs pinned, else 1: workers usually fill the cores
    already, and more threads per worker would only compete. ``group`` is accepted for rlpyt
    compatibility and unused.
    """
    cpus = [cpu] if isinstance(cpu, int) else (None if cpu is None else [int(c) for c in cpu])
    affinity = pin_to_cpus(cpus, f"affinity['workers_cpus'] gives sampler worker {rank} CPUs")
    if affinity is None and cpus is not None:
        _log.warning("Sampler worker %d: this OS does not let processes be pinned; running on any CPU.", rank)
    if torch_threads is None:
        torch_threads = len(cpus) if cpus is not None else 1
    torch.set_num_threads(int(torch_threads))
    if seed is not None:
        set_seed(seed)
    _log.debug(
        "Sampler worker %d: CPU affinity %s, torch threads %d, seed %s.", rank, affinity, torch.get_num_threads(), seed
    )


class CollectedTrajInfos:
    """The ``traj_infos_queue`` a worker gives its eval collector: ``put`` keeps each TrajInfo in a list.

    rlpyt's eval collectors put finished trajectories on a multiprocessing queue, then None as an end
    marker. Here they reach the master with the worker's arrival at ``barrier_out`` instead, so no
    queue, feeder thread or semaphore is needed, and a collector written for rlpyt works unchanged.
    """

    def __init__(self) -> None:
        self._items: list = []

    def put(self, item, block: bool = True, timeout: float | None = None) -> None:
        if item is not None:  # rlpyt's end marker
            self._items.append(item)

    def put_nowait(self, item) -> None:
        self.put(item)

    def __len__(self) -> int:
        return len(self._items)

    def take(self) -> list:
        """Everything put since the last call, in order."""
        items, self._items = self._items, []
        return items


class EvalStop:
    """What a worker's eval collector reads as ``sync.stop_eval``: its ``value`` turns True when the
    master stops evaluation (shutdown), or once the collector has put this worker's share of
    ``eval_max_trajectories`` on its queue.

    rlpyt's master counted the trajectories arriving on its queue and set ``stop_eval`` when it had
    enough; collectors written for rlpyt step until then. rlrun's own collector has fixed quotas per
    env and puts its TrajInfos only at the end, so this flag never cuts it short.
    """

    def __init__(self, shared: Any, queue: CollectedTrajInfos, max_trajectories: int | None) -> None:
        self._shared = shared
        self._queue = queue
        self._max_trajectories = max_trajectories

    @property
    def value(self) -> bool:
        if self._shared.value:
            return True
        return self._max_trajectories is not None and len(self._queue) >= self._max_trajectories

    @value.setter
    def value(self, stop: bool) -> None:
        self._shared.value = bool(stop)  # as in rlpyt: one flag for every worker


def _exit_on_sigterm(signum, frame) -> None:
    # Turns the master's terminate() into SystemExit, so the finally block closes the envs.
    raise SystemExit(128 + signum)


def sampling_process(common_kwargs: dict[str, Any], worker_kwargs: dict[str, Any]) -> None:
    """Target of each worker process (see ``ParallelSamplerBase._assemble_*_kwargs`` for the keys).

    Any exception is written to the worker's error slot, with its traceback, and the worker exits;
    the master raises it as :class:`~rlrun.samplers.parallel.sync.SamplerWorkerError`.
    """
    c, w = AttrDict(common_kwargs), AttrDict(worker_kwargs)
    ctrl, link = c.ctrl, w.link
    parent = ParentWatch()
    # Ctrl-C in a terminal reaches every process of the group; the master alone decides what follows.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    envs: list = []
    eval_envs: list = []
    exit_code = 0
    try:
        initialize_worker(w.rank, w.seed, w.cpus, c.torch_threads)
        agent = c.agent
        envs = [c.EnvCls(**c.env_kwargs) for _ in w.env_ranks]
        for env, env_rank in zip(envs, w.env_ranks):
            env.seed(c.seed + env_rank)
        agent.collector_initialize(global_B=c.global_B, env_ranks=w.env_ranks)
        collector = c.CollectorCls(
            rank=w.rank,
            envs=envs,
            samples_np=w.samples_np,
            batch_T=c.batch_T,
            TrajInfoCls=c.TrajInfoCls,
            agent=agent,
            sync=w.sync,
            global_B=c.global_B,
            env_ranks=w.env_ranks,
            traj_info_kwargs=c.traj_info_kwargs,
        )
        eval_collector = None
        eval_queue = CollectedTrajInfos()
        if c.eval_n_envs > 0:
            eval_envs = [c.EnvCls(**c.eval_env_kwargs) for _ in w.eval_env_ranks]
            for env, env_rank in zip(eval_envs, w.eval_env_ranks):
                env.seed(c.seed + env_rank)
            eval_collector = c.eval_CollectorCls(
                rank=w.rank,
                envs=eval_envs,
                TrajInfoCls=c.TrajInfoCls,
                traj_infos_queue=eval_queue,  # emptied into this worker's arrival at barrier_out
                max_T=c.eval_max_T,
                agent=agent,
                sync=AttrDict(w.sync, stop_eval=EvalStop(w.sync.stop_eval, eval_queue, w.eval_max_trajectories)),
                max_trajectories=w.eval_max_trajectories,
                env_ranks=w.eval_env_ranks,
                traj_info_kwargs=c.traj_info_kwargs,
            )
        agent_inputs, traj_infos = collector.start_envs(c.max_decorrelation_steps, decorrelation_seed=c.seed)
        agent.seed_env_streams(c.seed, w.env_ranks, eval_env_ranks=w.eval_env_ranks)
        collector.start_agent()
        link.arrive()  # ready: the master returns from initialize

        while link.wait_turn(parent):  # barrier_in
            if ctrl.quit.value:
                break
            itr = ctrl.itr.value
            if ctrl.do_eval.value:
                returned = eval_collector.collect_evaluation(itr)
                # rlpyt's eval collectors put their TrajInfos on the queue; rlrun's also return them.
                completed = eval_queue.take() or list(returned or [])
                ctrl.n_unfinished[w.rank] = getattr(eval_collector, "n_unfinished", 0)
            else:
                agent.sample_mode(itr)
                collector.reset_if_needed(agent_inputs)
                agent_inputs, traj_infos, completed = collector.collect_batch(agent_inputs, traj_infos, itr)
            link.arrive(pickle.dumps(completed) if completed else b"")  # barrier_out
    except Exception:
        ctrl.errors.report(w.rank, traceback.format_exc())
        try:
            link.arrive()  # wake the master now rather than at its next look
        except OSError:
            pass
        exit_code = 1
    except SystemExit as e:  # SIGTERM from the master
        exit_code = e.code if isinstance(e.code, int) else 1
    finally:
        for env in envs + eval_envs:
            try:
                env.close()
            except Exception:
                _log.exception("Sampler worker %d: error while closing an env.", w.rank)
    _exit(exit_code)


def _exit(code: int) -> None:
    """Leave without the interpreter's teardown, which takes about a second per worker once torch is
    loaded (forked children skip it too); only the standard streams need flushing."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)
