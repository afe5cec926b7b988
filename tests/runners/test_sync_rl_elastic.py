"""SyncRl across simulated nodes and elastic restarts: two ``torchrun`` launchers on this machine (``--nnodes 2
--nproc-per-node 1``, c10d rendezvous on 127.0.0.1) train to the end with identical parameters, and under
``--max-restarts 2`` a rank that is SIGKILLed (or raises) leads to exactly one restart, which resumes from
the newest checkpoint with every iteration logged once, leaving nothing behind."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.integration

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
BENCHMARK = ROOT / "benchmarks" / "elastic_restart.py"
ENV = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
sys.path.insert(0, str(HERE))

from sync_rl_helpers import RANK_DIGESTS_SCRIPT, free_port  # noqa: E402


def _processes_naming(text: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline", "status"]):
        try:
            if p.info["status"] != psutil.STATUS_ZOMBIE and any(text in part for part in p.info["cmdline"] or ()):
                found.append(p)
        except psutil.Error:
            continue
    return found


@pytest.mark.timeout(200)
def test_two_torchrun_launchers_as_two_nodes_train_to_the_end_with_identical_parameters(tmp_path):
    script = tmp_path / "train.py"
    log_dir = tmp_path / "logs"
    script.write_text(
        RANK_DIGESTS_SCRIPT.format(helpers=str(HERE), log_dir=str(log_dir), out_dir=str(tmp_path), name="two_nodes")
    )
    endpoint = f"127.0.0.1:{free_port()}"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "1"]
    cmd += ["--rdzv-backend", "c10d", "--rdzv-endpoint", endpoint, "--rdzv-id", "two_nodes", str(script)]
    launchers = [
        subprocess.Popen(cmd, env=ENV, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(2)
    ]
    try:
        outputs = [p.communicate(timeout=170)[0] for p in launchers]
    finally:
        for p in launchers:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, out in zip(launchers, outputs):
        assert p.returncode == 0, out[-3000:]
    outs = [json.loads((tmp_path / f"rank_{r}.json").read_text()) for r in (0, 1)]
    assert [o["world_size"] for o in outs] == [2, 2]
    assert outs[0]["digests"] == outs[1]["digests"] and len(outs[0]["digests"]) == 4
    assert [p.name for p in log_dir.iterdir()] == ["run_0"]  # rank 0 alone logged
    assert not _processes_naming(str(script))


def _elastic_try(tmp_path: Path, *extra: str) -> tuple[dict, Path]:
    """One try of benchmarks/elastic_restart.py (which checks exit codes, restarts, the resume point, the
    rows and leftovers itself); returns its record and the run folder, for the test to check again."""
    report = tmp_path / "tries.json"
    cmd = [sys.executable, str(BENCHMARK), "--tries", "1", "--work_dir", str(tmp_path), "--json", str(report)]
    cmd += ["--timeout", "250", *extra]
    result = subprocess.run(cmd, env=ENV, cwd=tmp_path, capture_output=True, text=True, timeout=330)
    (record,) = json.loads(report.read_text())
    assert result.returncode == 0 and record["ok"], result.stdout[-6000:] + result.stderr[-3000:]
    return record, tmp_path / "try_0" / "logs" / "run_0"


def _check_resumed_once_with_contiguous_rows(record: dict, run_dir: Path) -> None:
    assert record["restarts"] == 1
    assert record["resumed_at_itr"] == record["newest_checkpoint_itr"] + 1
    rows = list(csv.DictReader(open(run_dir / "progress.csv", newline="")))
    itrs = [int(r["Diagnostics/Iteration"]) for r in rows]
    steps = [int(r["Diagnostics/CumSteps"]) for r in rows]
    assert itrs == list(range(60)), itrs  # no row duplicated or missing across the restart
    assert steps == [32 * (i + 1) for i in range(60)], steps
    debug = (run_dir / "debug.log").read_text()
    assert debug.count("SyncRl rank 0 of 2 joined") == 2  # the first job and the one restart
    assert f"continuing at iteration {record['resumed_at_itr']} of 60" in debug
    assert not (run_dir / "FAILED").exists()
    assert not _processes_naming(str(run_dir.parent.parent))


@pytest.mark.timeout(360)
def test_a_sigkilled_rank_restarts_the_job_once_and_it_resumes_from_the_newest_checkpoint(tmp_path):
    record, run_dir = _elastic_try(tmp_path, "--fault", "kill", "--kill_rank", "1")
    _check_resumed_once_with_contiguous_rows(record, run_dir)


@pytest.mark.timeout(360)
def test_a_rank_that_raises_restarts_the_job_once_and_it_resumes_from_the_newest_checkpoint(tmp_path):
    record, run_dir = _elastic_try(tmp_path, "--fault", "raise", "--kill_rank", "1")
    _check_resumed_once_with_contiguous_rows(record, run_dir)
    assert (tmp_path / "try_0" / "raised").exists()
