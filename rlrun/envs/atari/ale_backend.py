"""Finds the Arcade Learning Environment and its ROMs: ale-py, or atari-py where ale-py is missing.

ale-py bundles its ROMs and takes ``str`` configuration keys. atari-py (unmaintained, only used when
ale-py cannot be imported) takes ``bytes`` keys and ships few ROMs. Everything that differs between
the two lives here, so :class:`~rlrun.envs.atari.atari_env.AtariEnv` talks to one small interface.
"""

from __future__ import annotations

import difflib
import enum
import functools
import os
import re
from dataclasses import dataclass
from types import ModuleType
from typing import Any

__all__ = ["AleBackend", "ale_backend", "UnknownGameError"]


class UnknownGameError(ValueError):
    """The requested game has no ROM that the installed ALE can run."""


@dataclass(frozen=True)
class AleBackend:
    """One installed ALE package: ``name`` is ``"ale-py"`` or ``"atari-py"``."""

    name: str
    module: ModuleType

    @property
    def is_ale_py(self) -> bool:
        return self.name == "ale-py"

    def _key(self, key: str) -> str | bytes:
        return key if self.is_ale_py else key.encode()

    def rom_ids(self) -> list[str]:
        """The snake_case names of the games whose ROMs are installed."""
        if self.is_ale_py:
            return list(self.module.roms.get_all_rom_ids())
        return list(self.module.list_games())

    def rom_path(self, game: str) -> str:
        """The ROM file of ``game``; raises :class:`UnknownGameError` naming close matches."""
        ids = self.rom_ids()
        if game not in ids:
            raise UnknownGameError(_unknown_game_message(game, ids, self.name))
        path: str | None  # the ALE module is untyped
        if self.is_ale_py:
            path = self.module.roms.get_rom_path(game)
        else:
            path = self.module.get_game_path(game)
        if path is None or not os.path.exists(path):
            raise UnknownGameError(
                f"The ROM of {game!r} is listed by {self.name} but its file is missing ({path}). "
                "Reinstall ale-py (pip install --force-reinstall ale-py), which bundles the ROMs."
            )
        if self.is_ale_py and not self.module.ALEInterface.isSupportedROM(path):
            # Loading such a ROM makes ALE exit the whole process, so refuse it here.
            raise UnknownGameError(
                f"ale-py bundles {game!r} but its ALE cannot run it as a single-player game. Pick another game."
            )
        return path

    def new_interface(self, rom_path: str, seed: int, repeat_action_probability: float) -> Any:
        """A fresh ALEInterface with ``rom_path`` loaded under the given seed and sticky-action rate."""
        ale = self.module.ALEInterface()
        self.load(ale, rom_path, seed, repeat_action_probability)
        return ale

    def load(self, ale: Any, rom_path: str, seed: int, repeat_action_probability: float) -> None:
        """(Re)load ``rom_path`` into ``ale``; ALE reads its seed only while loading a ROM."""
        ale.setInt(self._key("random_seed"), int(seed))
        ale.setFloat(self._key("repeat_action_probability"), float(repeat_action_probability))
        ale.loadROM(rom_path if self.is_ale_py else os.fsencode(rom_path))

    def screen_shape(self, ale: Any) -> tuple[int, int]:
        """The (height, width) of the game's screen; atari-py reports (width, height)."""
        first, second = (int(d) for d in ale.getScreenDims())
        return (first, second) if self.is_ale_py else (second, first)

    @staticmethod
    def action_codes(ale: Any) -> list[int]:
        """The game's minimal action set as plain ints (ale-py gives ``Action`` enum members)."""
        # ale-py gives enum members (not ints: int() refuses them), atari-py ints.
        return [int(a.value) if isinstance(a, enum.Enum) else int(a) for a in ale.getMinimalActionSet()]


def _snake_case(name: str) -> str:
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name.strip())
    return re.sub(r"[\s\-]+", "_", name).lower()


def _unknown_game_message(game: str, ids: list[str], backend: str) -> str:
    normalized = _snake_case(str(game))
    matches = difflib.get_close_matches(normalized, ids, n=5, cutoff=0.6)
    if normalized in ids:
        matches = [normalized]
    hint = f" Did you mean {', '.join(repr(m) for m in matches)}?" if matches else ""
    return (
        f"Unknown Atari game {game!r}.{hint} Games are named by their snake_case ROM ids "
        f"({len(ids)} installed with {backend}, e.g. 'pong', 'breakout', 'space_invaders')."
    )


@functools.cache
def ale_backend() -> AleBackend:
    """The installed ALE package (ale-py preferred); raises ImportError with the fix if neither is."""
    try:
        import ale_py
        import ale_py.roms
    except ImportError:
        pass
    else:
        # ALE prints a banner on every ROM load unless told otherwise.
        ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
        return AleBackend("ale-py", ale_py)
    try:
        import atari_py
    except ImportError:
        raise ImportError(
            "AtariEnv needs the Arcade Learning Environment: pip install ale-py (it bundles the ROMs)."
        ) from None
    return AleBackend("atari-py", atari_py)
