"""The ready-made Atari and MuJoCo configs (rlpyt's ``experiments.configs`` modules).

Every keyword in every section is one that its class takes, and every config trains: its objects
are built from the dict the way rlpyt's train scripts build them (first at full size, then with
the sizes shrunk), and the shrunk copy runs two iterations of ``runner.train()`` on real envs.
"""

from __future__ import annotations

import copy
import csv
import importlib
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import pytest

from rlrun.agents.dqn.atari.atari_catdqn_agent import AtariCatDqnAgent
from rlrun.agents.dqn.atari.atari_dqn_agent import AtariDqnAgent
from rlrun.agents.pg.atari import AtariFfAgent
from rlrun.agents.pg.mujoco import MujocoFfAgent
from rlrun.algos.dqn.cat_dqn import CategoricalDQN
from rlrun.algos.dqn.dqn import DQN
from rlrun.algos.pg.a2c import A2C
from rlrun.algos.pg.ppo import PPO
from rlrun.envs.atari.atari_env import AtariEnv, AtariTrajInfo
from rlrun.envs.gym import make as gym_make
from rlrun.envs.traj_info import TrajInfo
from rlrun.runners.minibatch_rl import MinibatchRl, MinibatchRlEval
from rlrun.samplers.parallel.cpu.collectors import CpuResetCollector, CpuWaitResetCollector
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging.context import logger_context

PACKAGE = "rlrun.experiments.configs"


@dataclass(frozen=True)
class Recipe:
    """What rlpyt's train scripts for one config module build from its dicts."""

    AlgoCls: type
    AgentCls: type
    EnvCls: Callable[..., Any]
    CollectorCls: type
    TrajInfoCls: type
    needs: str  # the module whose absence skips the training run
    names: tuple[str, ...]  # the config names the module holds
    # Config names whose train script builds other classes: name -> (AlgoCls, AgentCls).
    other_classes: dict[str, tuple[type, type]] = field(default_factory=dict)

    def classes(self, name: str) -> tuple[type, type]:
        """The algorithm and agent classes rlpyt's train script for config ``name`` builds."""
        return self.other_classes.get(name, (self.AlgoCls, self.AgentCls))


RECIPES = {
    "atari.pg.atari_ff_a2c": Recipe(
        A2C, AtariFfAgent, AtariEnv, CpuWaitResetCollector, AtariTrajInfo, "ale_py", ("0", "low_lr", "2gpu")
    ),
    "atari.pg.atari_ff_ppo": Recipe(
        PPO, AtariFfAgent, AtariEnv, CpuWaitResetCollector, AtariTrajInfo, "ale_py", ("0",)
    ),
    "atari.dqn.atari_dqn": Recipe(
        DQN,
        AtariDqnAgent,
        AtariEnv,
        CpuResetCollector,  # as rlpyt's serial DQN script; rlrun's DQN refuses wait-reset collectors
        AtariTrajInfo,
        "ale_py",
        (
            "dqn",
            "double",
            "dueling",
            "rmsprop",
            "fast_log",
            "short_run",
            "no_eval",
            "serial",
            "cpu",
            "debug",
            "debug_vec_eps",
            "async_big",
            "catdqn",
            "ernbw",
        ),
        other_classes={name: (CategoricalDQN, AtariCatDqnAgent) for name in ("catdqn", "ernbw")},
    ),
    "mujoco.pg.mujoco_a2c": Recipe(A2C, MujocoFfAgent, gym_make, CpuResetCollector, TrajInfo, "mujoco", ("a2c_1M",)),
    "mujoco.pg.mujoco_ppo": Recipe(
        PPO,
        MujocoFfAgent,
        gym_make,
        CpuResetCollector,
        TrajInfo,
        "mujoco",
        ("ppo_1M_serial", "ppo_1M_cpu", "ppo_32ep_1mb"),
    ),
}
SKIP_REASONS = {
    "ale_py": "Atari configs train on ALE's Pong, which needs ale-py (pip install rlrun[atari])",
    "mujoco": "MuJoCo configs train on Gymnasium's Hopper-v5, which needs the mujoco package (pip install rlrun[mujoco])",
}
CASES = [(module, name) for module, recipe in RECIPES.items() for name in recipe.names]
CASE_IDS = [f"{module.rsplit('.', 1)[1]}[{name}]" for module, name in CASES]


