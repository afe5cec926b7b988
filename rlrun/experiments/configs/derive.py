"""The one helper the ready-made config modules share: a named config derived from another."""

from __future__ import annotations

import copy
from collections.abc import Mapping

__all__ = ["derive"]


def derive(
    configs: Mapping[str, Mapping[str, Mapping[str, object]]], base: str, **sections: Mapping[str, object]
) -> dict[str, dict[str, object]]:
    """A deep copy of ``configs[base]`` with the given sections updated key by key, so that changing
    the derived config (as a variant does) leaves its base alone."""
    derived = {section: dict(values) for section, values in copy.deepcopy(configs[base]).items()}
    for section, values in sections.items():
        derived[section].update(values)
    return derived
