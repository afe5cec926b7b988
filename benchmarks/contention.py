"""Wall time of a short PPO CartPole training with SerialSampler and CpuSampler, quiet and beside busy neighbours.

The training is the one of the CartPole examples: PPO with the tuned config of
``rlrun/experiments/configs/cartpole.py`` (``batch_T=32``, ``batch_B=8``), MinibatchRlEval evaluating
10 episodes on 4 eval envs before training and every ``--log-interval`` steps. CpuSampler runs as
examples/cartpole_cpu_sampler.py runs it, with ``affinity=None``: the library's defaults, one
unpinned worker per usable CPU. SerialSampler runs as examples/quick_start.py runs it, with one
torch thread (``master_torch_threads=1``, what ``build_runner`` sets). ``--cpu-master-threads`` and
``--serial-master-threads`` name other counts (0: ``affinity=None``).

Each training runs in a process of its own, forked from this one before torch has run anything in
parallel: its thread pools and torch's state start clean, and environment variables such as
``OMP_WAIT_POLICY`` (set them before this command) reach it as they reach a user's run. Its time is
that of ``runner.train()``: the workers' start and the evaluations are in it, the interpreter's start
and the imports are not (``torch._dynamo`` too, which the first optimizer would import). The table
splits it into sampling (``obtain_samples``), optimising and evaluating, and gives the CPU seconds of
the training process (all its threads) and of its workers.

"Loaded" runs have ``--neighbours`` busy-loop processes (``while True: pass``) beside them, started
before and killed after each run, also on Ctrl-C, SIGTERM or an error. ``--neighbour-session same``
(the default) starts them in this command's session, like ``python -c "while True: pass" &`` in the
same shell; ``own`` gives each its own session, like programs started from other terminals. Linux's
autogroup scheduler shares the CPUs fairly between sessions, so there a run's share of the CPUs does
not grow with its number of processes.

``--auto`` adds ``sampler="auto"``, quiet and loaded, as ``rlrun train`` runs it, told the run's
``n_steps``: it times the run's SerialSampler, and measures every layout only when the run is long
enough for that to pay (``rlrun.samplers.auto.screen``); it chooses in the training process, and its
probes' time counts in the run's wall time, since a user's run pays it too.
The report then also gives auto loaded / Serial loaded (target <= 1.0) and auto's choices.

The four (six) configurations run in turn in each of ``--repeats`` rounds, in an order that rotates from
round to round, so a drift of the machine's speed (other users, the VM) hits them alike. The table
shows medians over rounds, and the cores that processes outside this benchmark kept busy during
each run (``others``; 0 on a machine nobody else uses). A ratio is the median over rounds of the
ratio within a round. The targets:

- CpuSampler loaded / SerialSampler loaded <= 1.0: the parallel sampler is no slower than the serial
  one under the same load;
- CpuSampler loaded / CpuSampler quiet <= 2.0: it loses at most 2x against its quiet speed;
- with ``--auto``, auto loaded / Serial loaded <= 1.0.

``--check`` exits 1 when a target is missed. ``--out FILE`` also writes the report, with every run's
numbers, to FILE.

    python benchmarks/contention.py
    python benchmarks/contention.py --repeats 5 --out contention.txt
    python benchmarks/contention.py --cpu-master-threads 2    # the master's torch threads before the fix
    python benchmarks/contention.py --quick                   # a smoke run: tiny trainings, one round
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from typing import Any

import psutil
import torch
import torch._dynamo  # noqa: F401  the first optimizer would import it (1-2 s); here, before any clock starts

from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.algos.pg.ppo import PPO
from rlrun.envs.gym import make
from rlrun.experiments.configs.cartpole import CONFIGS as CARTPOLE
from rlrun.runners.minibatch_rl import MinibatchRlEval
from rlrun.samplers.auto import auto_layout
from rlrun.samplers.auto.apply import layout_affinity, sampler_class
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.serial.sampler import SerialSampler
from rlrun.utils.logging import logger

CONFIGS = [("serial", False), ("cpu", False), ("serial", True), ("cpu", True)]
AUTO_CONFIGS = [("auto", False), ("auto", True)]  # with --auto
LABELS = {"serial": "SerialSampler", "cpu": "CpuSampler", "auto": 'sampler="auto"'}
TARGETS = {"loaded_cpu_to_serial": 1.0, "loaded_cpu_to_quiet": 2.0, "loaded_auto_to_serial": 1.0}
# A busy loop that leaves once this script is gone (its parent pid changes), should it be killed
# without running its cleanup; the check every 10^6 iterations costs nothing measurable.
NEIGHBOUR_CODE = (
    "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    for _ in range(1_000_000):\n        pass\n"
)
STOP_SIGNALS: list[int] = []  # SIGTERM or SIGINT received, raised at the next check_stop()


def note_stop_signal(signum: int, frame: object) -> None:
    # Raising here could happen inside fork's at-fork hooks (starting a neighbour or a training),
    # where Python prints the exception and drops it; check_stop() raises it at a safe point instead.
    STOP_SIGNALS.append(signum)


def check_stop() -> None:
    """Raise KeyboardInterrupt (SIGINT) or SystemExit (SIGTERM) if one of them arrived."""
    if STOP_SIGNALS:
        if STOP_SIGNALS[0] == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + STOP_SIGNALS[0])


@dataclass
class RunResult:
    """One training: wall seconds of ``runner.train()``, of its parts, and CPU seconds of its processes."""

    sampler: str
    loaded: bool
    seconds: float  # the whole of train(): startup, sampling, optimising, evaluating, shutdown
    sample_seconds: float  # in sampler.obtain_samples
    optimize_seconds: float  # in algo.optimize_agent
    eval_seconds: float  # in sampler.evaluate_agent
    master_cpu_seconds: float  # the training process, all its threads
    workers_cpu_seconds: float  # its sampler workers (children that ended)
    master_torch_threads: int
    final_return: float
    other_cores: float = 0.0  # cores that processes outside this benchmark kept busy meanwhile
    probe_seconds: float = 0.0  # sampler="auto": its probes, counted in ``seconds`` (a user's run pays them)
    layout: str = ""  # sampler="auto": the layout it chose


# ------------------------------------------------------------------------------------ one training


def train_once(sampler: str, n_steps: int, log_interval: int, master_torch_threads: int | None) -> dict:
    """Run the examples' training in this process; return its times, CPU use and the master's torch threads.

    ``master_torch_threads=None`` passes ``affinity=None`` to the runner.
    """
    config = CARTPOLE["ppo"]
    SamplerCls: Any = CpuSampler if sampler == "cpu" else SerialSampler
    affinity: Any = None if master_torch_threads is None else dict(master_torch_threads=master_torch_threads)
    probe_seconds, layout = 0.0, ""
    if sampler == "auto":  # as rlrun train does it: measure, choose, then build the chosen layout
        probes_started = time.perf_counter()
        agent = CategoricalPgAgent(**config["agent"])
        choice = auto_layout(make, dict(id="CartPole-v1"), agent, **config["sampler"], n_steps=n_steps)
        probe_seconds, layout = time.perf_counter() - probes_started, choice.layout.label
        SamplerCls, affinity = sampler_class(choice.layout.kind), layout_affinity(choice.layout)
    seen: dict[str, int] = {}
    spent = dict(sample=0.0, optimize=0.0, eval=0.0)

    def timed(name: str, method):
        def call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - start

        return call

    class Runner(MinibatchRlEval):
        def on_training_start(self) -> None:
            seen["threads"] = torch.get_num_threads()  # after startup applied the affinity
            super().on_training_start()

    runner = Runner(
        algo=PPO(**config["algo"]),
        agent=CategoricalPgAgent(**config["agent"]),
        sampler=SamplerCls(
            EnvCls=make,
            env_kwargs=dict(id="CartPole-v1"),
            max_decorrelation_steps=0,
            eval_n_envs=4,
            eval_max_steps=4 * 3 * 501,
            eval_max_trajectories=10,
            **config["sampler"],
        ),
        n_steps=n_steps,
        seed=0,
        log_interval_steps=log_interval,
        affinity=affinity,
    )
    runner.sampler.obtain_samples = timed("sample", runner.sampler.obtain_samples)
    runner.sampler.evaluate_agent = timed("eval", runner.sampler.evaluate_agent)
    runner.algo.optimize_agent = timed("optimize", runner.algo.optimize_agent)
    logger.disable()
    cpu_start = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = runner.train()
    seconds = time.perf_counter() - start
    cpu_end = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    master_cpu, workers_cpu = (
        (end.ru_utime + end.ru_stime) - (begin.ru_utime + begin.ru_stime) for begin, end in zip(cpu_start, cpu_end)
    )
    return dict(
        seconds=seconds + probe_seconds,
        sample_seconds=spent["sample"],
        optimize_seconds=spent["optimize"],
        eval_seconds=spent["eval"],
        master_cpu_seconds=master_cpu,
        workers_cpu_seconds=workers_cpu,
        master_torch_threads=seen.get("threads", -1),
        final_return=float(result.get("ReturnAverage", float("nan"))),
        probe_seconds=probe_seconds,
        layout=layout,
    )


def training_process(send: Connection, sampler: str, n_steps: int, log_interval: int, threads: int | None) -> None:
    """Target of the process of one training: sends ``("ok", result)`` or ``("error", traceback)``."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's handlers only note signals for it
    signal.signal(signal.SIGINT, signal.default_int_handler)
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):  # the training's warnings and log lines would break the table
        os.dup2(devnull, fd)
    try:
        send.send(("ok", train_once(sampler, n_steps, log_interval, threads)))
    except BaseException:
        send.send(("error", traceback.format_exc()))


