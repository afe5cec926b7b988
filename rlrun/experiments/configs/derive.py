"""The one helper the ready-made config modules share: a named config derived from another."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["derive"]


def derive(configs: dict[str, dict[str, Any]], base: str, **sections: Mapping[str, object]) -> dict[str, Any]:
    """A deep copy of ``configs[base]`` with the given sections updated key by key, so that changing
    the derived config (as a variant does) leaves its base alone."""
    derived = copy.deepcopy(configs[base])
    for section, values in sections.items():
        derived[section].update(values)
    return derived
