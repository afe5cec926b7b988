"""Collectors: step a set of envs with the agent and write the steps into a ``[T, B]`` buffer.

A collector owns ``B`` envs and the columns of the samples buffer that belong to them. The serial
sampler runs one collector over all envs; each parallel worker runs one over its column slice. The
base class holds the loop; a subclass for a custom env usually overrides one method.

Semantics every collector keeps:
- ``observation[t]`` is what the agent saw at step t; ``reward[t]``, ``done[t]``, ``env_info[t]``
  are what the env returned for ``action[t]``.
- On ``done`` the env is reset at once (``ResetCollector``) or at the start of the next batch
  (``WaitResetCollector``). A trajectory's statistics are closed on ``env_info.traj_done`` where the
  env reports it (Atari with episodic lives), else on ``done``.
- ``prev_action`` / ``prev_reward`` at the first step of a new episode hold the last action and reward
  of the previous one, in the buffer and in what the agent sees while sampling, so the two agree
  (they are views of one array); recurrent agents reset their state through ``reset_one``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol, TypedDict

import numpy as np

from rlrun.agents.base import BaseAgent
from rlrun.envs.base import Env
from rlrun.envs.traj_info import BoundTrajInfoCls, TrajInfo
from rlrun.envs.validation import EnvValidationError, check_observation
from rlrun.samplers.action_sources import ActionSource, LocalActions
from rlrun.samplers.step_checks import (
    check_finite_actions,
    check_finite_batch,
    has_floating_fields,
    store_observation,
    with_step_context,
)
from rlrun.utils.buffer import buffer_from_example
from rlrun.utils.collections import AttrDict, NamedArrayTuple, namedarraytuple, optional_field

__all__ = [
    "BaseCollector",
    "DecorrelatingStartCollector",
    "ResetCollector",
    "WaitResetCollector",
    "BaseEvalCollector",
    "EvalCollector",
    "write_env_infos",
    "trajectory_done",
    "CollectorState",
    "TrajInfoQueue",
]

# The same (cached) class as rlrun.agents.base.AgentInputs: numpy arrays [B, ...] owned by a collector.
AgentInputs = namedarraytuple("AgentInputs", ["observation", "prev_action", "prev_reward"])


class CollectorState(TypedDict):
    """What a collector carries from one batch to the next (:meth:`BaseCollector.state_dict`)."""

    need_reset: np.ndarray  # [B] bools: envs waiting for the next batch to reset (wait-reset collectors)
    last_itr: int | None  # the last batch collected, named in errors of the resets before the next one


class TrajInfoQueue(Protocol):
    """Where an eval collector puts the TrajInfos it completed: rlpyt's multiprocessing queue, or a
    worker's :class:`~rlrun.samplers.parallel.worker.CollectedTrajInfos`."""

    def put(self, item: TrajInfo, /) -> None: ...


def trajectory_done(env_info: object, done: bool) -> bool:
    """Whether a step ended the trajectory: ``env_info.traj_done`` where the env reports it (Atari with
    episodic lives ends an episode, not the game, at a lost life), else ``done``."""
    # getattr with a default, kept: traj_done is an optional field of env_info namedtuples whose class differs
    # per env, and this runs per env step (decorrelation and evaluation); getattr is the cheapest read of it
    # (optional_field costs four to seven times as much).
    traj_done: bool = getattr(env_info, "traj_done", done)
    return traj_done


