"""Build a runner from a config in sections (:mod:`rlrun.experiments.registry`), as a train script would.

The classes come from the algorithm and the env family; the sampler from its name, with the
collectors it needs: recurrent agents (LSTM a2c/ppo, r2d1) train on whole ``[T, B]`` sequences, so
their envs wait for the batch end to reset (``WaitResetCollector`` where the agent acts beside the
envs, ``GpuWaitResetCollector`` where this process serves the actions), as rlpyt's train scripts for
them sampled. A config with evaluation settings (``sampler.eval_n_envs > 0``) gets
:class:`~rlrun.runners.minibatch_rl.MinibatchRlEval`, else :class:`~rlrun.runners.minibatch_rl.MinibatchRl`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from rlrun.experiments.registry import ConfigError, EnvChoice
from rlrun.utils.launching.affinity import default_affinity, master_threads_beside_workers

if TYPE_CHECKING:
    from rlrun.agents.base import BaseAgent
    from rlrun.runners.minibatch_rl import MinibatchRl, MinibatchRlEval
    from rlrun.samplers.auto.choose import Choice

__all__ = [
    "SAMPLERS",
    "agent_and_algo_classes",
    "sampler_classes",
    "make_affinity_for",
    "optimizer_class",
    "build_runner",
    "env_class",
    "agent_kwargs_of",
]

SAMPLERS = ("auto", "serial", "cpu", "gpu", "alternating")  # auto: measured at start-up (rlrun.samplers.auto)

# (algo, family, recurrent) -> ("module:Class" of the algorithm, of the agent)
_CLASSES: dict[tuple[str, str, bool], tuple[str, str]] = {
    ("a2c", "discrete", False): ("pg.a2c:A2C", "pg.categorical:CategoricalPgAgent"),
    ("a2c", "discrete", True): ("pg.a2c:A2C", "pg.categorical:RecurrentCategoricalPgAgent"),
    ("ppo", "discrete", False): ("pg.ppo:PPO", "pg.categorical:CategoricalPgAgent"),
    ("ppo", "discrete", True): ("pg.ppo:PPO", "pg.categorical:RecurrentCategoricalPgAgent"),
    ("dqn", "discrete", False): ("dqn.dqn:DQN", "dqn.dqn_agent:DqnAgent"),
    ("catdqn", "discrete", False): ("dqn.cat_dqn:CategoricalDQN", "dqn.catdqn_agent:CatDqnAgent"),
    ("r2d1", "discrete", True): ("dqn.r2d1:R2D1", "dqn.r2d1_agent:R2d1Agent"),
    ("a2c", "continuous", False): ("pg.a2c:A2C", "pg.mujoco:MujocoFfAgent"),
    ("a2c", "continuous", True): ("pg.a2c:A2C", "pg.mujoco:MujocoLstmAgent"),
    ("ppo", "continuous", False): ("pg.ppo:PPO", "pg.mujoco:MujocoFfAgent"),
    ("ppo", "continuous", True): ("pg.ppo:PPO", "pg.mujoco:MujocoLstmAgent"),
    ("ddpg", "continuous", False): ("qpg.ddpg:DDPG", "qpg.ddpg_agent:DdpgAgent"),
    ("td3", "continuous", False): ("qpg.td3:TD3", "qpg.td3_agent:Td3Agent"),
    ("sac", "continuous", False): ("qpg.sac:SAC", "qpg.sac_agent:SacAgent"),
    ("a2c", "atari", False): ("pg.a2c:A2C", "pg.atari:AtariFfAgent"),
    ("a2c", "atari", True): ("pg.a2c:A2C", "pg.atari:AtariLstmAgent"),
    ("ppo", "atari", False): ("pg.ppo:PPO", "pg.atari:AtariFfAgent"),
    ("ppo", "atari", True): ("pg.ppo:PPO", "pg.atari:AtariLstmAgent"),
    ("dqn", "atari", False): ("dqn.dqn:DQN", "dqn.atari.atari_dqn_agent:AtariDqnAgent"),
    ("catdqn", "atari", False): ("dqn.cat_dqn:CategoricalDQN", "dqn.atari.atari_catdqn_agent:AtariCatDqnAgent"),
    ("r2d1", "atari", True): ("dqn.r2d1:R2D1", "dqn.atari.atari_r2d1_agent:AtariR2d1Agent"),
}

_SAMPLER_CLASSES = {
    "serial": "rlrun.samplers.serial.sampler:SerialSampler",
    "cpu": "rlrun.samplers.parallel.cpu.sampler:CpuSampler",
    "gpu": "rlrun.samplers.parallel.gpu.sampler:GpuSampler",
    "alternating": "rlrun.samplers.parallel.gpu.alternating_sampler:AlternatingSampler",
}
_WAIT_RESET_COLLECTORS = {
    "serial": "rlrun.samplers.collectors:WaitResetCollector",
    "cpu": "rlrun.samplers.parallel.cpu.collectors:CpuWaitResetCollector",
    "gpu": "rlrun.samplers.parallel.gpu.collectors:GpuWaitResetCollector",
    "alternating": "rlrun.samplers.parallel.gpu.collectors:GpuWaitResetCollector",
}


def _load(dotted: str) -> Any:
    module, _, name = dotted.partition(":")
    return getattr(importlib.import_module(module), name)


def agent_and_algo_classes(algo: str, family: str, recurrent: bool) -> tuple[type, type]:
    """``(AlgoCls, AgentCls)`` for ``algo`` on ``family``; r2d1 is always recurrent."""
    key = (algo, family, recurrent or algo == "r2d1")
    if key not in _CLASSES:
        raise ConfigError(f"No agent for {algo} on the {family} family{' with --recurrent' * recurrent}.")
    algo_path, agent_path = _CLASSES[key]
    return _load(f"rlrun.algos.{algo_path}"), _load(f"rlrun.agents.{agent_path}")


def sampler_classes(sampler: str, recurrent: bool) -> tuple[type, dict[str, type]]:
    """``(SamplerCls, its collector keywords)``: wait-reset collectors for recurrent agents."""
    if sampler not in _SAMPLER_CLASSES:  # "auto" is resolved to one of them before
        raise ConfigError(f"Unknown sampler {sampler!r}; choose from {', '.join(SAMPLERS)}.")
    kwargs = dict(CollectorCls=_load(_WAIT_RESET_COLLECTORS[sampler])) if recurrent else {}
    return _load(_SAMPLER_CLASSES[sampler]), kwargs


def check_cuda_idx(cuda_idx: int | None) -> None:
    """Raise :class:`ConfigError` unless ``cuda_idx`` is None or a GPU that torch sees."""
    if cuda_idx is not None:
        import torch

        if not 0 <= cuda_idx < torch.cuda.device_count():
            raise ConfigError(
                f"--cuda-idx {cuda_idx}: this machine has {torch.cuda.device_count()} CUDA GPU(s) visible to torch; "
                "leave --cuda-idx out to train on the CPU."
            )


def make_affinity_for(
    sampler: str, batch_B: int, workers: int | None, cuda_idx: int | None, master_threads: int | None
) -> dict[str, object]:
    """The runner's affinity: unpinned workers (``workers``, default one per CPU up to the envs per
    group), the rest of the CPUs as torch threads in this process, or ``master_threads`` there."""
    check_cuda_idx(cuda_idx)
    if sampler == "serial":
        if workers is not None:
            raise ConfigError("--workers sets the worker processes of a parallel sampler: add --sampler cpu, gpu or alternating.")  # fmt: skip
        threads = master_threads if master_threads is not None else master_threads_beside_workers(0)
        return dict(cuda_idx=cuda_idx, master_torch_threads=threads)
    alternating = sampler == "alternating"
    groups_B = batch_B // 2 if alternating else batch_B
    if workers is None:
        workers = max(1, min(len(default_affinity().workers_cpus), groups_B))
    if workers > groups_B:
        raise ConfigError(
            f"{workers} workers for {batch_B} envs: each worker needs an env{' per group' * alternating}; "
            f"give --workers {max(1, groups_B)} or more envs (--n-envs)."
        )
    affinity = dict(default_affinity(workers, alternating=alternating), cuda_idx=cuda_idx)
    if master_threads is not None:
        affinity["master_torch_threads"] = master_threads
    return affinity


def optimizer_class(name: str) -> type:
    """The optimiser called ``name``: one of ``torch.optim`` (``"RMSprop"`` or ``"torch.optim.RMSprop"``) or
    of :mod:`rlrun.algos.optim` (``"RMSpropTF"``)."""
    import torch

    from rlrun.algos import optim

    short = name.removeprefix("torch.optim.").removeprefix("rlrun.algos.optim.")
    modules = (torch.optim, optim)
    cls = next((getattr(m, short) for m in modules if hasattr(m, short)), None)
    if not (isinstance(cls, type) and issubclass(cls, torch.optim.Optimizer)) or cls is torch.optim.Optimizer:
        known = sorted({n for m in modules for n, c in vars(m).items() if isinstance(c, type) and issubclass(c, torch.optim.Optimizer)} - {"Optimizer"})  # fmt: skip
        raise ConfigError(f"OptimCls={name!r} names no optimiser of torch.optim or rlrun.algos.optim; choose one of {', '.join(known)}.")  # fmt: skip
    return cls


def choose_auto(
    algo: str, env: EnvChoice, config: dict[str, Any], recurrent: bool, workers: int | None, cuda_idx: int | None
) -> Choice:
    """``sampler="auto"`` for a config: measure, choose and print the table (see :mod:`rlrun.samplers.auto`).
    A caller that resumes the run later keeps ``choice.layout`` (``rlrun train`` stores it in params.json),
    so that the resumed run samples with the same layout rather than measuring again."""
    from rlrun.samplers.auto.run import choose_for_run

    check_cuda_idx(cuda_idx)
    _AlgoCls, AgentCls = agent_and_algo_classes(algo, env.family, recurrent)
    try:
        return choose_for_run(
            env_class(env), dict(config["env"]), AgentCls, agent_kwargs_of(config), config["sampler"], workers,
            cuda_idx, n_steps=int(config["runner"]["n_steps"]),
        )  # fmt: skip
    except (TypeError, ValueError) as error:
        raise ConfigError(f"sampler=auto could not measure this run: {error}") from error


def build_runner(
    algo: str,
    env: EnvChoice,
    config: dict[str, Any],
    sampler: str = "serial",
    recurrent: bool = False,
    workers: int | None = None,
    cuda_idx: int | None = None,
    seed: int | None = None,
    torch_threads: int | None = None,
) -> MinibatchRl[BaseAgent] | MinibatchRlEval[BaseAgent]:
    """A runner training ``algo`` on ``env`` from ``config`` (sections); raises :class:`ConfigError` for
    keywords that a class does not take, naming the section. ``torch_threads`` sets the training process's
    torch threads (default: 1 for MLPs, the CPUs the sampler's workers leave for Atari networks)."""
    AlgoCls, AgentCls = agent_and_algo_classes(algo, env.family, recurrent)
    agent_kwargs = agent_kwargs_of(config)
    choice = None
    if sampler == "auto":
        choice = choose_auto(algo, env, config, recurrent, workers, cuda_idx)
        sampler, workers = choice.layout.kind, (choice.layout.workers or None)
    SamplerCls, collector_kwargs = sampler_classes(sampler, recurrent or algo == "r2d1")
    algo_kwargs = dict(config["algo"])
    for key, value in algo_kwargs.items():  # --set algo.OptimCls="'RMSprop'": a class of torch.optim by name
        if key.endswith("OptimCls") and isinstance(value, str):
            algo_kwargs[key] = optimizer_class(value)
    if config.get("optim"):
        algo_kwargs["optim_kwargs"] = {**(algo_kwargs.get("optim_kwargs") or {}), **config["optim"]}
    sampler_kwargs = {**collector_kwargs, **config["sampler"], "EnvCls": env_class(env)}
    if env.family == "atari":
        from rlrun.envs.atari.atari_env import AtariTrajInfo

        sampler_kwargs["TrajInfoCls"] = AtariTrajInfo
        if sampler_kwargs.get("eval_n_envs", 0) > 0:  # whole games, as the DQN and R2D1 configs evaluate
            eval_env = dict(config["env"], episodic_lives=False)
            sampler_kwargs["eval_env_kwargs"] = {**eval_env, **config.get("eval_env", {})}
    sampler_kwargs["env_kwargs"] = dict(config["env"])
    small_models = env.family != "atari"  # MLPs gain nothing from more threads on a busy machine
    if torch_threads is None and small_models:
        torch_threads = 1
    affinity = make_affinity_for(sampler, int(sampler_kwargs.get("batch_B", 1)), workers, cuda_idx, torch_threads)
    built = {}
    for section, cls, kwargs in (
        ("sampler", SamplerCls, sampler_kwargs),
        ("algo", AlgoCls, algo_kwargs),
        ("agent", AgentCls, agent_kwargs),
    ):
        try:
            built[section] = cls(**kwargs)
        except (TypeError, ValueError) as error:
            raise ConfigError(f"The {section!r} section does not build {cls.__name__}: {error}") from error
    from rlrun.runners.minibatch_rl import MinibatchRl, MinibatchRlEval

    RunnerCls = MinibatchRlEval if sampler_kwargs.get("eval_n_envs", 0) > 0 else MinibatchRl
    try:
        runner = RunnerCls(**built, seed=seed, affinity=affinity, **config["runner"])
    except (TypeError, ValueError) as error:
        raise ConfigError(f"The 'runner' section does not build {RunnerCls.__name__}: {error}") from error
    if choice is not None:
        from rlrun.samplers.auto.run import check_speed

        check_speed(runner.sampler, choice)
    return runner


def agent_kwargs_of(config: dict[str, Any]) -> dict[str, Any]:
    """The agent's keywords: the ``agent`` section, with the ``model`` section as its ``model_kwargs``."""
    agent_kwargs = dict(config["agent"])
    if config.get("model"):
        agent_kwargs["model_kwargs"] = {**(agent_kwargs.get("model_kwargs") or {}), **config["model"]}
    return agent_kwargs


def env_class(env: EnvChoice) -> Any:
    """The env class (or factory) of ``env``'s family: ``AtariEnv`` for ALE games, else ``rlrun.envs.gym.make``."""
    if env.family == "atari":
        from rlrun.envs.atari.atari_env import AtariEnv

        return AtariEnv
    from rlrun.envs.gym import make

    return make
