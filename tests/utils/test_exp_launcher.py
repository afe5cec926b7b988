"""run_experiments with real processes and files: every run once, with its variant, within the run slots.

The train scripts here are tiny real scripts written into tmp_path. Most lay out their affinity on a
Machine built from os.sched_getaffinity, so they need not import torch and start in a fraction of a
second; the rlpyt-style test runs the full thing (torch, logger_context) in two runs.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from rlrun.utils.launching.affinity import encode_affinity
from rlrun.utils.launching.exp_launcher import (
    RunsFailedError,
    _cuda_idx,
    launch_experiment,
    run_experiments,
)
from rlrun.utils.launching.variant import VARIANT, VariantLevel, load_variant, make_variants, update_config

DEFAULT = {"algo": {"learning_rate": 1.0, "discount": 0.99}, "env": {"game": "pong"}, "fail": False, "sleep": 0.0}

TRAIN = """
import json, os, sys, time
from rlrun.utils.launching.affinity import affinity_from_code
from rlrun.utils.launching.layout import Machine
from rlrun.utils.launching.variant import load_variant, update_config

DEFAULT = {default!r}

slot_affinity_code, log_dir, run_ID, config_key = sys.argv[1:5]
start = time.time()
affinity = affinity_from_code(slot_affinity_code, machine=Machine(tuple(os.sched_getaffinity(0))))
config = update_config(DEFAULT, load_variant(log_dir))
time.sleep(config["sleep"])
run_dir = os.path.join(log_dir, "run_" + run_ID)
os.makedirs(run_dir, exist_ok=True)
result = dict(code=slot_affinity_code, run_ID=int(run_ID), config_key=config_key, extra=sys.argv[5:],
              config=config, start=start, end=time.time(), workers=len(affinity["workers_cpus"]))
with open(os.path.join(run_dir, "result.json"), "x") as f:  # "x": a second run of one ID would fail here
    json.dump(result, f)
with open({ran!r}, "a") as f:
    f.write(log_dir + " " + run_ID + "\\n")