class BaseCollector:
    """Steps ``envs`` and fills ``samples_np`` (this collector's columns), ``batch_T`` steps per call.

    It holds the one env-step loop of every collector (:meth:`collect_batch`), assembled from parts
    chosen by class attributes:

    - ``ActionSourceCls``: who computes the actions, the agent here (:class:`~rlrun.samplers.action_sources.LocalActions`)
      or a master that serves them (:class:`~rlrun.samplers.action_sources.ServedActions`);
    - ``mid_batch_reset``: a done env resets at once (True) or waits for the next batch (False);
    - ``double_buffered``: ``samples_np`` is a pair of buffers and batch ``itr`` goes into half ``itr % 2``
      (asynchronous samplers).

    A subclass for a custom env usually overrides one method (:meth:`step_env`).
    """

    mid_batch_reset: ClassVar[bool] = True
    ActionSourceCls: ClassVar[type[ActionSource]] = LocalActions
    double_buffered: ClassVar[bool] = False

    def __init__(
        self,
        rank: int,
        envs: Sequence[Env],
        samples_np: NamedArrayTuple | tuple[NamedArrayTuple, NamedArrayTuple] | None,
        batch_T: int,
        TrajInfoCls: type[TrajInfo] | BoundTrajInfoCls = TrajInfo,
        agent: BaseAgent | None = None,
        sync: AttrDict | None = None,
        step_buffer_np: NamedArrayTuple | None = None,
        global_B: int = 1,
        env_ranks: Sequence[int] | None = None,
        traj_info_kwargs: Mapping[str, object] | None = None,
    ) -> None:
        self.rank = rank
        self.envs = list(envs)
        self.double_buffer: tuple[NamedArrayTuple, NamedArrayTuple] | None = None
        self.samples_np: NamedArrayTuple | None  # None: a collector that only starts envs
        if self.double_buffered:
            self.double_buffer = _double_buffer_of(samples_np, type(self).__name__)
            self.samples_np = self.double_buffer[0]  # start-up reads the buffer's observation dtype from it
        elif samples_np is None or isinstance(samples_np, NamedArrayTuple):
            self.samples_np = samples_np
        else:
            raise TypeError(
                f"{type(self).__name__} writes into one [T, B] samples buffer (a namedarraytuple, as "
                f"build_samples_buffer makes), got {type(samples_np).__name__}. A pair of buffers is a double "
                "buffer, for the Db collectors of the asynchronous samplers."
            )
        self.batch_T = batch_T
        self.traj_info_kwargs = dict(traj_info_kwargs or {})
        self.TrajInfoCls = BoundTrajInfoCls(TrajInfoCls, self.traj_info_kwargs)
        self.agent = agent
        self.sync = sync
        self.step_buffer_np = step_buffer_np
        self.global_B = global_B
        self.env_ranks = list(env_ranks) if env_ranks is not None else list(range(len(self.envs)))
        self.action_source: ActionSource = self.ActionSourceCls(agent, sync, step_buffer_np, len(self.envs))
        self.need_reset = np.zeros(len(self.envs), dtype=bool)
        self._last_itr: int | None = None  # names the batch in errors from reset_if_needed

    def new_traj_info(self) -> TrajInfo:
        """A fresh TrajInfo with the run's traj_info_kwargs; the same as ``self.TrajInfoCls()``."""
        return self.TrajInfoCls()

    def state_dict(self) -> CollectorState:
        """What this collector carries from one batch to the next, beside the envs and the agent inputs
        its sampler keeps: the envs waiting for a reset (wait-reset collectors) and the last batch's itr."""
        return CollectorState(need_reset=self.need_reset.copy(), last_itr=self._last_itr)

    def load_state_dict(self, state: CollectorState) -> None:
        self.need_reset[:] = state["need_reset"]
        self._last_itr = state["last_itr"]

    def start_envs(
        self, max_decorrelation_steps: int = 0, decorrelation_seed: int | None = None
    ) -> tuple[NamedArrayTuple, list[TrajInfo]]:
        """Reset every env; return the agent inputs ``(observation, prev_action, prev_reward)`` and a
        TrajInfo per env."""
        raise NotImplementedError

    def start_agent(self) -> None:
        """Prepare the agent to act for these envs (after the sampler initialised it); nothing where
        the master serves the actions."""
        self.action_source.start()

    def reset_if_needed(self, agent_inputs: NamedArrayTuple) -> None:
        """Called before each batch: resets the envs that waited for it (``mid_batch_reset = False``).
        Where the master serves actions, their ``done`` stays set in the step buffer, which tells it to
        reset the agent's state for them before it acts."""
        reset = np.flatnonzero(self.need_reset)
        if not reset.size:
            return
        observation = self.action_source.arrays(agent_inputs).observation
        where = f"reset() before the batch after itr {self._last_itr}"
        for b in reset.tolist():
            env = self.envs[b]
            store_observation(observation, b, env.reset(), env=env, env_rank=self.env_ranks[b], where=where)
            self.action_source.reset_one(b)
        self.need_reset[:] = False
        check_finite_batch(observation, None, envs=self.envs, env_ranks=self.env_ranks, where=where)

    def collect_batch(
        self, agent_inputs: NamedArrayTuple, traj_infos: list[TrajInfo], itr: int
    ) -> tuple[NamedArrayTuple, list[TrajInfo], list[TrajInfo]]:
        """Fill ``batch_T`` steps; return ``(agent_inputs, traj_infos, completed_traj_infos)``.

        Per step: the observations go into the samples, the action source fills the actions, every env
        steps (a waiting env gets a filler step), the new observations and rewards are checked, and
        the env's part of the samples is written (the agent's part by the action source)."""
        if self.double_buffer is not None:
            self.samples_np = self.double_buffer[itr % 2]
        samples = self.samples_np
        if samples is None:
            raise RuntimeError(f"{type(self).__name__} was built without a samples buffer (samples_np=None).")
        agent_buf, env_buf = samples.agent, samples.env
        source = self.action_source
        observation, action, reward, done = source.begin_batch(agent_inputs, agent_buf)
        env_buf.prev_reward[0] = reward
        need_reset, mid_batch_reset = self.need_reset, self.mid_batch_reset
        envs, env_ranks = self.envs, self.env_ranks
        self._last_itr = itr
        # Integer observations (Atari's uint8) cannot hold NaN: their check is skipped for the whole batch.
        finite_obs = observation if has_floating_fields(observation) else None
        float_actions = has_floating_fields(action)  # continuous actions: checked before any env steps on them
        completed_infos: list[TrajInfo] = []
        env_infos: list[NamedArrayTuple | None] = [None] * len(envs)
        for t in range(self.batch_T):
            env_buf.observation[t] = observation
            agent_info = source.act()
            where = f"step() at itr {itr}, t {t}"
            if float_actions:
                check_finite_actions(action, envs=envs, env_ranks=env_ranks, where=where)
            for b, env in enumerate(envs):
                if need_reset[b]:  # waiting for the batch end: filler step
                    reward[b] = 0
                    done[b] = True
                    env_infos[b] = None
                    continue
                try:
                    o, r, d, env_info = self.step_env(
                        b, observation[b], action[b], agent_info, traj_infos, completed_infos
                    )
                except EnvValidationError as error:  # the env wrapper's own checks know no rank or step
                    if error.env_rank is not None:
                        raise
                    raise with_step_context(error, env_ranks[b], where) from error
                if d:
                    if mid_batch_reset:
                        o = env.reset()
                        source.reset_one(b)
                        store_observation(
                            observation, b, o, env=env, env_rank=env_ranks[b], where=f"reset() after the done {where}"
                        )
                    else:
                        need_reset[b] = True
                else:
                    store_observation(observation, b, o, env=env, env_rank=env_ranks[b], where=where)
                reward[b] = r
                done[b] = d
                env_infos[b] = env_info
            write_env_infos(env_buf.env_info, t, env_infos)
            # Before the agent acts on these observations at t + 1 (or the bootstrap value reads them).
            check_finite_batch(
                finite_obs,
                reward,
                envs=envs,
                env_ranks=env_ranks,
                where=where,
                reset_mask=done if mid_batch_reset else None,
            )
            env_buf.reward[t] = reward
            env_buf.done[t] = done
            source.record(t, agent_buf, agent_info)
        source.end_batch(agent_buf)
        return agent_inputs, traj_infos, completed_infos

    def step_env(
        self,
        b: int,
        observation: Any,
        action: Any,
        agent_info: NamedArrayTuple | None,
        traj_infos: list[TrajInfo],
        completed: list[TrajInfo],
    ) -> tuple[Any, Any, Any, Any]:
        """Step env ``b`` with ``action`` and record the step in its TrajInfo; a trajectory that ends
        (``env_info.traj_done`` where the env reports it, else done) goes to ``completed`` and a new one
        starts. Returns the env's ``(observation, reward, done, env_info)``; resetting is the caller's."""
        o, r, d, env_info = self.envs[b].step(action)
        traj_info = traj_infos[b]
        # TrajInfo.step ignores agent_info, so its per-env slice (a namedarraytuple rebuilt per env step) is
        # taken only for a TrajInfo whose step may read it.
        info_b = agent_info[b] if agent_info and type(traj_info).step is not TrajInfo.step else None
        traj_info.step(observation, action, r, d, info_b, env_info)
        # getattr with a default, kept: this is trajectory_done() inlined, as this runs for every env step of
        # every batch (the call would add two thirds to this read: 60 ns against 36 ns).
        if getattr(env_info, "traj_done", d):
            completed.append(traj_info.terminate(o))
            traj_infos[b] = self.new_traj_info()
        return o, r, d, env_info


