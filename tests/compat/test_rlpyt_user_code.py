"""Code written for rlpyt, with only ``rlpyt`` replaced by ``rlrun``, runs: one test per break found by
running such code (issue 31), each written the way a user's script does it."""

from __future__ import annotations

import csv
import importlib

import numpy as np
import pytest
import torch

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.agents.qpg.sac_agent import SacAgent
from rlrun.compat.star_imports import star_names
from rlrun.envs.base import Env, EnvStep
from rlrun.envs.gym import make as gym_make
from rlrun.samplers.base import BaseSampler
from rlrun.samplers.collections import TrajInfo
from rlrun.samplers.parallel.cpu.collectors import CpuResetCollector
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.serial.collectors import SerialEvalCollector
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.spaces.float_box import FloatBox
from rlrun.spaces.int_box import IntBox
from rlrun.utils.collections import namedtuple
from rlrun.utils.logging import logger
from rlrun.utils.seed import set_seed

pytestmark = pytest.mark.timeout(120)


# --- 1. star imports -------------------------------------------------------------------------------


def test_star_import_of_an_agent_module_brings_numpy_and_torch_as_in_rlpyt():
    namespace: dict = {}
    exec("from rlrun.agents.pg.gaussian import *", namespace)
    assert namespace["np"] is np and namespace["torch"] is torch
    assert namespace["GaussianPgAgent"].__name__ == "GaussianPgAgent"
    assert {"AgentStep", "buffer_to", "DistInfoStd"} <= set(namespace)


@pytest.mark.parametrize("module_name", sorted(star_names()))
def test_every_recorded_star_name_is_given_by_the_star_import(module_name):
    """The table rlrun/compat/rlpyt_star_names.json stays true: each name resolves to a real object."""
    namespace: dict = {}
    exec(f"from {module_name} import *", namespace)
    missing = sorted(set(star_names()[module_name]) - set(namespace))
    assert not missing, f"`from {module_name} import *` lacks {missing}"
    importlib.import_module(module_name)