sys.exit(3 if config["fail"] else 0)
"""

SLEEPER = """
import os, signal, sys, time
if sys.argv[4] == "ignore_term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
open(os.path.join({pids!r}, str(os.getpid())), "w").close()
time.sleep(60)
"""

pytestmark = pytest.mark.timeout(60)


def write_train(tmp_path: Path) -> str:
    script = tmp_path / "train.py"
    script.write_text(TRAIN.format(default=DEFAULT, ran=str(tmp_path / "ran.txt")))
    return str(script)


def results(runs) -> list[dict]:
    out = []
    for run in runs:
        with open(os.path.join(run.log_dir, f"run_{run.run_ID}", "result.json")) as f:
            out.append(json.load(f))
    return out


def max_overlap(intervals) -> int:
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda x: (x[0], x[1]))
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_every_run_runs_once_with_its_variant_within_the_slots(tmp_path):
    script = write_train(tmp_path)
    code = encode_affinity(n_cpu_core=3, n_gpu=0, set_affinity=False)  # 3 run slots, labels only
    levels = [
        VariantLevel([("algo", "learning_rate"), ("env", "game")], [(0.1, "pong"), (0.2, "breakout")], ["a", "b"]),
        VariantLevel([("sleep",)], [(0.6,), (0.3,)], ["slow", "fast"]),
    ]
    variants, log_dirs = make_variants(*levels)
    runs = run_experiments(
        script=script,
        affinity_code=code,
        experiment_title="grid",
        runs_per_setting=2,
        variants=variants,
        log_dirs=log_dirs,
        common_args=("base",),
        runs_args=[(i,) for i in range(len(variants))],
        root_log_dir=str(tmp_path / "data"),
        poll_interval=0.02,
    )
    assert len(runs) == 8 and all(r.ok for r in runs)
    assert [(os.path.basename(os.path.dirname(r.log_dir)), r.run_ID) for r in runs[:4]] == [
        ("a", 0),
        ("a", 0),
        ("b", 0),
        ("b", 0),
    ]  # run 0 of every setting first, as rlpyt
    # rlpyt's layout: <root>/local/<YYYYMMDD>/<HHMMSS>/<title>/<variant dirs>; the script adds run_<ID>.
    exp_dir = Path(runs[0].log_dir).parent.parent
    assert re.fullmatch(r"local/\d{8}/\d{6}/grid", exp_dir.relative_to(tmp_path / "data").as_posix())
    assert sorted(os.path.relpath(r.log_dir, exp_dir) for r in runs) == sorted(log_dirs * 2)
    assert (exp_dir / "num_launched.txt").read_text().strip() == "Runs launched: 8 of 8."
    assert all(d in (exp_dir / "experiments_tree.txt").read_text() for d in log_dirs)

    ran = (tmp_path / "ran.txt").read_text().splitlines()
    assert sorted(ran) == sorted(f"{r.log_dir} {r.run_ID}" for r in runs)  # each run exactly once
    outs = results(runs)
    for run, out in zip(runs, outs):
        i = log_dirs.index(os.path.relpath(run.log_dir, exp_dir))
        assert load_variant(run.log_dir) == variants[i]
        assert out["config"] == update_config(DEFAULT, variants[i])
        assert out["run_ID"] == run.run_ID and out["config_key"] == "base" and out["extra"] == [str(i)]
        assert out["code"] == f"{run.run_slot}slt_{code}" and out["workers"] == 1
    intervals = [(o["start"], o["end"]) for o in outs]
    assert max_overlap(intervals) <= 3
    for j, a in enumerate(outs):  # runs that overlapped held different slots
        for b in outs[j + 1 :]:
            if a["start"] < b["end"] and b["start"] < a["end"]:
                assert a["code"] != b["code"]


def test_failed_runs_are_reported_with_their_log_dirs(tmp_path, capsys):
    script = write_train(tmp_path)
    code = encode_affinity(n_cpu_core=2, n_gpu=0, set_affinity=False)
    variants, log_dirs = make_variants(VariantLevel([("fail",)], [(False,), (True,), (False,)], ["ok1", "bad", "ok2"]))
    kwargs = dict(
        script=script,
        affinity_code=code,
        experiment_title="fails",
        runs_per_setting=1,
        variants=variants,
        log_dirs=log_dirs,
        common_args=("base",),
        root_log_dir=str(tmp_path / "data"),
        poll_interval=0.02,
    )
    with pytest.raises(RunsFailedError) as info:
        run_experiments(**kwargs)
    error = info.value
    assert [os.path.basename(r.log_dir) for r in error.failed] == ["bad"]
    assert error.failed[0].returncode == 3 and "exit code 3" in str(error) and error.failed[0].log_dir in str(error)
    assert [r.ok for r in error.runs] == [True, False, True]  # the failure did not stop the others
    summary = Path(error.failed[0].log_dir).parent / "experiments_summary.txt"
    assert "2 of 3 run(s) succeeded" in summary.read_text() and error.failed[0].log_dir in summary.read_text()

    runs = run_experiments(**kwargs, raise_on_failure=False)  # same title: a folder of its own, even in one second
    assert [r.returncode for r in runs] == [0, 3, 0]
    assert {r.log_dir for r in runs}.isdisjoint(r.log_dir for r in error.runs)
    assert "exit code 3" in capsys.readouterr().err


@pytest.mark.integration
def test_timeout_stops_runs_and_kills_those_that_ignore_sigterm(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER.format(pids=str(pids)))
    variants, log_dirs = make_variants(VariantLevel([("x",)], [(1,), (2,), (3,)], ["x1", "x2", "x3"]))
    start = time.monotonic()
    runs = run_experiments(
        str(script),
        encode_affinity(n_cpu_core=2, n_gpu=0, set_affinity=False),
        "timeout",
        1,
        variants,
        log_dirs,
        common_args=("ignore_term",),
        root_log_dir=str(tmp_path / "data"),
        poll_interval=0.02,
        timeout=2.0,
        shutdown_timeout=0.5,
        raise_on_failure=False,
    )
    assert time.monotonic() - start < 15
    assert [r.describe() for r in runs] == ["stopped by the launcher"] * 2 + ["not started"]
    assert [r.returncode for r in runs[:2]] == [-signal.SIGKILL] * 2
    started = [int(p) for p in os.listdir(pids)]
    assert len(started) == 2 and not any(alive(p) for p in started)


def test_bad_input_fails_before_any_run_starts(tmp_path):
    script = write_train(tmp_path)
    code = encode_affinity(n_cpu_core=2, n_gpu=0, set_affinity=False)
    root = tmp_path / "data"
    common = dict(affinity_code=code, experiment_title="t", runs_per_setting=1, root_log_dir=str(root))
    with pytest.raises(FileNotFoundError, match="nope.py"):
        run_experiments(script=str(tmp_path / "nope.py"), variants=[{}], log_dirs=["a"], **common)
    with pytest.raises(ValueError, match="2 variants but 1 log_dirs"):
        run_experiments(script=script, variants=[{}, {}], log_dirs=["a"], **common)
    with pytest.raises(ValueError, match="runs_args"):
        run_experiments(script=script, variants=[{}], log_dirs=["a"], runs_args=[(), ()], **common)
    with pytest.raises(TypeError, match=r"variants\[1\]\['algo'\]"):
        run_experiments(script=script, variants=[{}, {"algo": {"x": object()}}], log_dirs=["a", "b"], **common)
    too_many_gpus = f"1cpu_{torch.cuda.device_count() + 1}gpu_0hto"  # a code this machine cannot hold
    with pytest.raises(ValueError, match="CUDA device"):
        run_experiments(script=script, variants=[{}], log_dirs=["a"], **dict(common, affinity_code=too_many_gpus))
    assert not root.exists()


def test_launch_experiment_saves_the_variant_and_passes_rlpyts_arguments(tmp_path):
    script = write_train(tmp_path)
    log_dir = tmp_path / "exp" / "lr_0.5"
    code = encode_affinity(n_cpu_core=2, n_gpu=0, set_affinity=False)
    proc = launch_experiment(script, 1, code, str(log_dir), {"algo": {"learning_rate": 0.5}}, 4, ("base", 7))
    assert proc.wait(timeout=30) == 0
    assert proc.args[1:] == [script, f"1slt_{code}", str(log_dir), "4", "base", "7"]
    assert json.loads((log_dir / VARIANT).read_text()) == {"algo": {"learning_rate": 0.5}}
    out = json.loads((log_dir / "run_4" / "result.json").read_text())
    assert out["config"]["algo"] == {"learning_rate": 0.5, "discount": 0.99} and out["extra"] == ["7"]


def test_egl_device_comes_from_the_runs_gpu():
    assert _cuda_idx({"cuda_idx": 2}) == 2
    assert _cuda_idx([{"cuda_idx": 1}, {"cuda_idx": 2}]) == 1  # multi-GPU run: its first rank
    assert _cuda_idx({"optimizer": [{"cuda_idx": 3}], "sampler": {}}) == 3  # async run: its optimizer
    assert _cuda_idx({"cuda_idx": None}) is None


RLPYT_LAUNCH = """
from rlrun.utils.launching.affinity import encode_affinity
from rlrun.utils.launching.exp_launcher import run_experiments
from rlrun.utils.launching.variant import make_variants, VariantLevel

