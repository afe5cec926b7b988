"""Spaces: the shapes, dtypes and bounds of observations and actions."""

from rlrun.spaces.base import Space
from rlrun.spaces.composite import Composite
from rlrun.spaces.float_box import FloatBox
from rlrun.spaces.gym_wrapper import GymSpaceWrapper, from_gym_space, to_gym_space
from rlrun.spaces.int_box import IntBox

__all__ = ["Space", "IntBox", "FloatBox", "Composite", "GymSpaceWrapper", "from_gym_space", "to_gym_space"]
