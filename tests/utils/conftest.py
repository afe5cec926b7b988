"""Every test here runs in its own logger state, so settings made outside a run never leak between tests."""

import pytest

from rlrun.utils.logging import logger


@pytest.fixture(autouse=True)
def fresh_logger():
    logger.push_state()
    yield
    logger.pop_state()