# ------------------------------------------------------------------------------------- neighbours


class Neighbours:
    """``n`` busy-loop processes, alive inside the ``with`` block and killed when it ends, however it ends.

    ``own_sessions``: each starts in a session of its own (its own autogroup for the scheduler).
    """

    def __init__(self, n: int, own_sessions: bool = False) -> None:
        self.n = n
        self.own_sessions = own_sessions
        self.processes: list[subprocess.Popen] = []

    def __enter__(self) -> Neighbours:
        try:
            for _ in range(self.n):
                command = [sys.executable, "-c", NEIGHBOUR_CODE]
                self.processes.append(subprocess.Popen(command, start_new_session=self.own_sessions))
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        for p in self.processes:
            if p.poll() is None:
                p.kill()
        for p in self.processes:
            p.wait()
        self.processes.clear()


def busy_cpu_seconds() -> tuple[float, float]:
    """CPU seconds used so far by the whole machine, and by this process with its ended children
    (the trainings, their workers and the neighbours, once waited for)."""
    machine = psutil.cpu_times()
    # steal: time the hypervisor gave this VM's CPUs to others, a disturbance like any other process
    busy = machine.user + machine.nice + machine.system
    busy += sum(getattr(machine, field, 0.0) for field in ("irq", "softirq", "steal"))
    ours = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        ours += usage.ru_utime + usage.ru_stime
    return busy, ours