affinity_code = encode_affinity(
    n_cpu_core=2,
    n_gpu=0,
    cpu_per_run=1,
    set_affinity={set_affinity},
)
runs_per_setting = 1
experiment_title = "rlpyt_style"
variant_levels = list()

learning_rate = [7e-4, 1e-3]
values = list(zip(learning_rate))
dir_names = ["{{}}lr".format(*v) for v in values]
keys = [("algo", "learning_rate")]
variant_levels.append(VariantLevel(keys, values, dir_names))

variants, log_dirs = make_variants(*variant_levels)

default_config_key = "base"

run_experiments(
    script="train_rlpyt.py",
    affinity_code=affinity_code,
    experiment_title=experiment_title,
    runs_per_setting=runs_per_setting,
    variants=variants,
    log_dirs=log_dirs,
    common_args=(default_config_key,),
)
"""

RLPYT_TRAIN = """
import sys

from rlrun.utils.launching.affinity import affinity_from_code
from rlrun.utils.launching.variant import load_variant, update_config
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context

configs = dict(base=dict(algo=dict(learning_rate=1.0, discount=0.99)))


def build_and_train(slot_affinity_code, log_dir, run_ID, config_key):
    affinity = affinity_from_code(slot_affinity_code)
    config = configs[config_key]
    variant = load_variant(log_dir)
    config = update_config(config, variant)
    with logger_context(log_dir, run_ID, "test", dict(config, master_cpus=list(affinity["master_cpus"]))):
        logger.record_tabular("learning_rate", config["algo"]["learning_rate"])
        logger.dump_tabular()


if __name__ == "__main__":
    build_and_train(*sys.argv[1:])
"""


@pytest.mark.integration
def test_rlpyt_style_launch_script_runs_end_to_end(tmp_path):
    """A launch script and a train script in rlpyt's shape, with only the imports renamed."""
    two_cpus = len(os.sched_getaffinity(0)) >= 2
    (tmp_path / "launch.py").write_text(RLPYT_LAUNCH.format(set_affinity=two_cpus))
    (tmp_path / "train_rlpyt.py").write_text(RLPYT_TRAIN)
    with open(tmp_path / "out.txt", "w") as out:
        proc = subprocess.run(
            [sys.executable, "launch.py"], cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT, timeout=50
        )
    assert proc.returncode == 0, (tmp_path / "out.txt").read_text()
    params = sorted((tmp_path / "data" / "local").glob("*/*/rlpyt_style/*lr/run_0/params.json"))
    assert [p.parent.parent.name for p in params] == ["0.0007lr", "0.001lr"]
    for p in params:
        saved = json.loads(p.read_text())
        assert saved["algo"] == {"learning_rate": float(p.parent.parent.name[:-2]), "discount": 0.99}
        assert (p.parent / "progress.csv").exists() and (p.parent.parent / VARIANT).exists()
    if two_cpus:  # each run on its own slot's core
        assert sorted(json.loads(p.read_text())["master_cpus"] for p in params) == [
            [c] for c in sorted(os.sched_getaffinity(0))[:2]
        ]