def configs_of(module: str) -> dict[str, dict[str, Any]]:
    return importlib.import_module(f"{PACKAGE}.{module}").configs


def runner_cls(recipe: Recipe, config: dict[str, Any]) -> type:
    """rlpyt ran DQN (and its variants) under the evaluating runner unless the config has no evaluation envs."""
    evaluates = issubclass(recipe.AlgoCls, DQN) and config["sampler"].get("eval_n_envs", 0) > 0
    return MinibatchRlEval if evaluates else MinibatchRl


def accepted_keywords(obj: Callable[..., Any]) -> set[str] | None:
    """The keyword names ``obj(...)`` takes, following ``**kwargs`` up a class's MRO; None: any name."""
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    if not inspect.isclass(obj):
        params = inspect.signature(obj).parameters.values()
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            return None
        return {p.name for p in params if p.kind in named}
    names: set[str] = set()
    for klass in obj.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        params = list(inspect.signature(init).parameters.values())[1:]  # drop self
        names |= {p.name for p in params if p.kind in named}
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            break
    return names


def keyword_default(cls: type, name: str) -> Any:
    """The default of keyword ``name`` of ``cls``, from the first ``__init__`` up its MRO that names it."""
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is not None and klass is not object:
            params = inspect.signature(init).parameters
            if name in params:
                return params[name].default
    raise KeyError(f"{cls.__qualname__} takes no keyword {name!r}")


def build(recipe: Recipe, name: str, config: dict[str, Any], seed: int | None = None) -> Any:
    """The runner rlpyt's train script builds from config ``name``, with a SerialSampler (on a copy)."""
    config = copy.deepcopy(config)
    AlgoCls, AgentCls = recipe.classes(name)
    eval_kwargs = {}
    if "eval_env" in config:
        config["eval_env"]["game"] = config["env"]["game"]  # as rlpyt's DQN scripts do
        eval_kwargs = dict(eval_env_kwargs=config["eval_env"])
    sampler = SerialSampler(
        EnvCls=recipe.EnvCls,
        env_kwargs=config["env"],
        CollectorCls=recipe.CollectorCls,
        TrajInfoCls=recipe.TrajInfoCls,
        **eval_kwargs,
        **config["sampler"],
    )
    algo = AlgoCls(optim_kwargs=config["optim"], **config["algo"])
    agent = AgentCls(model_kwargs=config["model"], **config["agent"])
    return runner_cls(recipe, config)(
        algo=algo,
        agent=agent,
        sampler=sampler,
        affinity=dict(master_torch_threads=1),
        seed=seed,
        **config["runner"],
    )


def _like(old: Any, new: int) -> Any:
    """``new`` in the type of ``old`` (rlpyt's configs give sizes as floats such as 50e6)."""
    return type(old)(new)


def shrink(config: dict[str, Any]) -> dict[str, Any]:
    """A copy with the sizes cut to a two-iteration run on one env; every other value is kept."""
    small = copy.deepcopy(config)
    sampler, algo, runner = small["sampler"], small["algo"], small["runner"]
    sampler["batch_B"] = 1
    sampler["batch_T"] = min(sampler["batch_T"], max(4, algo.get("minibatches", 1)))  # a step per minibatch
    if "replay_size" in algo:  # the second iteration must find complete n-step windows in the replay
        sampler["batch_T"] = max(sampler["batch_T"], algo.get("n_step_return", 1) + 1)
    sampler["max_decorrelation_steps"] = min(sampler["max_decorrelation_steps"], 20)
    if sampler.get("eval_n_envs", 0) > 0:
        sampler["eval_n_envs"] = 1
        sampler["eval_max_steps"] = _like(sampler["eval_max_steps"], 40)
        sampler["eval_max_trajectories"] = 1
    steps = sampler["batch_T"] * sampler["batch_B"]
    runner["n_steps"] = _like(runner["n_steps"], 2 * steps)
    if "log_interval_steps" in runner:
        runner["log_interval_steps"] = _like(runner["log_interval_steps"], steps)
    if "replay_size" in algo:
        algo["replay_size"] = _like(algo["replay_size"], 100)
        algo["min_steps_learn"] = _like(algo["min_steps_learn"], steps)  # learn in the second iteration
        algo["batch_size"] = min(algo["batch_size"], 32)
        if "eps_steps" in algo:
            algo["eps_steps"] = _like(algo["eps_steps"], 2 * steps)
    return small