def run_child(sampler: str, loaded: bool, args: argparse.Namespace) -> RunResult:
    """One training in a process of its own, with ``args.neighbours`` busy neighbours if ``loaded``.

    The process is forked from this one, which imported torch but never ran an op in parallel, so
    its thread pools start as in a fresh interpreter, without paying the imports again.
    """
    threads = {"cpu": args.cpu_master_threads, "serial": args.serial_master_threads}.get(sampler, 0)
    ctx = mp.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    busy0, ours0 = busy_cpu_seconds()
    start = time.perf_counter()
    with Neighbours(args.neighbours if loaded else 0, own_sessions=args.neighbour_session == "own"):
        # Not a daemon: CpuSampler's workers are its children.
        child = ctx.Process(
            target=training_process, args=(send, sampler, args.n_steps, args.log_interval, threads or None)
        )
        child.start()
        send.close()
        try:
            deadline = time.monotonic() + args.run_timeout
            while not receive.poll(0.1):
                check_stop()
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"The {LABELS[sampler]} training took more than --run-timeout {args.run_timeout} s."
                    )
            status, payload = receive.recv()
            child.join(10.0)  # it ends once it has sent its result
        except EOFError:
            status, payload = "error", "it ended without a result"
        finally:
            if child.exitcode is None:  # also on Ctrl-C and SIGTERM: stop it now
                child.kill()  # its workers die with it
                child.join()
            receive.close()
    elapsed = time.perf_counter() - start
    busy1, ours1 = busy_cpu_seconds()
    if status != "ok":
        raise RuntimeError(f"The {LABELS[sampler]} training ({'loaded' if loaded else 'quiet'}) failed: {payload}")
    others = max(0.0, (busy1 - busy0) - (ours1 - ours0)) / elapsed
    return RunResult(sampler, loaded, **payload, other_cores=others)


