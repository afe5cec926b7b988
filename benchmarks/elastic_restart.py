"""Elastic SyncRl: kill (or crash) one rank of a torchrun job and time how it heals.

    python benchmarks/elastic_restart.py --tries 10
    python benchmarks/elastic_restart.py --tries 3 --fault raise --out results.txt

Each try starts examples/sync_rl_elastic.py as two simulated nodes: two ``torchrun`` launchers on this
machine (``--nnodes 2 --nproc-per-node 1``, c10d rendezvous on 127.0.0.1 at a free port,
``--max-restarts 2``). Once rank 0 has written its first checkpoint, the rank ``--kill_rank`` is
SIGKILLed (``--fault kill``) or raises an exception in its next iteration (``--fault raise``). The try
passes when the job restarts exactly once, the restarted job resumes from the newest checkpoint
written before the fault, both launchers exit 0, ``progress.csv`` holds every iteration once (its
counters contiguous, no row duplicated or missing), and no process of the job, nor a /dev/shm entry
its processes mapped, is left (entries of other programs on the machine are not the job's).

Printed per try: the outcome, the restarts, the seconds from the fault to the restarted job's first new
row, and the try's wall time; then a summary. Exits 1 if any try failed. ``--keep`` keeps the run folders.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "sync_rl_elastic.py"
SHM = "/dev/shm"
POLL_S = 0.05
RESUMED = re.compile(r"continuing at iteration (\d+)")

# Raises in rank --kill_rank of the first job, in the iteration after rank 0's first checkpoint (the job's
# first start only: a marker file says it happened).
RAISING_SCRIPT = """
import os, sys, time
sys.path.insert(0, {examples!r})
import sync_rl_elastic as example
from rlrun.runners.sync_rl import SyncRl

MARKER = {marker!r}


class RaisingOnce(SyncRl):
    def store_diagnostics(self, itr, traj_infos, opt_info):
        ckpts = os.path.join({run_dir!r}, "checkpoints")
        first_done = os.path.isdir(ckpts) and any(n.endswith(".json") for n in os.listdir(ckpts))
        if self.rank == {rank} and first_done and not os.path.exists(MARKER):
            with open(MARKER, "w") as f:
                f.write(repr(time.time()))
            raise RuntimeError("planned failure of the elastic benchmark")
        super().store_diagnostics(itr, traj_infos, opt_info)


if __name__ == "__main__":
    args = example.build_parser().parse_args()
    example.SyncRl = RaisingOnce
    example.main(args)
"""


@dataclass
class Try:
    """One try's outcome (``ok``), what went wrong (``problems``) and its timings."""

    index: int
    ok: bool = False
    restarts: int = -1  # jobs started after the first one
    fault_to_new_row_s: float | None = None
    wall_s: float = 0.0
    newest_checkpoint_itr: int | None = None  # the newest written before the restart
    resumed_at_itr: int | None = None  # the first iteration of the restarted job
    rows: int = 0
    problems: list[str] = field(default_factory=list)
    exit_codes: list[int | None] = field(default_factory=list)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def shm_entries() -> set[str]:
    try:
        return set(os.listdir(SHM))
    except OSError:
        return set()


def shm_mapped_by(pids: list[int]) -> set[str]:
    """The /dev/shm entries the processes ``pids`` have mapped now."""
    found = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps") as f:
                maps = f.read()
        except OSError:
            continue
        found |= set(re.findall(rf"{SHM}/(\S+)", maps))
    return found


def workers_by_rank(launchers: list[subprocess.Popen[bytes]]) -> dict[int, list[int]]:
    """The live worker processes of the launchers, by their RANK.

    Only a launcher's own children are its workers. A worker's children inherit its RANK too: rlrun runs
    ``git`` at each start to record the code's version in run.json, and counting those (caught now and
    then by a poll while they ran) made a job that restarted once read as one that restarted twice."""
    found: dict[int, list[int]] = {}
    for launcher in launchers:
        try:
            children = psutil.Process(launcher.pid).children(recursive=False)
        except psutil.Error:
            continue
        for child in children:
            try:
                rank = child.environ().get("RANK")
                if rank is None or child.status() == psutil.STATUS_ZOMBIE:
                    continue
            except psutil.Error:
                continue
            found.setdefault(int(rank), []).append(child.pid)
    return found


def checkpoint_itrs(run_dir: Path) -> list[int]:
    folder = run_dir / "checkpoints"
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(int(m.group(1)) for n in names if (m := re.fullmatch(r"itr_(\d+)\.json", n)))