LAUNCH_SLEEPERS = """
from rlrun.utils.launching.affinity import encode_affinity
from rlrun.utils.launching.exp_launcher import run_experiments

run_experiments("sleeper.py", encode_affinity(n_cpu_core=2, n_gpu=0, set_affinity=False), "interrupted", 2,
                [dict(x=1), dict(x=2)], ["x1", "x2"], common_args=("plain",), poll_interval=0.05)
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.integration
def test_interrupting_the_launcher_stops_its_runs(tmp_path, signum):
    pids = tmp_path / "pids"
    pids.mkdir()
    (tmp_path / "sleeper.py").write_text(SLEEPER.format(pids=str(pids)))
    (tmp_path / "launch.py").write_text(LAUNCH_SLEEPERS)
    with open(tmp_path / "out.txt", "w") as out:
        # As from a terminal: a shell that started pytest in the background (`nohup ... &`) leaves SIGINT
        # ignored, which children inherit and Python then keeps, so Ctrl-C would never reach the launcher.
        launcher = subprocess.Popen(
            [sys.executable, "launch.py"],
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    try:
        deadline = time.monotonic() + 40
        while len(os.listdir(pids)) < 2 and time.monotonic() < deadline and launcher.poll() is None:
            time.sleep(0.05)
        assert len(os.listdir(pids)) == 2, (tmp_path / "out.txt").read_text()
        launcher.send_signal(signum)  # the launcher only, as `kill` would, not its process group
        assert launcher.wait(timeout=30) != 0
        children = [int(p) for p in os.listdir(pids)]
        assert len(children) == 2 and not any(alive(p) for p in children)
        summary = next((tmp_path / "data" / "local").glob("*/*/interrupted/experiments_summary.txt")).read_text()
        assert summary.count("stopped by the launcher") == 2 and summary.count("not started") == 2
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait(timeout=10)
        for p in os.listdir(pids):
            if alive(int(p)):
                os.kill(int(p), signal.SIGKILL)


RESUMING_TRAIN = """
import os, sys

from rlrun.utils.launching.exp_launcher import resume_requested
from rlrun.utils.logging import logger
from rlrun.utils.logging.context import logger_context

slot_affinity_code, log_dir, run_ID = sys.argv[1:4]
resume = resume_requested()
with logger_context(log_dir, run_ID, "attempts", dict(x=1), resume=resume):
    logger.record_tabular("resumed", int(resume))
    logger.dump_tabular()
"""


def test_run_experiments_with_resume_relaunches_every_run_into_its_folder_told_to_resume(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(RESUMING_TRAIN)
    grid = dict(
        script="train.py",
        affinity_code=encode_affinity(n_cpu_core=2, n_gpu=0, set_affinity=False),
        experiment_title="grid",
        runs_per_setting=1,
        variants=[dict(x=1), dict(x=2)],
        log_dirs=["x1", "x2"],
        poll_interval=0.05,
    )
    with pytest.raises(FileNotFoundError, match="no earlier launch of 'grid'"):
        run_experiments(**grid, resume=True)
    first = run_experiments(**grid)
    resumed = run_experiments(**grid, resume=True)
    assert [r.log_dir for r in resumed] == [r.log_dir for r in first] and all(r.ok for r in resumed)
    (exp_dir,) = (tmp_path / "data" / "local").glob("*/*/grid")  # no second launch folder
    for setting in ("x1", "x2"):
        assert [p.name for p in (exp_dir / setting).glob("run_*")] == ["run_0"]  # the same run folder
        rows = (exp_dir / setting / "run_0" / "progress.csv").read_text().split()
        assert rows == ["resumed", "0", "1"]  # the second attempt was told to resume, and appended
    # A folder given by path works too; one that no launch made is refused.
    assert all(r.ok for r in run_experiments(**grid, resume=exp_dir))
    with pytest.raises(FileNotFoundError, match="no experiments_tree.txt"):
        run_experiments(**grid, resume=tmp_path)
