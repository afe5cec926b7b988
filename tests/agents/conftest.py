import pytest

from rlrun.envs.base import EnvSpaces
from rlrun.envs.gym import make
from rlrun.spaces.int_box import IntBox

ATARI_IMAGE_SHAPE = (4, 104, 80)


@pytest.fixture(scope="session")
def cartpole():
    env = make("CartPole-v1")
    yield env
    env.close()


@pytest.fixture(scope="session")
def pendulum():
    env = make("Pendulum-v1")
    yield env
    env.close()


@pytest.fixture(scope="session")
def atari_spaces():
    """The spaces of rlpyt-style Atari envs: 4 stacked 104x80 uint8 frames, 6 actions."""
    return EnvSpaces(
        observation=IntBox(0, 256, shape=ATARI_IMAGE_SHAPE, dtype="uint8"),
        action=IntBox(0, 6),
    )
