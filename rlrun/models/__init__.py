"""Neural network models: torch modules that take ``(observation, prev_action, prev_reward)``.

Every model here folds up to two leading dims ``[T, B]`` into one batch dim, so the same module
serves one step, a batch of envs, and a sequence for training.
"""

from rlrun.models.conv2d import Conv2dHeadModel, Conv2dModel
from rlrun.models.mlp import MlpModel

__all__ = ["MlpModel", "Conv2dModel", "Conv2dHeadModel"]