def _double_buffer_of(samples_np: object, collector_name: str) -> tuple[NamedArrayTuple, NamedArrayTuple]:
    """``samples_np`` as the pair of ``[T, B]`` buffers a double-buffered collector writes into."""
    if not (isinstance(samples_np, tuple) and len(samples_np) == 2 and not hasattr(samples_np, "_fields")):
        raise TypeError(
            f"{collector_name} writes into a double buffer: samples_np must be a pair of [T, B] buffers "
            f"(an asynchronous sampler builds it), got {type(samples_np).__name__}. Use the collector "
            "without the Db prefix in a synchronous sampler."
        )
    return samples_np[0], samples_np[1]


class DecorrelatingStartCollector(BaseCollector):
    """Starts each env with a random number of random-action steps, so envs are out of phase.

    The number of steps for env ``b`` and its actions come from a generator seeded by
    ``decorrelation_seed + env_rank``, so they follow env ranks rather than processes.
    """

    def start_envs(
        self, max_decorrelation_steps: int = 0, decorrelation_seed: int | None = None
    ) -> tuple[NamedArrayTuple, list[TrajInfo]]:
        traj_infos = [self.new_traj_info() for _ in self.envs]
        observations, wheres = [], []
        for b, env in enumerate(self.envs):
            observation = env.reset()
            where = "reset()"
            if max_decorrelation_steps > 0:
                seed = None if decorrelation_seed is None else decorrelation_seed + self.env_ranks[b]
                rng = np.random.default_rng(seed)
                env.action_space.seed(int(rng.integers(2**31)))
                n_steps = int(rng.integers(max_decorrelation_steps + 1))
                for i in range(n_steps):
                    action = env.action_space.sample()
                    o, r, d, env_info = env.step(action)
                    where = f"decorrelation step() {i + 1} of {n_steps}"
                    # The agent never sees these steps, but their rewards reach the logged returns.
                    check_finite_batch(
                        None, np.array([r], dtype=np.float64), envs=[env], env_ranks=[self.env_ranks[b]], where=where
                    )
                    traj_infos[b].step(observation, action, r, d, None, env_info)
                    if trajectory_done(env_info, d):
                        traj_infos[b] = self.new_traj_info()
                    observation = env.reset() if d else o
                    if d:
                        where = f"reset() after decorrelation step() {i + 1} of {n_steps}"
            observations.append(observation)
            wheres.append(where)
        # Every env's first observation goes through the same checks as later ones, into an array of
        # the batch's own dtype, so none is truncated when the batch is written.
        observation = buffer_from_example(self._observation_example(observations[0]), len(self.envs))
        for b, o in enumerate(observations):
            store_observation(observation, b, o, env=self.envs[b], env_rank=self.env_ranks[b], where=wheres[b])
            check_finite_batch(
                observation[b : b + 1], None, envs=[self.envs[b]], env_ranks=[self.env_ranks[b]], where=wheres[b]
            )
        act_space = self.envs[0].action_space
        prev_action = buffer_from_example(act_space.null_value(), len(self.envs))
        for b in range(len(self.envs)):
            prev_action[b] = act_space.null_value()
        prev_reward = np.zeros(len(self.envs), dtype=np.float32)
        return AgentInputs(observation, prev_action, prev_reward), traj_infos

    def _observation_example(self, first_observation: Any) -> Any:
        """One observation with the samples buffer's dtype and shape (built from the first env at start-up),
        or ``first_observation`` for a collector without that buffer."""
        buffer = optional_field(optional_field(self.samples_np, "env"), "observation")
        return first_observation if buffer is None else buffer[0, 0]


