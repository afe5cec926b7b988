"""The interface every runner offers a launch script."""

from __future__ import annotations

from typing import Any

__all__ = ["BaseRunner"]


class BaseRunner:
    """Wires a sampler, an agent and an algorithm together and runs the whole training loop.

    A launch script builds the three parts, builds a runner from them and calls :meth:`train`,
    usually inside :func:`rlrun.utils.logging.context.logger_context`.
    """

    def train(self) -> Any:
        """Run training from start to end, shutting the sampler down also when training raises."""
        raise NotImplementedError
