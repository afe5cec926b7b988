"""The candidate layouts a run allows, the pick among their predictions, and the table that says why.

A run fixes ``batch_B`` and ``batch_T`` (its algorithm's config); an asynchronous run keeps a core for
its optimiser; workers the user named are taken as given. Among the candidates the fastest predicted
wins, but a simpler layout (serial before cpu before the served ones, fewer workers first) is kept
when it is predicted within ``MARGIN`` of the fastest: the model's own error is about that size, and
a simpler layout starts faster and has less to go wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rlrun.samplers.auto.cost_model import KINDS, Costs, Kind, Layout, Prediction, predict
from rlrun.samplers.auto.screen import Screen

__all__ = [
    "MARGIN",
    "PROCESS_MEMORY_BYTES",
    "Constraints",
    "Choice",
    "candidates",
    "choose",
    "format_costs",
    "serial_from_screen",
]

MARGIN = 0.05  # a simpler layout within 5% of the fastest prediction is kept
PROCESS_MEMORY_BYTES = 150 * 2**20  # what one forked worker adds besides its envs (Python, torch's pages it touches)


@dataclass(frozen=True)
class Constraints:
    """What the run fixes: its batch, a core kept for an asynchronous optimiser, the user's workers,
    and whether served layouts make sense (they need a master that acts for every env)."""

    batch_B: int
    batch_T: int
    workers: int | None = None  # the user's count: parallel layouts with exactly these workers
    reserve_optimizer_core: bool = False  # async runs: the optimiser keeps a core
    kinds: tuple[Kind, ...] = KINDS

    def __post_init__(self) -> None:
        if self.batch_B < 1 or self.batch_T < 1:
            raise ValueError(f"batch_B and batch_T must be >= 1, got {self.batch_B} and {self.batch_T}.")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be >= 1 when given, got {self.workers}.")


@dataclass(frozen=True)
class Choice:
    """The picked layout, every candidate's prediction (fastest first) and the reason in words.

    ``costs`` is None when the run was too short for the full probes (``screen`` says why): the table
    then holds serial alone, predicted at the speed its SerialSampler was measured at."""

    layout: Layout
    prediction: Prediction
    table: tuple[tuple[Layout, Prediction], ...]
    reason: str
    costs: Costs | None
    constraints: Constraints
    dropped: tuple[str, ...] = field(default=())
    screen: Screen | None = None

    def format(self) -> str:
        """The short table printed at start-up and by ``rlrun tune-sampler``."""
        c = self.constraints
        said = [] if self.screen is None else [self.screen.format()]
        said += [] if self.costs is None else [f"measured {format_costs(self.costs)}"]
        lines = [f"sampler=auto: batch_B={c.batch_B}, batch_T={c.batch_T}; " + "\n  ".join(said)]
        lines.append(f"  {'layout':<32} {'envs/worker':<14} {'steps/s':>9}  limited by")
        for layout, prediction in self.table:
            mark = "*" if layout == self.layout else " "
            per_worker = ",".join(str(n) for n in sorted(set(prediction.envs_per_worker))) or "-"
            lines.append(
                f"{mark} {layout.label:<32} {per_worker:<14} {prediction.steps_per_s:9,.0f}  {prediction.bound}"
            )
        lines.extend(f"  (left out: {text})" for text in self.dropped)
        lines.append(f"  choice: {self.layout.label} ({self.reason})")
        return "\n".join(lines)


def _usable_cores(costs: Costs, constraints: Constraints) -> int:
    cores = costs.cores - (1 if constraints.reserve_optimizer_core else 0)
    return max(1, cores)


def candidates(costs: Costs, constraints: Constraints) -> tuple[list[Layout], list[str]]:
    """The layouts the run allows, and a line for each kind or size left out and why."""
    B = constraints.batch_B
    cores = _usable_cores(costs, constraints)
    dropped: list[str] = []
    counts = [constraints.workers] if constraints.workers is not None else list(range(1, cores + 1))
    layouts: list[Layout] = []
    if "serial" in constraints.kinds and constraints.workers is None:
        layouts.append(Layout("serial"))
    for kind in ("cpu", "gpu"):
        if kind not in constraints.kinds:
            continue
        # One CpuSampler worker is Serial plus a round trip; it stays only when the user asked for it.
        fitting = [w for w in counts if w <= B and (w > 1 or kind == "gpu" or constraints.workers == 1)]
        layouts.extend(Layout(kind, w) for w in fitting)
    if "alternating" in constraints.kinds:
        if B % 2:
            dropped.append(f"alternating: batch_B={B} is odd, it splits the envs into two equal groups")
        else:
            layouts.extend(Layout("alternating", w) for w in counts if w <= B // 2)
    if costs.memory_available_bytes > 0:
        kept = []
        for layout in layouts:
            need = B * costs.memory_per_env_bytes + layout.processes * PROCESS_MEMORY_BYTES
            if need > 0.8 * costs.memory_available_bytes:
                dropped.append(f"{layout.label}: needs about {need / 2**30:.1f} GiB of the {costs.memory_available_bytes / 2**30:.1f} available")  # fmt: skip
            else:
                kept.append(layout)
        layouts = kept
    return layouts, dropped


def _simplicity(layout: Layout) -> tuple[int, int]:
    return KINDS.index(layout.kind), layout.processes


def choose(costs: Costs, constraints: Constraints) -> Choice:
    """Predict every candidate and pick (see the module); raises ValueError when none is allowed."""
    layouts, dropped = candidates(costs, constraints)
    if not layouts:
        raise ValueError(
            f"No sampler layout fits: {'; '.join(dropped) or 'no kind allowed'}. Name a sampler and its workers."
        )
    predictions = [predict(layout, costs, constraints.batch_B, constraints.batch_T) for layout in layouts]
    table = sorted(zip(layouts, predictions), key=lambda pair: -pair[1].steps_per_s)
    best_layout, best = table[0]
    close = [(layout, p) for layout, p in table if p.steps_per_s >= (1.0 - MARGIN) * best.steps_per_s]
    layout, prediction = min(close, key=lambda pair: _simplicity(pair[0]))
    if layout == best_layout:
        runner_up = table[1] if len(table) > 1 else None
        reason = f"fastest predicted, limited by {prediction.bound}"
        if runner_up is not None:
            reason += f"; next {runner_up[0].label} at {runner_up[1].steps_per_s / best.steps_per_s:.2f}x"
    else:
        reason = (
            f"simplest within {MARGIN:.0%} of the fastest ({best_layout.label}, "
            f"{prediction.steps_per_s / best.steps_per_s:.2f}x of it)"
        )
    return Choice(layout, prediction, tuple(table), reason, costs, constraints, tuple(dropped))


def serial_from_screen(screen: Screen, constraints: Constraints) -> Choice:
    """Serial for a run too short for the full probes to pay (``screen.worth_probing`` is False),
    predicted at the speed its SerialSampler was measured at."""
    layout = Layout("serial")
    prediction = Prediction(1.0 / screen.step_s, "measured: this run's SerialSampler", (constraints.batch_B,))
    reason = (
        f"the run is too short for measuring every layout to pay: at most {screen.saving_s:.1f} s of sampling "
        f"to save, against {screen.probe_s:.1f} s of probes"
    )
    return Choice(layout, prediction, ((layout, prediction),), reason, None, constraints, screen=screen)


def format_costs(costs: Costs) -> str:
    """One line of what was measured."""
    us = 1e6

    def agent_line(label: str, points: Sequence[tuple[int, float]]) -> str:
        return f"{label} " + ", ".join(f"{s * 1e3:.2f} ms@{b}" for b, s in points)

    parts = [
        f"env step {costs.env_step_s * us:.1f} us (+-{costs.env_step_spread:.0%}, reset {costs.reset_s * us:.0f} us)",
        f"collector {costs.collector_step_s * us:.1f} us a step +{costs.collector_s * us:.1f} us/env",
        agent_line("agent", costs.agent_cpu.points),
    ]
    if not costs.device_is_cpu:
        parts.append(agent_line("on the device", costs.agent_device.points))
    parts.append(f"round trip {costs.round_trip_s * us:.0f} us +{costs.round_trip_per_worker_s * us:.0f} us/worker")
    served = f"served step +{costs.served_step_s * us:.0f} us +{costs.served_step_per_doubling_s * us:.0f} us/doubling"
    if costs.served_master_s is not None:
        served += (
            f" (master's own work {costs.served_master_s * us:.0f} us +{costs.served_master_per_doubling_s * us:.0f}"
            f" us/doubling, a worker's {costs.served_worker_s * us:.0f} us)"
        )
    parts.append(served)
    if costs.cpu_worker_s:
        parts.append(f"a CPU worker's step {costs.cpu_worker_s * us:+.0f} us")
    together = costs.cores if costs.capacity_all is None else costs.capacity_all
    free = f"{costs.cores} cores; free: {costs.capacity_one:.2f} for 1 process, {together:.2f} for {costs.cores}"
    if costs.load_per_process:
        free += " (the load shares per process)"
    parts.append(free)
    if costs.memory_per_env_bytes:
        parts.append(f"{costs.memory_per_env_bytes / 2**20:.1f} MiB/env")
    return "; ".join(parts)