class ResetCollector(DecorrelatingStartCollector):
    """Runs the agent in this process; resets an env as soon as it is done (mid-batch)."""

    mid_batch_reset = True


class WaitResetCollector(DecorrelatingStartCollector):
    """Runs the agent in this process; a done env waits until the next batch to reset.

    Steps after an env's done are filler (done True, reward 0, observation repeated) that
    algorithms mask with ``valid_from_done``. Use it for recurrent training on whole batches.
    """

    mid_batch_reset = False


class BaseEvalCollector:
    """Runs evaluation episodes with the agent in eval mode and returns their TrajInfos.

    It holds the one evaluation loop (:meth:`collect_evaluation`); ``ActionSourceCls`` says who computes
    the actions, as for :class:`BaseCollector`.

    Each env runs its fixed quota of episodes (see :func:`episode_quotas`); stepping stops when all
    quotas are met, after ``max_T`` steps, or when a parallel sampler that shuts down sets
    ``sync.stop_eval``. Episodes still running at ``max_T`` are not returned (a cut return is not a
    return) and are counted in ``n_unfinished``; raise ``eval_max_steps`` if that count is not zero.
    Where the master serves the actions, the end of the worker's round tells it to stop serving.
    """

    ActionSourceCls: ClassVar[type[ActionSource]] = LocalActions
    n_unfinished: int = 0  # episodes the last evaluation cut at max_T

    def __init__(
        self,
        rank: int,
        envs: Sequence[Env],
        TrajInfoCls: type[TrajInfo] | BoundTrajInfoCls,
        traj_infos_queue: TrajInfoQueue | None = None,
        max_T: int = 10_000,
        agent: BaseAgent | None = None,
        sync: AttrDict | None = None,
        step_buffer_np: NamedArrayTuple | None = None,
        max_trajectories: int | None = None,
        env_ranks: Sequence[int] | None = None,
        traj_info_kwargs: Mapping[str, object] | None = None,
    ) -> None:
        self.rank = rank
        self.envs = list(envs)
        self.traj_info_kwargs = dict(traj_info_kwargs or {})
        self.TrajInfoCls = BoundTrajInfoCls(TrajInfoCls, self.traj_info_kwargs)
        self.traj_infos_queue = traj_infos_queue
        self.max_T = int(max_T)
        self.agent = agent
        self.sync = sync
        self.step_buffer_np = step_buffer_np
        self.max_trajectories = max_trajectories
        self.env_ranks = list(env_ranks) if env_ranks is not None else list(range(len(self.envs)))
        self.n_unfinished = 0
        self.action_source: ActionSource = self.ActionSourceCls(agent, sync, step_buffer_np, len(self.envs))

    def new_traj_info(self) -> TrajInfo:
        """A fresh TrajInfo with the run's traj_info_kwargs; the same as ``self.TrajInfoCls()``."""
        return self.TrajInfoCls()

    def collect_evaluation(self, itr: int) -> list[TrajInfo]:
        n = len(self.envs)
        quotas = episode_quotas(n, self.max_trajectories)
        traj_infos = [self.new_traj_info() for _ in range(n)]
        completed: list[TrajInfo] = []
        envs, env_ranks, source = self.envs, self.env_ranks, self.action_source
        observations = [env.reset() for env in envs]
        where = f"reset() at the start of the evaluation at itr {itr}"
        # Eval envs are not validated at start-up: the first one's observation, which sets the dtype the
        # others are stored in, gets the start-up check here.
        check_observation(envs[0], observations[0], envs[0].observation_space, f"{where} (env rank {env_ranks[0]})")
        null_action = envs[0].action_space.null_value()
        observation, action, reward, done = source.begin_evaluation(itr, observations[0], null_action)
        for b, o in enumerate(observations):
            store_observation(observation, b, o, env=envs[b], env_rank=env_ranks[b], where=where)
        check_finite_batch(observation, None, envs=envs, env_ranks=env_ranks, where=where)
        action[:] = null_action
        reward[:] = 0
        done[:] = False
        finite_obs = observation if has_floating_fields(observation) else None
        float_actions = has_floating_fields(action)  # continuous actions: checked before any env steps on them
        active = quotas > 0
        # Set by a parallel sampler that shuts down (sync is an AttrDict: its attributes are its keys).
        stop_eval = self.sync.get("stop_eval") if self.sync is not None else None
        for t in range(self.max_T):
            if not active.any() or (stop_eval is not None and stop_eval.value):
                break
            agent_info = source.act()
            where = f"evaluation step() at itr {itr}, t {t}"
            if float_actions:
                check_finite_actions(action, envs=envs, env_ranks=env_ranks, where=where)
            done[:] = False
            for b in np.flatnonzero(active).tolist():
                env = envs[b]
                try:
                    o, r, d = self.step_env(
                        b, observation[b], action[b], agent_info, traj_infos, quotas, active, completed
                    )
                except EnvValidationError as error:  # the env wrapper's own checks know no rank or step
                    if error.env_rank is not None:
                        raise
                    raise with_step_context(error, env_ranks[b], where) from error
                if d:
                    source.reset_one(b)
                    store_observation(
                        observation, b, o, env=env, env_rank=env_ranks[b], where=f"reset() after the done {where}"
                    )
                else:
                    store_observation(observation, b, o, env=env, env_rank=env_ranks[b], where=where)
                reward[b] = r
                done[b] = d
            check_finite_batch(finite_obs, reward, envs=envs, env_ranks=env_ranks, where=where, reset_mask=done)
        self.n_unfinished = int(quotas.sum())
        if self.traj_infos_queue is not None:
            for info in completed:
                self.traj_infos_queue.put(info)
        return completed

    def step_env(
        self,
        b: int,
        observation: Any,
        action: Any,
        agent_info: NamedArrayTuple | None,
        traj_infos: list[TrajInfo],
        quotas: np.ndarray,
        active: np.ndarray,
        completed: list[TrajInfo],
    ) -> tuple[Any, Any, bool]:
        """Step eval env ``b`` once; a finished trajectory goes to ``completed`` and counts against the
        env's quota (``active[b]`` turns False once it is met); a done env is reset. Returns the next
        observation, the reward and done."""
        env = self.envs[b]
        o, r, d, env_info = env.step(action)
        traj_infos[b].step(observation, action, r, d, agent_info[b] if agent_info else None, env_info)
        if trajectory_done(env_info, d):
            completed.append(traj_infos[b].terminate(o))
            traj_infos[b] = self.new_traj_info()
            quotas[b] -= 1
            active[b] = quotas[b] > 0
        if d:
            o = env.reset()
        return o, r, d