# ------------------------------------------------------------------------------------------ report


def load_line() -> str:
    return "load average " + "/".join(f"{x:.2f}" for x in os.getloadavg())


def ratio_line(name: str, value: float, target: float, misses: list[str]) -> str:
    ok = value <= target
    if not ok:
        misses.append(name)
    return f"  {name:<40} {value:6.2f}   target <= {target:g}   {'ok' if ok else 'MISSED'}"


def report(rounds: list[dict[tuple[str, bool], RunResult]], args: argparse.Namespace) -> tuple[str, list[str]]:
    """The table of medians and the ratios; also returns the names of missed targets."""
    lines = [
        f"\n{'sampler':<14} {'machine':<18} {'wall s':>7} {'range':>11} {'sample':>7} {'optim':>6} {'eval':>6} "
        f"{'cpu master':>10} {'cpu workers':>11} {'threads':>7} {'others':>6}"
    ]
    for sampler, loaded in args.configs:
        runs = [r[(sampler, loaded)] for r in rounds]
        seconds = [run.seconds for run in runs]

        def median(field: str, runs: list[RunResult] = runs) -> float:
            return statistics.median(getattr(run, field) for run in runs)

        machine = f"{args.neighbours} busy neighbours" if loaded else "quiet"
        lines.append(
            f"{LABELS[sampler]:<14} {machine:<18} {median('seconds'):7.2f} "
            f"{f'{min(seconds):.1f}-{max(seconds):.1f}':>11} {median('sample_seconds'):7.2f} "
            f"{median('optimize_seconds'):6.2f} {median('eval_seconds'):6.2f} {median('master_cpu_seconds'):10.2f} "
            f"{median('workers_cpu_seconds'):11.2f} {runs[0].master_torch_threads:>7} {median('other_cores'):6.2f}"
        )
    lines.append(
        "(medians over rounds. Seconds: wall time of runner.train(), and of its sampling, optimising and "
        "evaluating;\n CPU seconds of the training process and of its workers; the master's torch threads; "
        "cores kept busy by processes outside this benchmark)"
    )

    def ratio(a: tuple[str, bool], b: tuple[str, bool]) -> float:
        return statistics.median(r[a].seconds / r[b].seconds for r in rounds)

    misses: list[str] = []
    lines.append("\nRatios of wall times (median over rounds of the ratio within a round):")
    lines.append(
        ratio_line(
            "CpuSampler loaded / Serial loaded",
            ratio(("cpu", True), ("serial", True)),
            TARGETS["loaded_cpu_to_serial"],
            misses,
        )
    )
    lines.append(
        ratio_line(
            "CpuSampler loaded / CpuSampler quiet",
            ratio(("cpu", True), ("cpu", False)),
            TARGETS["loaded_cpu_to_quiet"],
            misses,
        )
    )
    lines.append(f"  {'SerialSampler loaded / Serial quiet':<40} {ratio(('serial', True), ('serial', False)):6.2f}")
    lines.append(f"  {'CpuSampler quiet / Serial quiet':<40} {ratio(('cpu', False), ('serial', False)):6.2f}")
    if ("auto", True) in args.configs:
        lines.append(
            ratio_line(
                "auto loaded / Serial loaded",
                ratio(("auto", True), ("serial", True)),
                TARGETS["loaded_auto_to_serial"],
                misses,
            )
        )
        lines.append(f"  {'auto quiet / Serial quiet':<40} {ratio(('auto', False), ('serial', False)):6.2f}")
        for loaded in (False, True):
            runs = [r[("auto", loaded)] for r in rounds]
            probes = statistics.median(run.probe_seconds for run in runs)
            chosen = ", ".join(run.layout for run in runs)
            machine = f"{args.neighbours} busy neighbours" if loaded else "quiet"
            lines.append(
                f"  auto, {machine}: chose {chosen}; its probes took {probes:.2f} s (median), in its wall time"
            )
    return "\n".join(lines), misses


