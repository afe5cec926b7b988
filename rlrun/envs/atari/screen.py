"""Turns ALE screens into observation frames: gray, max over two frames, 104x80 (rlpyt's) or resized.

The pixelwise max of the last two raw frames of a step (Atari games flicker sprites on alternate
frames) is converted to grayscale and downsampled by 2 with strided slicing: rows 1, 3, ..., 207 and
columns 0, 2, ..., 158 of the 210x160 screen. The few games with taller screens (up to 250 rows in
ale-py) keep the same rule and so give taller frames (up to 124x80).

Speed: ALE's ``getScreenGrayscale`` converts all 33,600 pixels (about 14 us a call) while
``getScreen`` copies palette indices (about 1 us). So the fast path reads palette indices, keeps the
8,320 pixels of each frame that the observation uses, converts them to gray with one
``bytes.translate`` over both frames (a C byte-table loop, faster than numpy's ``take``), and takes
the max. The gray value of each palette index is ALE's own (:func:`grayscale_palette`), so the result
equals what ``getScreenGrayscale`` gives; each env checks this against ALE at every new game and
reads ``getScreenGrayscale`` instead where it differs (PAL ROMs).

With a ``frame_shape`` of its own (such as the 84x84 of DQN's Nature paper and of CleanRL's and
Baselines' Atari wrappers), the pooler maxes the two full gray screens and shrinks the result by area
averaging (:class:`AreaResizer`: each output pixel is the mean of the screen area it covers, partly
covered pixels weighted by their covered share, as OpenCV's ``INTER_AREA`` does).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from math import gcd
from typing import Any

import numpy as np

__all__ = [
    "AreaResizer",
    "FramePooler",
    "grayscale_palette",
    "downsample",
    "frame_shape",
    "SCREEN_SHAPE",
    "FRAME_SHAPE",
]

_log = logging.getLogger(__name__)

SCREEN_SHAPE = (210, 160)  # most games; a few are taller (see FramePooler)
FRAME_SHAPE = (104, 80)

# ALE's gray value of each NTSC colour (palette index 2k for k = 0..127; the TIA ignores the lowest bit),
# read off ale-py 0.12.1 by showing every colour on screen and comparing getScreen with
# getScreenGrayscale. Each env re-checks it against ALE at every new game (FramePooler.verify_palette).
_NTSC_GRAY = (
    0, 74, 111, 142, 170, 192, 214, 236, 64, 95, 122, 148, 172, 193, 214, 233,
    63, 87, 110, 131, 150, 167, 184, 199, 59, 85, 107, 129, 148, 167, 183, 199,
    44, 68, 90, 110, 128, 146, 161, 176, 51, 74, 95, 115, 132, 149, 164, 178,
    39, 63, 85, 107, 125, 143, 159, 174, 22, 49, 73, 96, 116, 136, 153, 169,
    17, 41, 64, 85, 104, 121, 137, 153, 32, 60, 85, 109, 130, 150, 168, 186,
    40, 69, 95, 120, 141, 162, 182, 200, 43, 74, 101, 127, 151, 173, 193, 212,
    40, 71, 98, 124, 147, 169, 189, 207, 41, 74, 104, 132, 157, 181, 203, 223,
    47, 79, 107, 133, 157, 179, 200, 220, 47, 79, 107, 133, 157, 179, 200, 220,
)  # fmt: skip


@functools.cache
def grayscale_palette() -> np.ndarray:
    """ALE's gray value of each of the 256 palette indices (uint8) for NTSC games."""
    palette = np.zeros(256, dtype=np.uint8)
    palette[0::2] = _NTSC_GRAY
    palette[1::2] = _NTSC_GRAY
    return palette


def frame_shape(screen_shape: tuple[int, int]) -> tuple[int, int]:
    """The pooled frame's (height, width) for a screen of ``screen_shape``: (104, 80) for 210x160."""
    height, width = screen_shape
    return len(range(1, height - 1, 2)), len(range(0, width, 2))


def downsample(screen: np.ndarray) -> np.ndarray:
    """The view of a screen that observations keep: rows 1, 3, ... (first and last dropped), even columns."""
    return screen[1 : screen.shape[0] - 1 : 2, ::2]


