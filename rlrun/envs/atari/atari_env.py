"""Atari 2600 games on the Arcade Learning Environment, with rlpyt's observation convention.

Observations are by default ``uint8[num_img_obs, 104, 80]`` (a few games with taller screens give taller
frames, e.g. 124x80 for a 250-row screen): each frame is the pixelwise max of the last two raw
frames of a step, in grayscale, downsampled by 2 (see :mod:`rlrun.envs.atari.screen`); frames are
ordered oldest first, newest last. A reset zero-fills the stack and puts the current frame last,
so every observation that starts an episode (or a life, with ``episodic_lives``) looks alike, and a
frame-based replay buffer that zeroes frames from before a reset rebuilds exactly these observations.
``frame_shape=(84, 84)`` gives frames of the shape that DQN's Nature paper and Baselines' and CleanRL's
wrappers use instead: the whole screen shrunk by area averaging.
"""

from __future__ import annotations

import numbers
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from rlrun.envs.atari.ale_backend import ale_backend
from rlrun.envs.atari.screen import FRAME_SHAPE, FramePooler, grayscale_palette
from rlrun.envs.base import Env, EnvStep
from rlrun.envs.traj_info import TrajInfo
from rlrun.envs.validation import check_action
from rlrun.spaces.int_box import IntBox
from rlrun.utils.collections import NamedArrayTuple, namedtuple, optional_field

if TYPE_CHECKING:
    from rlrun.utils.data_model import SpaceValue

__all__ = ["AtariEnv", "AtariTrajInfo", "AtariEnvInfo", "ACTION_MEANING", "ACTION_INDEX", "H", "W"]

H, W = FRAME_SHAPE  # the frame of a standard 210x160 screen

AtariEnvInfo = namedtuple("AtariEnvInfo", ["game_score", "traj_done", "timeout"])

# ALE's action codes (its full legal set); a game's minimal set is a subset of these.
ACTION_MEANING = {
    0: "NOOP",
    1: "FIRE",
    2: "UP",
    3: "RIGHT",
    4: "LEFT",
    5: "DOWN",
    6: "UPRIGHT",
    7: "UPLEFT",
    8: "DOWNRIGHT",
    9: "DOWNLEFT",
    10: "UPFIRE",
    11: "RIGHTFIRE",
    12: "LEFTFIRE",
    13: "DOWNFIRE",
    14: "UPRIGHTFIRE",
    15: "UPLEFTFIRE",
    16: "DOWNRIGHTFIRE",
    17: "DOWNLEFTFIRE",
}
ACTION_INDEX = {meaning: index for index, meaning in ACTION_MEANING.items()}  # "FIRE" -> 1
_NOOP, _FIRE, _UP = 0, 1, 2  # ALE's action codes
# matplotlib backends that draw to files or memory only.
_NON_INTERACTIVE_BACKENDS = frozenset({"agg", "pdf", "ps", "svg", "pgf", "cairo", "template"})
_f32 = np.float32
_ZERO, _ONE, _MINUS_ONE = _f32(0.0), _f32(1.0), _f32(-1.0)