def threads_label(threads: int) -> str:
    return "affinity=None" if threads == 0 else f"master_torch_threads={threads}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-steps", type=int, default=20_000, help="env steps per training")
    parser.add_argument("--log-interval", type=int, default=10_000, help="env steps between evaluations")
    parser.add_argument("--neighbours", type=int, default=2, help="busy-loop processes beside a loaded run")
    parser.add_argument(
        "--neighbour-session", choices=["same", "own"], default="same", help="the neighbours' session (see above)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="rounds; each runs every configuration once")
    parser.add_argument(
        "--cpu-master-threads", type=int, default=0, help="CpuSampler runs: master_torch_threads (0: affinity=None)"
    )
    parser.add_argument(
        "--serial-master-threads", type=int, default=1, help="SerialSampler runs: the same (1, as quick_start)"
    )
    parser.add_argument("--run-timeout", type=float, default=600.0, help="seconds before one training is given up")
    parser.add_argument(
        "--auto", action="store_true", help='also time sampler="auto", its probes counted, quiet and loaded'
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 1024 steps, one round")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--out", default=None, help="also write the report to this file")
    args = parser.parse_args(argv)
    args.configs = CONFIGS + (AUTO_CONFIGS if args.auto else [])
    if args.quick:
        args.n_steps, args.log_interval, args.repeats = 1024, 1024, 1
    if min(args.n_steps, args.log_interval, args.repeats) < 1:
        parser.error("--n-steps, --log-interval and --repeats must be >= 1")
    if min(args.neighbours, args.cpu_master_threads, args.serial_master_threads) < 0:
        parser.error("--neighbours, --cpu-master-threads and --serial-master-threads must be >= 0")

    # SIGTERM (a test's timeout, a job scheduler) unwinds like Ctrl-C, so every neighbour is killed.
    signal.signal(signal.SIGTERM, note_stop_signal)
    signal.signal(signal.SIGINT, note_stop_signal)
    header = (
        f"PPO CartPole-v1, {args.n_steps} steps, evaluation every {args.log_interval}; {args.repeats} round(s); "
        f"{os.cpu_count()} CPUs; {args.neighbours} neighbours in {args.neighbour_session} session(s); "
        f"CpuSampler {threads_label(args.cpu_master_threads)}, SerialSampler "
        f"{threads_label(args.serial_master_threads)}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')}; {load_line()} at the start"
    )
    print(header, flush=True)
    started = time.perf_counter()
    rounds: list[dict[tuple[str, bool], RunResult]] = []
    for i in range(args.repeats):
        order = args.configs[i % len(args.configs) :] + args.configs[: i % len(args.configs)]
        rounds.append({})
        for sampler, loaded in order:
            check_stop()
            run = run_child(sampler, loaded, args)
            rounds[-1][(sampler, loaded)] = run
            print(
                f"  round {i + 1}: {LABELS[sampler]:<13} {'loaded' if loaded else 'quiet ':<6} {run.seconds:7.2f} s "
                f"(sample {run.sample_seconds:.2f}, optimize {run.optimize_seconds:.2f}, eval {run.eval_seconds:.2f}; "
                f"others {run.other_cores:.2f} cores; {load_line()})",
                flush=True,
            )
    check_stop()
    text, misses = report(rounds, args)
    text += f"\n\ntotal {time.perf_counter() - started:.0f} s; {load_line()} at the end"
    print(text)
    if args.out:
        runs = [
            f"round {i + 1} {LABELS[s]} {'loaded' if ld else 'quiet'}: {json.dumps(asdict(r[(s, ld)]))}"
            for i, r in enumerate(rounds)
            for s, ld in args.configs
        ]
        with open(args.out, "w") as f:
            f.write(header + "\n" + text + "\n\nEvery run:\n" + "\n".join(runs) + "\n")
    if args.check and misses:
        print(f"FAIL: missed {misses}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
