"""After the first batches, compare the sampler's measured speed with the prediction it was chosen on.

The check wraps the sampler's ``obtain_samples`` on the instance (the runner calls it by attribute), so
neither the runner nor the sampler classes change. It skips ``skip`` batches (start-up, first-call
allocations), times the next ``batches`` in wall-clock seconds inside ``obtain_samples`` (what the
model predicts: sampling, not optimising), logs one line, and a warning when the two differ by more
than ``tolerance``; then it unwraps itself.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SpeedCheck", "attach_speed_check"]

_log = logging.getLogger(__name__)


@dataclass
class SpeedCheck:
    """Measured against predicted steps/s of one layout; ``result`` holds ``(measured, predicted)`` once done."""

    predicted_steps_per_s: float
    steps_per_batch: int
    label: str
    skip: int = 2
    batches: int = 5
    tolerance: float = 0.2
    seen: int = 0
    seconds: float = 0.0
    result: tuple[float, float] | None = None
    report: Callable[[str], None] = field(default=_log.info)
    warn: Callable[[str], None] = field(default=_log.warning)

    def record(self, seconds: float) -> bool:
        """Note one batch's time; True once the check is complete."""
        self.seen += 1
        if self.seen <= self.skip:
            return False
        self.seconds += seconds
        if self.seen < self.skip + self.batches:
            return False
        measured = self.batches * self.steps_per_batch / self.seconds
        self.result = (measured, self.predicted_steps_per_s)
        ratio = measured / self.predicted_steps_per_s
        text = (
            f"sampler=auto check: {self.label} sampled {measured:,.0f} steps/s over batches "
            f"{self.skip + 1}-{self.seen}, predicted {self.predicted_steps_per_s:,.0f} ({ratio:.2f}x)"
        )
        if abs(ratio - 1.0) > self.tolerance:
            self.warn(
                f"{text}: off by more than {self.tolerance:.0%}. The machine's load may have changed since the "
                "measurement, or the model misses a cost of this env or agent; `rlrun tune-sampler` prints the "
                "table again, and naming a sampler (and its workers) overrides the choice."
            )
        else:
            self.report(text)
        return True


def attach_speed_check(sampler: Any, check: SpeedCheck) -> SpeedCheck:
    """Wrap ``sampler.obtain_samples`` so that ``check`` sees the first batches' times."""
    original = sampler.obtain_samples

    def obtain_samples(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        result = original(*args, **kwargs)
        if check.record(time.perf_counter() - start):
            del sampler.obtain_samples  # back to the class's method
        return result

    sampler.obtain_samples = obtain_samples
    return check
