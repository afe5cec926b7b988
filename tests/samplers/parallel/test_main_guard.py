"""A script without ``if __name__ == "__main__":`` under spawn: the error names the missing guard and the fix."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from rlrun.utils.launching.main_guard import MAIN_GUARD_EXIT_CODE, is_bootstrapping, refuse_while_bootstrapping

REPO = Path(__file__).resolve().parents[3]

SCRIPT = textwrap.dedent(
    """
    import torch
    torch.set_num_threads(1)
    from rlrun.agents.pg.categorical import CategoricalPgAgent
    from rlrun.algos.pg.a2c import A2C
    from rlrun.envs.gym import make
    from rlrun.runners.minibatch_rl import MinibatchRl
    from rlrun.samplers.parallel.cpu.sampler import CpuSampler

    sampler = CpuSampler(make, dict(id="CartPole-v1"), batch_T=4, batch_B=1, start_method="{start_method}")
    runner = MinibatchRl(algo=A2C(), agent=CategoricalPgAgent(), sampler=sampler, n_steps=16,
                         log_interval_steps=8, seed=0, affinity=dict(workers_cpus=[0]))
    from rlrun.utils.logging.context import logger_context
    {body}
    print("SCRIPT DONE", flush=True)
    """
)


def _run(tmp_path: Path, start_method: str, guarded: bool) -> subprocess.CompletedProcess:
    train = 'with logger_context("runs", 0, "guard", override_prefix=True):\n        {}runner.train()'
    body = 'if __name__ == "__main__":\n        ' + train.format("    ") if guarded else train.format("")
    script = tmp_path / ("guarded.py" if guarded else "unguarded.py")
    script.write_text(SCRIPT.format(start_method=start_method, body=body))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path
    )
    try:
        out, err = proc.communicate(timeout=150)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    # Nothing left behind: no process still runs the script (a worker, or a worker's worker).
    left = [p for p in psutil.process_iter(["cmdline"]) if str(script) in " ".join(p.info["cmdline"] or [])]
    assert left == []
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.integration
def test_unguarded_script_under_spawn_fails_with_an_error_naming_the_missing_guard(tmp_path):
    done = _run(tmp_path, "spawn", guarded=False)
    assert done.returncode == 1
    last_line = done.stderr.strip().splitlines()[-1]
    assert last_line.startswith("rlrun.samplers.parallel.protocol.SamplerWorkerError: Sampler worker 0")
    assert 'has no `if __name__ == "__main__":` guard' in last_line
    assert "unguarded.py" in last_line and "start_method='fork'" in last_line
    assert "unpickle" not in last_line
    # The worker said the same on its own stderr, and no second run started inside it.
    assert "while a spawn or forkserver worker was importing the main script" in done.stderr
    assert "SCRIPT DONE" not in done.stdout
    # No folder at all: the worker stopped at its logger_context before making one of its own, and the
    # parent's run, which failed before it started, took its folder and the parents it made with it.
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_guarded_script_under_spawn_trains(tmp_path):
    done = _run(tmp_path, "spawn", guarded=True)
    assert done.returncode == 0, done.stderr
    assert "SCRIPT DONE" in done.stdout


def test_refuse_while_bootstrapping_is_silent_in_an_ordinary_process():
    assert not is_bootstrapping()
    refuse_while_bootstrapping("anything")  # returns


def test_refuse_while_bootstrapping_exits_with_its_code_in_a_child_being_prepared(monkeypatch, capsys):
    import multiprocessing

    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", True, raising=False)
    with pytest.raises(SystemExit) as exc:
        refuse_while_bootstrapping("CpuSampler.initialize()")
    assert exc.value.code == MAIN_GUARD_EXIT_CODE
    assert 'if __name__ == "__main__":' in capsys.readouterr().err
