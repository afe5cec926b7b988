"""Shared fixtures for the env tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest


def _area_average(image: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Repeat every pixel ``h`` times down and ``w`` times across, then average blocks of ``H`` x ``W``:
    exact area averaging in float64, by a route that shares nothing with the code under test."""
    (height, width), (h, w) = image.shape, shape
    tall = np.repeat(image.astype(np.float64), h, axis=0).reshape(h, height, width).mean(axis=1)
    return np.repeat(tall, w, axis=1).reshape(h, w, width).mean(axis=2)


@pytest.fixture
def area_average() -> Callable[[np.ndarray, tuple[int, int]], np.ndarray]:
    """Exact area averaging, the reference for ``AreaResizer`` and ``AtariEnv(frame_shape=...)``."""
    return _area_average
