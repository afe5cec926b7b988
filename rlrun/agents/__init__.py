"""Agents: a model, an action distribution, and the glue between samplers, algorithms and devices.

The classes live at rlpyt's paths (``rlrun.agents.pg.categorical.CategoricalPgAgent``, ...) and are
re-exported here for short imports.
"""

from rlrun.agents.base import AgentInputs, AgentStep, BaseAgent, RecurrentAgentMixin
from rlrun.agents.dqn.atari.atari_dqn_agent import AtariDqnAgent
from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.pg.atari import AtariFfAgent
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.agents.pg.gaussian import GaussianPgAgent
from rlrun.agents.pg.mujoco import MujocoFfAgent

__all__ = [
    "AgentInputs",
    "AgentStep",
    "BaseAgent",
    "RecurrentAgentMixin",
    "CategoricalPgAgent",
    "GaussianPgAgent",
    "AtariFfAgent",
    "MujocoFfAgent",
    "DqnAgent",
    "AtariDqnAgent",
]