def write_env_infos(dest: NamedArrayTuple, t: int, env_infos: Sequence[NamedArrayTuple | None]) -> None:
    """Write step ``t``'s env infos (one per env; None for an env not stepped) into row ``t`` of ``dest``.

    When every env returned the same record object, one write fills the row: ``GymEnvWrapper`` shares
    its records for empty info dicts, so on most steps of most envs that is the case, and this runs
    once per time step. Falsy records (no fields) are not written.
    """
    first = env_infos[0]
    for info in env_infos:
        if info is not first:
            break
    else:
        if first:
            dest[t] = first
        return
    for b, info in enumerate(env_infos):
        if info:
            dest[t, b] = info


def episode_quotas(n_envs: int, max_trajectories: int | None) -> np.ndarray:
    """Episodes each eval env runs: ``max_trajectories`` split evenly (first envs get the extra),
    or one per env when it is None. Fixing counts per env up front keeps the evaluation from
    favouring short episodes, which a shared step budget filled first-come would do."""
    if max_trajectories is None:
        return np.ones(n_envs, dtype=np.int64)
    quotas = np.full(n_envs, max_trajectories // n_envs, dtype=np.int64)
    quotas[: max_trajectories % n_envs] += 1
    return quotas


class EvalCollector(BaseEvalCollector):
    """Evaluation with the agent in this process (serial and CPU-parallel samplers): the evaluation loop of
    :class:`BaseEvalCollector` with :class:`~rlrun.samplers.action_sources.LocalActions`."""