def progress_itrs(run_dir: Path) -> list[int]:
    try:
        with open(run_dir / "progress.csv", newline="") as f:
            return [int(row["Diagnostics/Iteration"]) for row in csv.DictReader(f)]
    except (OSError, KeyError, ValueError):
        return []


def run_try(index: int, args: argparse.Namespace, work: Path) -> Try:
    """One job: start the launchers, inject the fault after the first checkpoint, follow the restart, check."""
    result = Try(index)
    folder = work / f"try_{index}"
    folder.mkdir(parents=True)
    log_dir = folder / "logs"
    run_dir = log_dir / "run_0"
    script = EXAMPLE
    marker = folder / "raised"
    if args.fault == "raise":
        script = folder / "train.py"
        script.write_text(
            RAISING_SCRIPT.format(
                examples=str(EXAMPLE.parent), marker=str(marker), run_dir=str(run_dir), rank=args.kill_rank
            )
        )
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    env.pop("TORCH_DISABLE_SHARE_RDZV_TCP_STORE", None)
    nproc = 2 // args.nnodes
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nnodes",
        str(args.nnodes),
        "--nproc-per-node",
        str(nproc),
        "--max-restarts",
        "2",
        "--rdzv-backend",
        "c10d",
        "--rdzv-endpoint",
        f"127.0.0.1:{port}",
        "--rdzv-id",
        f"elastic_{index}",
        str(script),
        "--log_dir",
        str(log_dir),
        "--n_steps",
        str(args.n_steps),
        "--batch_T",
        "8",
        "--batch_B",
        "2",
        "--log_interval_steps",
        str(2 * 8 * 2),  # a row (and a checkpoint) after every iteration
        "--collective_timeout",
        str(args.collective_timeout),
    ]
    start = time.monotonic()
    launchers: list[subprocess.Popen[bytes]] = []
    seen: dict[int, list[int]] = {}  # rank -> its worker pids, in the order they appeared
    fault_at: float | None = None
    newest_before_restart: int | None = None
    used_shm: set[str] = set()  # what the job's processes mapped under /dev/shm (neighbours' entries are noise)
    try:
        for node in range(args.nnodes):
            out = open(folder / f"launcher_{node}.log", "wb")
            launchers.append(
                subprocess.Popen(cmd, env=env, cwd=folder, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            )
            out.close()
        deadline = start + args.timeout
        resumed_text_seen = False
        while any(p.poll() is None for p in launchers):
            now = time.monotonic()
            if now > deadline:
                result.problems.append(f"did not finish within {args.timeout:g} s")
                break
            itrs = checkpoint_itrs(run_dir)
            live = workers_by_rank(launchers)
            used_shm |= shm_mapped_by([pid for pids in live.values() for pid in pids] + [p.pid for p in launchers])
            for rank, pids in live.items():
                for pid in pids:
                    if pid not in seen.setdefault(rank, []):
                        seen[rank].append(pid)
            generations = len(seen.get(0, []))
            if generations <= 1 and itrs:
                newest_before_restart = itrs[-1]
            if fault_at is None and itrs:
                if args.fault == "kill":
                    victims = live.get(args.kill_rank, [])
                    if victims:
                        os.kill(victims[0], signal.SIGKILL)
                        fault_at = time.monotonic()
                elif marker.exists():
                    fault_at = time.monotonic() - (time.time() - float(marker.read_text()))
            if fault_at is not None and result.fault_to_new_row_s is None:
                if not resumed_text_seen:
                    try:
                        match = RESUMED.search((run_dir / "debug.log").read_text(errors="replace"))
                    except OSError:
                        match = None
                    if match is not None:
                        resumed_text_seen = True
                        result.resumed_at_itr = int(match.group(1))
                if result.resumed_at_itr is not None and result.resumed_at_itr in progress_itrs(run_dir):
                    result.fault_to_new_row_s = time.monotonic() - fault_at
            time.sleep(POLL_S)
    finally:
        for p in launchers:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in launchers:
            try:
                p.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    result.wall_s = time.monotonic() - start
    result.exit_codes = [p.returncode for p in launchers]
    result.restarts = len(seen.get(0, [])) - 1
    result.newest_checkpoint_itr = newest_before_restart
    check(result, run_dir, args)
    time.sleep(0.5)
    left = [pid for pids in seen.values() for pid in pids if psutil.pid_exists(pid)]
    left = [pid for pid in left if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    if left:
        result.problems.append(f"worker processes left running: {left}")
    if left_shm := sorted(used_shm & shm_entries()):
        result.problems.append(f"/dev/shm entries the job used are left: {left_shm}")
    result.ok = not result.problems
    if not result.ok:
        for node in range(len(launchers)):
            text = (folder / f"launcher_{node}.log").read_text(errors="replace")
            result.problems.append(f"launcher {node} output (tail):\n{text[-args.log_tail :]}")
    return result


def check(result: Try, run_dir: Path, args: argparse.Namespace) -> None:
    if result.exit_codes != [0] * len(result.exit_codes):
        result.problems.append(f"launcher exit codes {result.exit_codes}")
    if result.restarts != 1:
        result.problems.append(f"{result.restarts} restarts (rank 0 processes: {result.restarts + 1}); want 1")
    if result.newest_checkpoint_itr is None or result.resumed_at_itr != result.newest_checkpoint_itr + 1:
        result.problems.append(
            f"resumed at iteration {result.resumed_at_itr}, the newest checkpoint before the restart was "
            f"iteration {result.newest_checkpoint_itr}"
        )
    itrs = progress_itrs(run_dir)
    result.rows = len(itrs)
    n_itr = -(-int(args.n_steps) // (2 * 8 * 2))
    if itrs != list(range(n_itr)):
        dups = sorted({i for i in itrs if itrs.count(i) > 1})
        missing = sorted(set(range(n_itr)) - set(itrs))
        result.problems.append(
            f"progress.csv iterations not 0..{n_itr - 1} once each: duplicated {dups}, missing {missing}"
        )


def describe(t: Try) -> str:
    new_row = "-" if t.fault_to_new_row_s is None else f"{t.fault_to_new_row_s:.1f}"
    return (
        f"try {t.index:2d}  {'ok  ' if t.ok else 'FAIL'}  restarts {t.restarts}  "
        f"newest ckpt itr {t.newest_checkpoint_itr}  resumed at itr {t.resumed_at_itr}  rows {t.rows}  "
        f"fault->new row {new_row} s  wall {t.wall_s:.1f} s  exit {t.exit_codes}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--fault", choices=("kill", "raise"), default="kill")
    parser.add_argument("--kill_rank", type=int, default=1, choices=(0, 1))
    parser.add_argument("--nnodes", type=int, default=2, choices=(1, 2), help="launchers (2 ranks in all)")
    parser.add_argument("--n_steps", type=int, default=32 * 60, help="env steps of the job (32 per iteration)")
    parser.add_argument("--collective_timeout", type=float, default=120.0)
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds one try may take")
    parser.add_argument("--work_dir", default=None, help="where the tries' folders go (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the tries' folders")
    parser.add_argument("--json", default=None, help="also write the tries as JSON here")
    parser.add_argument("--out", default=None, help="also write the printed report here")
    parser.add_argument("--log_tail", type=int, default=3000, help="characters of launcher output on a failure")
    args = parser.parse_args(argv)
    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="elastic_restart_"))
    work.mkdir(parents=True, exist_ok=True)
    lines = [
        f"elastic restart: {args.tries} tries, fault={args.fault} in rank {args.kill_rank}, {args.nnodes} launcher(s), "
        f"2 ranks, --max-restarts 2, c10d rendezvous, n_steps={args.n_steps}; torch "
        f"{__import__('torch').__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}"
    ]
    print(lines[0], flush=True)
    tries = []
    for index in range(args.tries):
        t = run_try(index, args, work)
        tries.append(t)
        lines.append(describe(t))
        print(lines[-1], flush=True)
        for problem in t.problems:
            print("    " + problem.replace("\n", "\n    "), flush=True)
    ok = [t for t in tries if t.ok]
    times = sorted(t.fault_to_new_row_s for t in ok if t.fault_to_new_row_s is not None)
    walls = sorted(t.wall_s for t in ok)
    summary = f"resumed after exactly one restart: {len(ok)}/{len(tries)}"
    if times:
        summary += (
            f"; fault -> first new row: median {times[len(times) // 2]:.1f} s (min {times[0]:.1f}, max {times[-1]:.1f})"
            f"; wall per try: median {walls[len(walls) // 2]:.1f} s (min {walls[0]:.1f}, max {walls[-1]:.1f})"
        )
    lines.append(summary)
    print(summary, flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(t) for t in tries], indent=2))
    if not args.keep and not args.work_dir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if len(ok) == len(tries) else 1


if __name__ == "__main__":
    sys.exit(main())