def area_weights(size_in: int, size_out: int) -> np.ndarray:
    """The ``[size_out, size_in]`` matrix of area averaging along one axis (rows sum to 1).

    Output pixel ``i`` covers the input interval ``[i * s, (i + 1) * s)`` with ``s = size_in / size_out``;
    input pixel ``j`` weighs the length of its overlap with that interval, divided by ``s``.
    """
    scale = size_in / size_out
    starts = np.arange(size_out)[:, None] * scale
    pixels = np.arange(size_in)[None, :]
    overlap = np.minimum(starts + scale, pixels + 1) - np.maximum(starts, pixels)
    weights: np.ndarray = (np.clip(overlap, 0.0, None) / scale).astype(np.float32)
    return weights


class AreaResizer:
    """Shrinks a uint8 ``[H, W]`` image to ``[h, w]`` by area averaging, rounding to the nearest integer.

    Area weights repeat with a period of ``H / gcd(H, h)`` input rows (5 rows give 2 for 210 -> 84), and
    an output pixel never straddles two periods, so each axis is a small matrix product over blocks
    (``[2, 5]`` for the rows of 210 -> 84 and ``[21, 40]`` for the columns of 160 -> 84) rather than a dense
    ``[84, 210]`` one: about 350k multiply-adds a frame instead of 3.9M. Buffers are allocated once.
    """

    def __init__(self, in_shape: tuple[int, int], out_shape: tuple[int, int]) -> None:
        (height, width), (h, w) = in_shape, out_shape
        if not (0 < h <= height and 0 < w <= width):
            raise ValueError(f"AreaResizer: can only shrink, from {height}x{width} to {h}x{w}.")
        self.in_shape, self.out_shape = (height, width), (h, w)
        row_groups, col_groups = gcd(height, h), gcd(width, w)
        self._rows = area_weights(height // row_groups, h // row_groups)  # [h/g, H/g]
        cols_t = np.ascontiguousarray(area_weights(width // col_groups, w // col_groups).T)  # [W/g, w/g]
        self._image = np.empty((height, width), np.float32)
        self._image_blocks = self._image.reshape(row_groups, height // row_groups, width)
        self._tall = np.empty((row_groups, h // row_groups, width), np.float32)  # rows done: [h, W]
        self._small = np.empty((h, w), np.float32)  # both done
        # The column pass as one 2-D product, [h * g, W/g] @ [W/g, w/g]: half the time of a batch of h
        # small ones. numpy's OpenBLAS keeps a product this narrow on one thread (CPU time = wall time
        # up to 840k multiply-adds, measured; a 500x500x500 product used both cores), so sampler
        # workers do not fight over BLAS threads.
        self._tall_2d = self._tall.reshape(h * col_groups, width // col_groups)
        self._small_2d = self._small.reshape(h * col_groups, w // col_groups)
        self._cols_t = cols_t

    def __call__(self, image: np.ndarray, out: np.ndarray) -> None:
        """Write the resized ``image`` into ``out``: uint8, ``h * w`` elements in any shape (flat or ``[h, w]``)."""
        if out.dtype != np.uint8:
            raise TypeError(f"AreaResizer: out must be a uint8 array, got {out.dtype}.")
        np.copyto(self._image, image)
        np.matmul(self._rows, self._image_blocks, out=self._tall)
        np.matmul(self._tall_2d, self._cols_t, out=self._small_2d)
        np.add(self._small, 0.5, out=self._small)  # the cast below truncates: this rounds
        np.copyto(out, self._small.reshape(out.shape), casting="unsafe")

    def __reduce__(self) -> tuple[type, tuple[tuple[int, int], tuple[int, int]]]:
        # The attributes are views of one another's buffers, which pickling and deepcopy would sever.
        return type(self), (self.in_shape, self.out_shape)


class FramePooler:
    """Reads the last two frames of a step from ``ale`` and writes their pooled frame into ``out``.

    Per step the env calls :attr:`grab_first` after the next-to-last frame and :attr:`pool_into`
    (``out``: a flat, C-contiguous uint8 array with the frame's ``h * w`` pixels) after the last;
    :meth:`current_into` gives the frame of the current screen alone (at resets). ``screen_shape``
    is ALE's (height, width): 210x160 for most games, up to 250 rows for some. ``resize_to`` (height,
    width) replaces the strided downsampling by area averaging of the whole screen to that shape. Every
    buffer is allocated here, once; a step allocates only the translated bytes.
    """

    def __init__(
        self,
        ale: Any,
        screen_shape: tuple[int, int],
        palette: np.ndarray | None = None,
        resize_to: tuple[int, int] | None = None,
    ) -> None:
        self._ale = ale
        self.screen_shape = (int(screen_shape[0]), int(screen_shape[1]))
        self._resizer = None if resize_to is None else AreaResizer(self.screen_shape, resize_to)
        self.frame_shape = frame_shape(self.screen_shape) if self._resizer is None else self._resizer.out_shape
        self._screens = np.zeros((2, *self.screen_shape), dtype=np.uint8)  # next-to-last, last
        self._palette: np.ndarray | None = None
        # Both are closures over their buffers: the per-step path does no attribute lookups.
        self.grab_first: Callable[[], None]
        self.pool_into: Callable[[np.ndarray], None]
        if self._resizer is not None:
            # The whole screens are needed, and reading palette indices and translating them is no
            # cheaper than reading them gray (about 30 us for both screens), so there is no fast path.
            self._pool_gray(functools.partial(self._resizer, self._screens[0]))
        elif palette is not None and self.screen_shape[1] % 2 == 0:
            self._use_palette(palette)
        else:
            self._use_gray()

    @property
    def uses_palette(self) -> bool:
        """True on the fast path (palette indices and the measured gray table)."""
        return self._palette is not None

    def _use_palette(self, palette: np.ndarray) -> None:
        self._palette = palette
        read_indices = self._ale.getScreen
        first, last = self._screens
        size = self.frame_shape[0] * self.frame_shape[1]
        table = palette.tobytes()
        # The kept pixels of both frames, side by side in one buffer that bytes.translate can read.
        kept = bytearray(2 * size)
        kept_array = np.frombuffer(kept, dtype=np.uint8).reshape(2, *self.frame_shape)
        # Viewed as little-endian 16-bit words, a kept row pairs each even-column pixel (the low byte)
        # with its odd neighbour, and a cast to uint8 keeps the low byte: one fast cast instead of
        # a slow byte-strided copy.
        words = downsample_rows(self._screens).view("<u2")
        copyto, frombuffer, maximum, uint8, translate = np.copyto, np.frombuffer, np.maximum, np.uint8, kept.translate

        def pool_into(out: np.ndarray) -> None:
            read_indices(last)
            copyto(kept_array, words, casting="unsafe")
            # bytes.translate is a byte-table lookup in C, faster than numpy's take here.
            gray = frombuffer(translate(table), uint8)
            maximum(gray[:size], gray[size:], out=out)

        self.grab_first = functools.partial(read_indices, first)  # a C-level call
        self.pool_into = pool_into

    def _use_gray(self) -> None:
        kept = downsample(self._screens[0])
        self._pool_gray(lambda out: np.copyto(out.reshape(kept.shape), kept))  # out may be flat

    def _pool_gray(self, shrink_into: Callable[[np.ndarray], None]) -> None:
        """Read gray screens; pool the two into the first, which ``shrink_into(out)`` turns into the frame."""
        self._palette = None
        read_gray = self._ale.getScreenGrayscale
        first, last = self._screens

        def pool_into(out: np.ndarray) -> None:
            read_gray(last)
            np.maximum(first, last, out=first)
            shrink_into(out)

        self.grab_first = functools.partial(read_gray, first)
        self.pool_into = pool_into

    def current_into(self, out: np.ndarray) -> None:
        """Write the current screen alone (no second frame to pool with) into ``out``."""
        self.grab_first()
        self.pool_into(out)

    def verify_palette(self, game: str) -> None:
        """Compare the gray table with ALE's own conversion of the current screen; on a mismatch
        (a game with another palette, such as the PAL ROMs among ale-py's) switch to
        ``getScreenGrayscale`` for good."""
        if self._palette is None:
            return
        indices, gray = self._screens
        self._ale.getScreen(indices)
        self._ale.getScreenGrayscale(gray)
        if not np.array_equal(self._palette[indices], gray):
            _log.info(
                "AtariEnv(%r): ALE's grayscale for this game differs from the measured NTSC palette (a PAL ROM?); "
                "reading grayscale screens instead (slower, same observations).",
                game,
            )
            self._use_gray()


def downsample_rows(screens: np.ndarray) -> np.ndarray:
    """The rows that observations keep, with all their columns, of screens stacked on the first axis."""
    return screens[:, 1 : screens.shape[1] - 1 : 2]