class AtariTrajInfo(TrajInfo):
    """:class:`TrajInfo` plus ``GameScore``: the sum of the raw (unclipped) game scores."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.GameScore = 0.0

    def step(
        self,
        observation: SpaceValue,
        action: SpaceValue,
        reward: float,
        done: bool,
        agent_info: NamedArrayTuple | None,
        env_info: tuple[object, ...],
    ) -> None:
        super().step(observation, action, reward, done, agent_info, env_info)
        self.GameScore += float(optional_field(env_info, "game_score") or 0.0)


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_int(name: str, value: Any, minimum: int) -> int:
    if not _is_int(value) or value < minimum:
        raise ValueError(f"AtariEnv: {name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def _check_frame_shape(value: Any) -> tuple[int, int] | None:
    """``None`` or a (height, width) pair of positive integers (a list, as JSON gives it back, is fine)."""
    if value is None:
        return None
    if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(_is_int(v) and v >= 1 for v in value):
        raise ValueError(
            f"AtariEnv: frame_shape must be a (height, width) pair of positive integers such as (84, 84), "
            f"or None for rlpyt's frames (104x80 on most games); got {value!r}."
        )
    return int(value[0]), int(value[1])


def _check_fits(game: str, frame_shape: tuple[int, int] | None, screen_shape: tuple[int, int]) -> None:
    if frame_shape is not None and (frame_shape[0] > screen_shape[0] or frame_shape[1] > screen_shape[1]):
        raise ValueError(
            f"AtariEnv({game!r}): frame_shape {frame_shape} is larger than the game's "
            f"{screen_shape[0]}x{screen_shape[1]} screen; frames can only be shrunk. Pass a shape of at "
            f"most {tuple(screen_shape)}, or None."
        )


class AtariEnv(Env):
    """One Atari game; ``step(action)`` plays ``frame_skip`` frames with the ``action``-th action of
    the game's minimal action set.

    - ``reward`` is the step's game score, or its sign with ``clip_reward``; ``env_info`` is
      ``AtariEnvInfo(game_score, traj_done, timeout)`` with the raw score of the step.
    - ``traj_done`` is True at game over or when ``horizon`` agent steps since the game started have
      passed (then ``timeout`` is True too, unless the game also ended on that step).
    - With ``episodic_lives`` a lost life gives ``done=True, traj_done=False``; the next ``reset()``
      continues the same game (pressing FIRE with ``fire_on_reset``) instead of starting a new one.
    - A new game starts with a random number of no-op frames in ``[0, max_start_noops]``.
    - ``repeat_action_probability`` is ALE's sticky-action rate. ``seed(s)`` applies at the next
      reset: the same seed gives the same no-ops, sticky actions and observations.
    - ``frame_shape`` None keeps rlpyt's frames (every other row and column: 104x80); a (height, width)
      such as (84, 84) shrinks the whole screen to it by area averaging.
    """

    def __init__(
        self,
        game: str = "pong",
        frame_skip: int = 4,
        num_img_obs: int = 4,
        clip_reward: bool = True,
        episodic_lives: bool = True,
        fire_on_reset: bool = False,
        max_start_noops: int = 30,
        repeat_action_probability: float = 0.0,
        horizon: int | None = 27000,
        frame_shape: tuple[int, int] | None = None,
    ) -> None:
        if not isinstance(game, str):
            raise TypeError(f"AtariEnv: game must be a ROM name such as 'pong', got {game!r}.")
        self._game = game
        self._frame_skip = _check_int("frame_skip", frame_skip, 1)
        self._num_img_obs = _check_int("num_img_obs", num_img_obs, 1)
        self._max_start_noops = _check_int("max_start_noops", max_start_noops, 0)
        self._horizon = None if horizon is None else _check_int("horizon", horizon, 1)
        self._frame_shape = _check_frame_shape(frame_shape)
        if not 0.0 <= float(repeat_action_probability) <= 1.0:
            raise ValueError(
                f"AtariEnv: repeat_action_probability must lie in [0, 1], got {repeat_action_probability!r}."
            )
        self._repeat_action_probability = float(repeat_action_probability)
        self._clip_reward = bool(clip_reward)
        self._episodic_lives = bool(episodic_lives)
        self._fire_on_reset = bool(fire_on_reset)

        self._backend = ale_backend()
        self._rom_path = self._backend.rom_path(game)
        self._rng, ale_seed = self._split_seed(None)
        self.ale = self._backend.new_interface(self._rom_path, ale_seed, self._repeat_action_probability)
        self._action_codes = self._backend.action_codes(self.ale)
        if self._fire_on_reset and _FIRE not in self._action_codes:
            raise ValueError(
                f"AtariEnv({game!r}): fire_on_reset=True, but this game has no FIRE action "
                f"(its actions: {self.get_action_meanings()}). Pass fire_on_reset=False."
            )
        screen_shape = self._backend.screen_shape(self.ale)
        _check_fits(game, self._frame_shape, screen_shape)
        self._pooler = FramePooler(self.ale, screen_shape, grayscale_palette(), resize_to=self._frame_shape)
        self._pooler.verify_palette(game)  # loading ran ALE's reset frames, so the screen shows the game
        self._n_actions = len(self._action_codes)
        self._first_frames = range(self._frame_skip - 1)  # acts before the next-to-last frame is read
        self._action_space = IntBox(low=0, high=self._n_actions)
        obs_shape = (self._num_img_obs, *self._pooler.frame_shape)
        self._observation_space = IntBox(low=0, high=256, shape=obs_shape, dtype="uint8")

        # Each frame is written at p and p + N, so frames [p + 1, p + N] always form the stack, oldest
        # first, as one contiguous view: no shifting of the stack per step.
        n = self._num_img_obs
        self._ring = np.zeros((2 * n, *self._pooler.frame_shape), dtype=np.uint8)
        # Per position: (where the new frame is written, its twin, the stack it completes).
        self._slots = [
            (self._ring[p + n].reshape(-1), self._ring[p].reshape(-1), self._ring[p + 1 : p + 1 + n]) for p in range(n)
        ]
        self._pos = 0
        self._obs = self._slots[-1][2]

        self._horizon_steps = self._horizon if self._horizon is not None else sys.maxsize
        self._steps = 0  # agent steps since the game started
        self._lives = 0
        self._need_reset = True
        self._life_lost = False  # the last step lost a life and ended an episode, not the game
        self._reseed = False
        self._seed: int | None = None

    # ------------------------------------------------------------------ interface

    def reset(self) -> np.ndarray:
        """Start a new game, or with ``episodic_lives`` after a lost life, continue the current one.

        Returns the first observation: zeros except the current frame, last.
        """
        if self.ale is None:
            raise RuntimeError("AtariEnv.reset(): this env was closed; make a new one.")
        ale = self.ale
        if self._reseed:
            self._reseed = False
            self._rng, ale_seed = self._split_seed(self._seed)
            self._backend.load(ale, self._rom_path, ale_seed, self._repeat_action_probability)
            self._life_lost = False
        if self._life_lost and not ale.game_over():
            if self._fire_on_reset:
                ale.act(_FIRE)
        else:
            self._new_game()
        self._life_lost = False
        self._need_reset = False
        self._lives = ale.lives()
        self._ring.fill(0)
        newest, twin, self._obs = self._slots[0]
        self._pooler.current_into(newest)
        np.copyto(twin, newest)
        self._pos = 1 % self._num_img_obs
        obs: np.ndarray = self._obs.copy()
        return obs

    def step(self, action: Any) -> EnvStep:
        """Play ``frame_skip`` frames of ``action`` (an index into the minimal action set)."""
        if self._need_reset:
            raise RuntimeError(self._need_reset_message())
        try:  # negative indices would pick an action from the end of the list: refuse them
            code = self._action_codes[action] if 0 <= action < self._n_actions else None
        except (TypeError, ValueError, IndexError):
            code = None
        if code is None:
            self._refuse_action(action)

        act = self.ale.act
        game_score = 0
        for _ in self._first_frames:
            game_score += act(code)
        self._pooler.grab_first()
        game_score += act(code)
        p = self._pos
        newest, twin, self._obs = self._slots[p]
        self._pooler.pool_into(newest)
        np.copyto(twin, newest)
        self._pos = p + 1 if p + 1 < self._num_img_obs else 0

        self._steps += 1
        game_over = self.ale.game_over()
        lives = self.ale.lives()
        lost_life = lives < self._lives
        self._lives = lives
        timeout = not game_over and self._steps >= self._horizon_steps
        traj_done = game_over or timeout
        done = traj_done or (lost_life and self._episodic_lives)
        self._need_reset = traj_done
        self._life_lost = done and not traj_done
        if game_score:
            score = _f32(game_score)
            reward = (_ONE if game_score > 0 else _MINUS_ONE) if self._clip_reward else score
        else:
            score = reward = _ZERO  # most steps score nothing: no scalars to make
        return EnvStep(self._obs.copy(), reward, done, AtariEnvInfo(score, traj_done, timeout))

    def seed(self, seed: int | None) -> None:
        """Seed no-ops and sticky actions from the next reset on (which then starts a new game).

        ``None`` draws fresh entropy. ALE reads its seed only when it loads a ROM, so that reset
        reloads the ROM (about 0.1 s).
        """
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
            raise ValueError(f"AtariEnv.seed(): the seed must be a non-negative integer or None, got {seed!r}.")
        self._seed = None if seed is None else int(seed)
        self._reseed = True

    def get_obs(self) -> np.ndarray:
        """A copy of the current observation (the one the last step or reset returned)."""
        obs: np.ndarray = self._obs.copy()
        return obs

    def fire_and_up(self) -> None:
        """Press FIRE, then UP, one frame each, where the game has them: what some games need to start
        play (Breakout launches its ball with FIRE). The emulator advances; the observation is updated by
        the next ``step`` or ``reset``."""
        if self.ale is None:
            raise RuntimeError("AtariEnv.fire_and_up(): this env was closed; make a new one.")
        if _FIRE in self._action_codes:
            self.ale.act(_FIRE)
        if _UP in self._action_codes:
            self.ale.act(_UP)

    def render(self, wait: int = 10, show_full_obs: bool = False) -> np.ndarray:
        """Show the current observation for ``wait`` milliseconds, and return it as one 2-D uint8 image:
        the newest frame, or with ``show_full_obs`` all ``num_img_obs`` frames top to bottom, oldest first.

        It draws with matplotlib (``pip install rlrun[plotting]``) in a window named after the game; where
        matplotlib's backend cannot open windows (no display: Agg), it only returns the image.
        """
        obs = self.get_obs()
        image = obs.reshape(-1, obs.shape[-1]) if show_full_obs else obs[-1]
        try:
            import matplotlib
            import matplotlib.pyplot as plt
        except ImportError as e:
            raise ImportError(
                "AtariEnv.render() draws with matplotlib, which is not installed: pip install 'rlrun[plotting]'."
            ) from e
        if matplotlib.get_backend().lower() in _NON_INTERACTIVE_BACKENDS:
            return image
        figure = plt.figure(self._game)
        figure.clf()
        figure.gca().imshow(image, cmap="gray", vmin=0, vmax=255)
        figure.gca().set_axis_off()
        plt.pause(max(wait, 1) / 1000)
        return image

    def rgb_frame(self) -> np.ndarray:
        """The emulator's current colour screen, ``[210, 160, 3]`` uint8 (for videos: ``RecordVideo``)."""
        if self.ale is None:
            raise RuntimeError("AtariEnv.rgb_frame(): this env was closed; make a new one.")
        frame: np.ndarray = self.ale.getScreenRGB()
        return frame

    @property
    def render_fps(self) -> float:
        """Frames a second of a video at the game's speed: 60 Hz over the frame skip."""
        return 60.0 / self._frame_skip

    def get_action_meanings(self) -> list[str]:
        """Names of the actions, in action-index order (e.g. ``['NOOP', 'FIRE', 'RIGHT', ...]``)."""
        return [ACTION_MEANING[code] for code in self._action_codes]

    def close(self) -> None:
        """Drop the emulator; the env cannot be used afterwards."""
        self.ale = None
        self._need_reset = True

    # ------------------------------------------------------------------ helpers

    def _split_seed(self, seed: int | None) -> tuple[np.random.Generator, int]:
        """A generator for no-ops and a 31-bit seed for ALE, independent streams from one seed."""
        noop_seq, ale_seq = np.random.SeedSequence(seed).spawn(2)
        return np.random.default_rng(noop_seq), int(ale_seq.generate_state(1)[0] >> 1)

    def _new_game(self) -> None:
        ale = self.ale
        ale.reset_game()
        self._pooler.verify_palette(self._game)
        for _ in range(int(self._rng.integers(0, self._max_start_noops + 1))):
            ale.act(_NOOP)
        if self._fire_on_reset:
            ale.act(_FIRE)
        if ale.game_over():  # no game ends within its first few frames; guards odd ROMs anyway
            ale.reset_game()
        self._steps = 0

    def _need_reset_message(self) -> str:
        if self.ale is None:
            return "AtariEnv.step(): this env was closed; make a new one."
        if self._steps == 0 and not self._life_lost:
            return "AtariEnv.step() before reset(): call reset() first to start a game."
        return "AtariEnv.step() after the game ended (traj_done=True): call reset() to start a new game."

    def _refuse_action(self, action: Any) -> None:
        check_action(self, action, self._action_space)
        raise ValueError(
            f"AtariEnv({self._game!r}): action {action!r} is not an integer in [0, {len(self._action_codes)}). "
            f"Actions index the minimal action set {self.get_action_meanings()}."
        )

    # ------------------------------------------------------------------ properties (rlpyt's names)

    @property
    def game(self) -> str:
        return self._game

    @property
    def frame_skip(self) -> int:
        return self._frame_skip

    @property
    def num_img_obs(self) -> int:
        return self._num_img_obs

    @property
    def clip_reward(self) -> bool:
        return self._clip_reward

    @property
    def episodic_lives(self) -> bool:
        return self._episodic_lives

    @property
    def fire_on_reset(self) -> bool:
        return self._fire_on_reset

    @property
    def max_start_noops(self) -> int:
        return self._max_start_noops

    @property
    def repeat_action_probability(self) -> float:
        return self._repeat_action_probability

    @property
    def horizon(self) -> int | None:
        """Agent steps after which a game is cut (``traj_done`` and ``timeout``); None: no limit."""
        return self._horizon

    @property
    def frame_shape(self) -> tuple[int, int]:
        """(height, width) of each frame in the observation: 104x80 on most games unless set."""
        return self._pooler.frame_shape

    @property
    def uses_fast_screen(self) -> bool:
        """True when frames come from palette indices and the measured gray table (the fast path);
        always False with a ``frame_shape`` of its own, which reads whole gray screens."""
        return self._pooler.uses_palette