def test_each_module_holds_the_expected_config_names():
    for module, recipe in RECIPES.items():
        imported = importlib.import_module(f"{PACKAGE}.{module}")
        assert tuple(imported.configs) == recipe.names, module
        assert imported.config is imported.configs[recipe.names[0]], module


def test_configs_share_no_dicts():
    """Derived configs are deep copies: changing one (as a variant does) leaves the others alone."""
    for module in RECIPES:
        seen: dict[int, str] = {}
        for name, config in configs_of(module).items():
            for section, values in config.items():
                assert isinstance(values, dict), f"{module}[{name}][{section}] is not a dict"
                where = seen.setdefault(id(values), f"{name}.{section}")
                assert where == f"{name}.{section}", f"{module}: {name}.{section} is the same dict as {where}"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("module, name", CASES, ids=CASE_IDS)
def test_every_keyword_is_taken_by_its_class(module, name):
    recipe = RECIPES[module]
    config = configs_of(module)[name]
    algo = config["algo"]
    AlgoCls, AgentCls = recipe.classes(name)
    ModelCls = AgentCls().ModelCls
    OptimCls = algo.get("OptimCls", keyword_default(AlgoCls, "OptimCls"))
    targets: dict[str, list[Callable[..., Any]]] = {
        "env": [recipe.EnvCls],
        "sampler": [SerialSampler, CpuSampler, GpuSampler],
        "algo": [AlgoCls],
        "optim": [OptimCls],
        "agent": [AgentCls],
        "model": [ModelCls],
        "runner": [runner_cls(recipe, config)],
    }
    if issubclass(AlgoCls, DQN):
        targets["eval_env"] = [recipe.EnvCls]
    if recipe.EnvCls is gym_make:  # its other keywords go on to the env, past the signature
        assert config["env"]["id"] in gymnasium.registry, f"Gymnasium has no env {config['env']['id']!r}"
    assert set(config) == set(targets), f"sections {sorted(config)}, expected {sorted(targets)}"
    for section, classes in targets.items():
        for cls in classes:
            accepted = accepted_keywords(cls)
            if accepted is None:
                continue
            unknown = set(config[section]) - accepted
            assert not unknown, f"{section}: {sorted(unknown)} not taken by {cls.__qualname__}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("module, name", CASES, ids=CASE_IDS)
def test_config_builds_and_trains_two_iterations(module, name, tmp_path, monkeypatch):
    recipe = RECIPES[module]
    pytest.importorskip(recipe.needs, reason=SKIP_REASONS[recipe.needs])
    monkeypatch.chdir(tmp_path)  # MuJoCo may write MUJOCO_LOG.TXT into the working directory
    config = configs_of(module)[name]
    build(recipe, name, config)  # at full size: the constructors check the real values (nothing starts yet)

    small = shrink(config)
    runner = build(recipe, name, small, seed=0)
    run_name = small["env"]["game"] if "game" in small["env"] else small["env"]["id"]
    with logger_context(str(tmp_path / "runs"), 0, run_name, small) as run_dir:
        runner.train()

    with open(f"{run_dir}/progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows, "no diagnostics row was logged"
    assert float(rows[-1]["Diagnostics/CumSteps"]) == small["runner"]["n_steps"]
    if "replay_size" in small["algo"]:  # the second iteration learns from the replay
        assert float(rows[-1]["Diagnostics/CumUpdates"]) > 0
    with open(f"{run_dir}/params.json") as f:
        params = json.load(f)
    assert params["name"] == run_name and set(params["algo"]) == set(small["algo"])
