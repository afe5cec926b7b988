"""Writing videos of an env: imageio with the ffmpeg binary that imageio-ffmpeg ships (the ``video`` extra)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

__all__ = ["VideoWriter", "VIDEO_EXTRA"]

VIDEO_EXTRA = "pip install 'rlrun[video]'  (imageio, imageio-ffmpeg, and pygame for Gymnasium's drawings)"


class VideoWriter:
    """Appends RGB frames (``[H, W, 3]`` uint8) to an mp4 file; ``close`` finishes the file.

    The size is fixed by the first frame. ``macro_block_size=1`` keeps odd sizes (Atari's 210x160 and
    CartPole's 400x600 are even, a custom env's may not be) instead of resizing them.
    """

    def __init__(self, path: str | os.PathLike[str], fps: float) -> None:
        try:
            import imageio.v2 as imageio
            import imageio_ffmpeg  # noqa: F401  (the encoder imageio needs for mp4)
        except ImportError as error:
            raise ImportError(f"Writing a video needs imageio and imageio-ffmpeg: {VIDEO_EXTRA}.") from error
        if fps <= 0:
            raise ValueError(f"fps must be positive, got {fps!r}.")
        self.path = os.fspath(path)
        self.fps = float(fps)
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        self._writer: Any = imageio.get_writer(self.path, fps=fps, macro_block_size=1, ffmpeg_log_level="error")
        self.frames = 0
        self._shape: tuple[int, ...] | None = None

    def append(self, frame: np.ndarray) -> None:
        frame = np.asarray(frame)
        if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[-1] != 3:
            raise ValueError(f"A video frame is an [H, W, 3] uint8 RGB image, got shape {frame.shape}, dtype {frame.dtype}.")  # fmt: skip
        if self._shape is None:
            self._shape = frame.shape
        elif frame.shape != self._shape:
            raise ValueError(f"Video frames must keep one size: the first was {self._shape}, this one {frame.shape}.")  # fmt: skip
        self._writer.append_data(frame)
        self.frames += 1

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
