"""The ready-made Atari and MuJoCo configs (rlpyt's ``experiments.configs`` modules).

Every keyword in every section is one that its class takes, and every config builds: its objects
are built from the dict the way rlpyt's train scripts build them, at full size. Every config trains:
a copy with the sizes shrunk runs two iterations of ``runner.train()`` on real envs; the off-policy
ones learn from their replay in the second. By default that training run is made only for the
configs that bring a setting no other trained config of their module brings (REPRESENTATIVE below);
the others, which differ from those only in sizes and rates, train in the slow set
(``python -m pytest -m slow tests/experiments/test_configs.py``).
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
from rlrun.agents.dqn.atari.atari_r2d1_agent import AtariR2d1Agent
from rlrun.agents.pg.atari import AtariFfAgent, AtariLstmAgent
from rlrun.agents.pg.mujoco import MujocoFfAgent
from rlrun.agents.qpg.ddpg_agent import DdpgAgent
from rlrun.agents.qpg.sac_agent import SacAgent
from rlrun.agents.qpg.td3_agent import Td3Agent
from rlrun.algos.dqn.cat_dqn import CategoricalDQN
from rlrun.algos.dqn.dqn import DQN
from rlrun.algos.dqn.r2d1 import R2D1
from rlrun.algos.pg.a2c import A2C
from rlrun.algos.pg.ppo import PPO
from rlrun.algos.qpg.ddpg import DDPG
from rlrun.algos.qpg.sac import SAC
from rlrun.algos.qpg.td3 import TD3
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
    # The section the train script passes as eval_env_kwargs (None: no evaluation). rlpyt's DQN and
    # R2D1 scripts pass "eval_env", its qpg scripts "env" again.
    eval_env: str | None = None
    # Whether the train script passes the "model" section as the agent's model_kwargs. rlpyt's qpg
    # scripts build the agent from "agent" alone (its model_kwargs and q_model_kwargs are there).
    model_section: bool = True

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
    # Recurrent agents need wait-reset collectors, which rlpyt's LSTM scripts use too.
    "atari.pg.atari_lstm_a2c": Recipe(
        A2C, AtariLstmAgent, AtariEnv, CpuWaitResetCollector, AtariTrajInfo, "ale_py", ("0", "4frame", "like_ff")
    ),
    "atari.pg.atari_lstm_ppo": Recipe(
        PPO, AtariLstmAgent, AtariEnv, CpuWaitResetCollector, AtariTrajInfo, "ale_py", ("0",)
    ),
    "atari.dqn.atari_dqn": Recipe(
        DQN,
        AtariDqnAgent,
        AtariEnv,
        CpuResetCollector,  # as rlpyt's serial DQN script (its GPU scripts reset between batches)
        AtariTrajInfo,
        "ale_py",
        (
            "dqn",
            "double",
            "prioritized",
            "dueling",
            "double_pri_duel",
            "catdqn",
            "ernbw",
            "rmsprop",
            "fast_log",
            "short_run",
            "no_eval",
            "serial",
            "cpu",
            "debug",
            "debug_vec_eps",
            "async_big",
        ),
        other_classes={name: (CategoricalDQN, AtariCatDqnAgent) for name in ("catdqn", "ernbw")},
        eval_env="eval_env",
    ),
    "atari.dqn.atari_r2d1": Recipe(
        R2D1,
        AtariR2d1Agent,
        AtariEnv,
        CpuWaitResetCollector,  # for the GpuWaitResetCollector of rlpyt's synchronous R2D1 script
        AtariTrajInfo,
        "ale_py",
        (
            "r2d1",
            "r2d1_long",
            "r2d1_profile",
            "r2d1_prof_halftrain",
            "r2d1_prof_quartertrain",
            "r2d1_long_4tr",
            "async_gpu",
            "r2d1_test",
            "async_alt_pabti",
            "async_alt_dgx",
            "async_alt_got",
            "async_gpu_dgx",
        ),
        eval_env="eval_env",
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
    "mujoco.qpg.mujoco_ddpg": Recipe(
        DDPG,
        DdpgAgent,
        gym_make,
        CpuResetCollector,
        TrajInfo,
        "mujoco",
        ("ddpg_from_td3_1M_serial", "ddpg_from_td3_serial_bstl", "async_serial"),
        eval_env="env",
        model_section=False,
    ),
    "mujoco.qpg.mujoco_sac": Recipe(
        SAC,
        SacAgent,
        gym_make,
        CpuResetCollector,
        TrajInfo,
        "mujoco",
        ("sac_1M_serial", "sac_serial_bstl"),
        eval_env="env",
        model_section=False,
    ),
    "mujoco.qpg.mujoco_td3": Recipe(
        TD3,
        Td3Agent,
        gym_make,
        CpuResetCollector,
        TrajInfo,
        "mujoco",
        ("td3_1M_serial", "td3_serial_bstl", "async_cpu"),
        eval_env="env",
        model_section=False,
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
    """rlpyt's scripts that evaluate (DQN and its variants, R2D1, the serial qpg ones) ran the evaluating
    runner, unless the config has no evaluation envs."""
    evaluates = recipe.eval_env is not None and config["sampler"].get("eval_n_envs", 0) > 0
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
    if recipe.eval_env == "eval_env":
        config["eval_env"]["game"] = config["env"]["game"]  # as rlpyt's DQN and R2D1 scripts do
    if recipe.eval_env is not None:
        eval_kwargs = dict(eval_env_kwargs=config[recipe.eval_env])
    sampler = SerialSampler(
        EnvCls=recipe.EnvCls,
        env_kwargs=config["env"],
        CollectorCls=recipe.CollectorCls,
        TrajInfoCls=recipe.TrajInfoCls,
        **eval_kwargs,
        **config["sampler"],
    )
    algo = AlgoCls(optim_kwargs=config["optim"], **config["algo"])
    model_kwargs = dict(model_kwargs=config["model"]) if recipe.model_section else {}
    agent = AgentCls(**model_kwargs, **config["agent"])
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


def takes_replay(AlgoCls: type) -> bool:
    """Whether ``AlgoCls`` learns from a replay (it takes ``replay_size``)."""
    return "replay_size" in (accepted_keywords(AlgoCls) or set())


def shrink(recipe: Recipe, name: str, config: dict[str, Any]) -> dict[str, Any]:
    """A copy with the sizes cut to a two-iteration run on one env (on as many as a recurrent PPO agent
    needs); every other value is kept. Off-policy algorithms get a small replay (also where the config
    leaves ``replay_size`` and ``min_steps_learn`` at their defaults) and learn in the second iteration."""
    small = copy.deepcopy(config)
    AlgoCls, AgentCls = recipe.classes(name)
    sampler, algo, runner = small["sampler"], small["algo"], small["runner"]

    def setting(key: str) -> Any:
        return algo.get(key, keyword_default(AlgoCls, key))

    sampler["batch_B"] = 1
    if issubclass(AlgoCls, PPO) and getattr(AgentCls(), "recurrent", False):
        sampler["batch_B"] = setting("minibatches")  # a recurrent agent's minibatches are whole envs
    sampler["batch_T"] = min(sampler["batch_T"], max(4, algo.get("minibatches", 1)))  # a step per minibatch
    replays = takes_replay(AlgoCls)
    if replays:  # the second iteration must find complete n-step windows in the replay
        sampler["batch_T"] = max(sampler["batch_T"], setting("n_step_return") + 1)
    if issubclass(AlgoCls, R2D1):
        # Short sequences (burn-in, training steps, their count, the stored-state interval), and enough
        # sampler steps that two batches hold one sequence start with its n-step targets behind it.
        algo["warmup_T"] = min(setting("warmup_T"), 2)
        algo["batch_T"] = min(setting("batch_T"), 4)
        algo["batch_B"] = min(setting("batch_B"), 2)
        interval = algo["store_rnn_state_interval"] = min(setting("store_rnn_state_interval"), 2)
        needed = setting("n_step_return") + algo["warmup_T"] + algo["batch_T"] + max(1, interval)
        sampler["batch_T"] = max(sampler["batch_T"], -(-needed // 2) + 1)
    sampler["max_decorrelation_steps"] = min(sampler["max_decorrelation_steps"], 20)
    if sampler.get("eval_n_envs", 0) > 0:
        sampler["eval_n_envs"] = 1
        sampler["eval_max_steps"] = _like(sampler["eval_max_steps"], 40)
        sampler["eval_max_trajectories"] = 1
    steps = sampler["batch_T"] * sampler["batch_B"]
    runner["n_steps"] = _like(runner["n_steps"], 2 * steps)
    if "log_interval_steps" in runner:
        runner["log_interval_steps"] = _like(runner["log_interval_steps"], steps)
    if replays:
        algo["replay_size"] = _like(algo.get("replay_size", 0), 100)
        algo["min_steps_learn"] = _like(algo.get("min_steps_learn", 0), steps)  # learn in the second iteration
        if "batch_size" in algo:  # R2D1's batch is its sequences (batch_B above)
            algo["batch_size"] = min(algo["batch_size"], 32)
        if "eps_steps" in algo:
            algo["eps_steps"] = _like(algo["eps_steps"], 2 * steps)
    return small


def settings(values: dict[str, Any], prefix: str = "") -> set[tuple[str, Any]]:
    """The ``(key, value)`` pairs of a config that choose code paths: switches, names and classes, and
    the length of sequences (layer counts). Numbers (sizes, rates, intervals) choose none."""
    pairs: set[tuple[str, Any]] = set()
    for key, value in values.items():
        if isinstance(value, dict):
            pairs |= settings(value, f"{prefix}{key}.")
        elif isinstance(value, (bool, str, type)) or value is None:
            pairs.add((prefix + key, value))
        elif isinstance(value, (list, tuple)):
            pairs.add((prefix + key, len(value)))
    return pairs


def representative_cases() -> set[tuple[str, str]]:
    """Configs whose training runs together reach every code path the configs choose: per module and
    pair of classes and runner, the configs that add the most settings not yet covered, greedily,
    until every setting any of them holds is covered (a config that only resizes trains in none)."""
    chosen = set()
    for module, recipe in RECIPES.items():
        configs = configs_of(module)
        groups: dict[tuple[Any, ...], list[str]] = {}
        for name in recipe.names:
            groups.setdefault((recipe.classes(name), runner_cls(recipe, configs[name])), []).append(name)
        for names in groups.values():
            held = {
                name: settings({k: v for k, v in configs[name].items() if k not in ("sampler", "runner")})
                for name in names
            }
            covered: set[tuple[str, Any]] = set()
            while True:
                best = max(names, key=lambda name: len(held[name] - covered))  # the first on ties
                if covered and not held[best] - covered:
                    break
                chosen.add((module, best))
                covered |= held[best]
    return chosen


REPRESENTATIVE = representative_cases()
TRAIN_CASES = [
    pytest.param(module, name, id=case_id, marks=() if (module, name) in REPRESENTATIVE else pytest.mark.slow)
    for (module, name), case_id in zip(CASES, CASE_IDS)
]


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
    if recipe.eval_env == "eval_env":
        targets["eval_env"] = [recipe.EnvCls]
    if not recipe.model_section:  # no script reads it: rlpyt's sac and td3 configs hold an empty one
        assert config.get("model", {}) == {}, "a model section that the train script does not pass"
        del targets["model"]
        config = {section: values for section, values in config.items() if section != "model"}
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


@pytest.mark.timeout(30)
@pytest.mark.parametrize("module, name", CASES, ids=CASE_IDS)
def test_config_builds_at_full_size(module, name):
    recipe = RECIPES[module]
    pytest.importorskip(recipe.needs, reason=SKIP_REASONS[recipe.needs])
    build(recipe, name, configs_of(module)[name])  # the constructors check the real values (nothing starts yet)


def test_the_representative_configs_cover_every_setting_of_their_module():
    for module, recipe in RECIPES.items():
        configs = configs_of(module)
        trained = set().union(*(settings(configs[name]) for m, name in REPRESENTATIVE if m == module))
        for name in recipe.names:
            missing = settings(configs[name]) - trained
            assert not {key for key, _ in missing if not key.startswith(("sampler.", "runner."))}, (module, name)
        assert any(m == module for m, _ in REPRESENTATIVE), module


@pytest.mark.parametrize("module, name", TRAIN_CASES)
@pytest.mark.integration
def test_config_trains_two_iterations(module, name, tmp_path, monkeypatch):
    recipe = RECIPES[module]
    pytest.importorskip(recipe.needs, reason=SKIP_REASONS[recipe.needs])
    monkeypatch.chdir(tmp_path)  # MuJoCo may write MUJOCO_LOG.TXT into the working directory
    config = configs_of(module)[name]
    small = shrink(recipe, name, config)
    runner = build(recipe, name, small, seed=0)
    run_name = small["env"]["game"] if "game" in small["env"] else small["env"]["id"]
    with logger_context(str(tmp_path / "runs"), 0, run_name, small) as run_dir:
        runner.train()

    with open(f"{run_dir}/progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows, "no diagnostics row was logged"
    assert float(rows[-1]["Diagnostics/CumSteps"]) == small["runner"]["n_steps"]
    if takes_replay(recipe.classes(name)[0]):  # the second iteration learns from the replay
        assert float(rows[-1]["Diagnostics/CumUpdates"]) > 0
    with open(f"{run_dir}/params.json") as f:
        params = json.load(f)
    assert params["name"] == run_name and set(params["algo"]) == set(small["algo"])