def test_the_core_imports_no_alias_only_rlpyt_path():
    """rlpyt's paths that only re-export names are edge modules: the core imports the names where they live."""
    import ast
    from pathlib import Path

    from rlrun.compat import RLPYT_ALIAS_MODULES

    root = Path(importlib.import_module("rlrun").__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if rel.parts[0] == "compat":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in RLPYT_ALIAS_MODULES:
                offenders.append(f"{rel}: {node.module}")
    assert not offenders
    for name in RLPYT_ALIAS_MODULES:  # each still importable, and still nothing but re-exports
        module = importlib.import_module(name)
        tree = ast.parse(Path(module.__file__).read_text())
        assert all(
            isinstance(n, (ast.Import, ast.ImportFrom))
            or (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
            or (isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) and n.targets[0].id == "__all__")
            for n in tree.body
        ), name


def test_no_core_module_imports_the_compat_edge():
    """The core never imports rlrun.compat; only the package root attaches it."""
    import ast
    from pathlib import Path

    root = Path(importlib.import_module("rlrun").__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if rel.parts[0] == "compat" or rel == Path("__init__.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            offenders += [f"{rel}: {n}" for n in names if n == "rlrun.compat" or n.startswith("rlrun.compat.")]
    assert not offenders


# --- 2. a custom env declares FloatBox(low, high, shape=int) and reads its bounds -----------------

EnvInfo = namedtuple("EnvInfo", ["dist"])


class PointEnv(Env):
    """A point on a line pushed towards 0; the action is clipped with the space's bounds."""

    def __init__(self, episode_steps: int = 20) -> None:
        self._action_space = FloatBox(low=-1.0, high=1.0, shape=2)
        self._observation_space = FloatBox(low=-10.0, high=10.0, shape=2)
        self.episode_steps = episode_steps

    def reset(self):
        self._t, self._x = 0, np.full(2, 3.0, dtype=np.float32)
        return self._x.copy()

    def step(self, action):
        high = self.action_space.high[0]  # rlpyt broadcast the bounds: this indexing is the break
        self._x = (self._x + np.clip(action, -high, high)).astype(np.float32)
        self._t += 1
        dist = float(np.abs(self._x).sum())
        return EnvStep(self._x.copy(), -dist, self._t >= self.episode_steps, EnvInfo(dist=dist))


def test_custom_env_with_scalar_bounded_floatbox_samples_in_a_sampler():
    env = PointEnv()
    assert env.action_space.high.shape == (2,) and env.observation_space.low[1] == -10.0
    from rlrun.agents.pg.mujoco import MujocoFfAgent

    sampler = SerialSampler(EnvCls=PointEnv, env_kwargs={}, batch_T=10, batch_B=2, max_decorrelation_steps=0)
    agent = MujocoFfAgent()
    sampler.initialize(agent, seed=1)
    try:
        samples, _ = sampler.obtain_samples(0)
        assert samples.env.observation.shape == (10, 2, 2) and samples.env.env_info.dist.shape == (10, 2)
    finally:
        sampler.shutdown()


# --- 3. an agent whose step returns a plain (action, agent_info) tuple -----------------------------


class TupleAgent(CategoricalPgAgent):
    """Overrides ``step`` the rlpyt way: ``return action, agent_info``, with no AgentStep."""

    calls = 0

    @torch.no_grad()
    def step(self, observation, prev_action, prev_reward):
        agent_step = super().step(observation, prev_action, prev_reward)
        type(self).calls += 1
        return agent_step.action, agent_step.agent_info


@pytest.mark.parametrize("SamplerCls", [SerialSampler, CpuSampler])
def test_agent_step_returning_a_plain_tuple_fills_the_samples(SamplerCls):
    sampler = SamplerCls(
        EnvCls=gym_make, env_kwargs=dict(id="CartPole-v1"), batch_T=8, batch_B=2, max_decorrelation_steps=0
    )
    agent = TupleAgent(model_kwargs=dict(hidden_sizes=[16]))
    sampler.initialize(agent, seed=3)
    try:
        samples, _ = sampler.obtain_samples(0)
        action, prob = samples.agent.action, samples.agent.agent_info.dist_info.prob
        assert action.shape == (8, 2) and prob.shape == (8, 2, 2)
        assert torch.allclose(prob.sum(-1), torch.ones(8, 2))  # written, not left zero
    finally:
        sampler.shutdown()


# --- 4. a BaseSampler subclass built positionally, with rlpyt's "no evaluation" zeros ----------------


class MySampler(SerialSampler):
    """A user's sampler: its own constructor forwards everything positionally."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.made_by_user = True


def test_sampler_subclass_built_positionally_with_eval_zeros_is_accepted():
    # rlpyt's order: EnvCls, env_kwargs, batch_T, batch_B, CollectorCls, max_decorrelation_steps,
    # TrajInfoCls, eval_n_envs, eval_CollectorCls, eval_env_kwargs, eval_max_steps, eval_max_trajectories
    sampler = BaseSampler(
        gym_make, dict(id="CartPole-v1"), 4, 1, CpuResetCollector, 0, TrajInfo, 0, SerialEvalCollector, None, None, 0
    )
    assert sampler.batch_spec == (4, 1) and sampler.eval_n_envs == 0
    mine = MySampler(gym_make, dict(id="CartPole-v1"), 4, 2, eval_n_envs=0, eval_max_trajectories=0)
    mine.initialize(CategoricalPgAgent(), seed=0)
    try:
        samples, _ = mine.obtain_samples(0)
        assert mine.made_by_user and samples.env.reward.shape == (4, 2)
    finally:
        mine.shutdown()
    with pytest.raises(ValueError, match="eval_max_trajectories"):
        BaseSampler(gym_make, {}, 4, 1, CpuResetCollector, eval_n_envs=1, eval_max_steps=10, eval_max_trajectories=0)


# --- 5. IntBox samples feed torch.from_numpy, with rlpyt's int32 default ---------------------------


def test_intbox_sample_goes_through_torch_from_numpy():
    space = IntBox(low=0, high=4)
    action = space.sample()
    tensor = torch.from_numpy(action)
    assert space.dtype == np.int32 and tensor.dtype == torch.int32 and tensor.shape == ()
    assert torch.from_numpy(IntBox(0, 4, shape=3).sample()).shape == (3,)


# --- 6. SacAgent(pretrain_std=0.0) acts deterministically --------------------------------------------


def _seeded_samples(sampler, agent):
    set_seed(0)
    sampler.initialize(agent, seed=0)
    try:
        samples, _ = sampler.obtain_samples(0)
        return samples.agent.action.clone(), samples.env.observation.clone()
    finally:
        sampler.shutdown()


def test_sac_agent_with_zero_pretrain_std_samples_the_same_batch_twice():
    """rlpyt's own test: with pretrain_std=0.0 and one seed, two initialisations give the same batch."""
    sampler = SerialSampler(
        EnvCls=gym_make, env_kwargs={"id": "MountainCarContinuous-v0"}, batch_T=4, batch_B=1, max_decorrelation_steps=0
    )
    agent = SacAgent(pretrain_std=0.0)
    agent.give_min_itr_learn(10000)
    first, second = _seeded_samples(sampler, agent), _seeded_samples(sampler, agent)
    assert torch.equal(first[0], second[0]) and torch.equal(first[1], second[1])
    mean = agent.model(*agent.model_inputs(first[1][:1, 0], None, None))[0]  # the policy's mean at step 0
    assert torch.allclose(first[0][0, 0], torch.tanh(mean).squeeze(0), atol=1e-6)


# --- 7. a tabular key first recorded late gets its column ------------------------------------------------


def test_user_key_recorded_from_the_second_row_on_is_kept_in_progress_csv(tmp_path):
    path = tmp_path / "progress.csv"
    logger.add_tabular_output(str(path))
    try:
        for itr in range(3):
            logger.record_tabular("Iteration", itr)
            if itr >= 1:
                logger.record_tabular("MyMetric", 10 * itr)
            logger.dump_tabular()
    finally:
        logger.remove_tabular_output(str(path))
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["MyMetric"] for r in rows] == ["", "10", "20"]
