"""benchmarks/results_page.py: the table's arithmetic on a tiny fixture, the plots drawn by `rlrun plot`, and
docs/results.md holding the rows the committed curves give (so each number on the page traces to a file)."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "results_page.py"


def load_script():
    spec = importlib.util.spec_from_file_location("results_page", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["results_page"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def write_curve(folder: Path, rows: list[tuple[int, float, float]], **params) -> None:
    folder.mkdir(parents=True)
    with open(folder / "progress.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["CumSteps", "CumTrainTime", "ReturnAverage"])
        writer.writerows(rows)
    (folder / "params.json").write_text(json.dumps(params))


# Three seeds of a CartPole-like run, evaluated every 1,000 steps. Seed 0's evaluation before training
# reads 480 (it must not count as solving); seed 2 never reaches 475.
FIXTURE = {
    0: [(0, 0.0, 480.0), (1000, 1.0, 100.0), (2000, 2.0, 490.0), (3000, 3.0, 500.0)],
    1: [(0, 0.0, 20.0), (1000, 1.5, 475.0), (2000, 3.0, 300.0), (3000, 4.5, 400.0)],
    2: [(0, 0.0, 20.0), (1000, 2.0, 50.0), (2000, 4.0, 200.0), (3000, 6.0, 300.0)],
}


@pytest.mark.timeout(30)
def test_first_crossing_skips_the_evaluation_before_training_and_takes_the_first_at_or_above():
    page = load_script()
    assert page.first_crossing(FIXTURE[0], 475.0) == (2000, 2.0)
    assert page.first_crossing(FIXTURE[1], 475.0) == (1000, 1.5)  # exactly at the threshold counts
    assert page.first_crossing(FIXTURE[2], 475.0) is None


@pytest.mark.timeout(30)
def test_summarize_gives_final_mean_spread_and_medians_only_when_every_seed_got_there():
    page = load_script()
    row = page.summarize(FIXTURE, 475.0)
    assert row.seeds == (0, 1, 2)
    assert row.budget == 3000
    assert row.final_mean == pytest.approx(400.0)
    assert row.final_std == pytest.approx(100.0)  # sample std of 500, 400, 300
    assert (row.final_min, row.final_max) == (300.0, 500.0)
    assert row.n_reached == 2
    assert row.median_steps_to_threshold is None  # seed 2 never solved: no median of the others
    assert row.median_wall == pytest.approx(4.5)

    solved = page.summarize({0: FIXTURE[0], 1: FIXTURE[1]}, 475.0)
    assert solved.median_steps_to_threshold == pytest.approx(1500.0)
    assert solved.median_wall_to_threshold == pytest.approx(1.75)

    with pytest.raises(ValueError, match="at least one seed"):
        page.summarize({}, 475.0)


@pytest.mark.timeout(30)
def test_the_table_row_reads_the_curve_folders_and_names_its_source_and_load(tmp_path):
    page = load_script()
    pair = page.Pair("CartPole-v1", "ppo", 3000, 1000, 475.0)
    for seed, rows in FIXTURE.items():
        write_curve(
            tmp_path / "CartPole-v1-ppo" / f"seed{seed}",
            rows,
            name=f"ppo seed {seed}",
            load_average_before=[2.0 + seed, 1.0, 1.0],
            load_average_after=[5.4, 1.0, 1.0],
        )
    header, rule, row = page.table(str(tmp_path), [pair])
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert header.count("|") == rule.count("|") == row.count("|")
    assert cells[:6] == [
        "CartPole-v1",
        "ppo",
        "0, 1, 2",
        "3,000 steps",
        "400.0 ± 100.0 (300.0 to 500.0)",
        "475: 2/3, -",
    ]
    assert cells[6] == "- (4 s)"
    assert cells[7] == "2-core VM, shared: load 2-5"
    assert cells[8].endswith("CartPole-v1-ppo/`")


@pytest.mark.timeout(120)
def test_the_plot_command_draws_every_seed_with_rlrun_plot(tmp_path):
    page = load_script()
    for seed in (0, 1):
        write_curve(tmp_path / "curves" / "CartPole-v1-ppo" / f"seed{seed}", FIXTURE[seed], name=f"ppo seed {seed}")
    (command,) = page.plot_commands(str(tmp_path / "curves"), str(tmp_path / "img"))
    assert command[1:4] == ["-m", "rlrun", "plot"]
    result = page.run_plot(command)
    out = tmp_path / "img" / "cartpole-v1-ppo.png"
    assert out.stat().st_size > 10_000
    assert "ppo seed 0 (1 run), ppo seed 1 (1 run)" in result  # one curve per seed, named by its params.json


def _report_table(report: Path) -> list[tuple[int, float, float]]:
    """(frames, wall minutes, return) rows of a Pong report's table."""
    rows = []
    for line in report.read_text().splitlines():
        match = re.fullmatch(r"\| ([\d.]+)M \| ([\d.]+) \| ([+-]?[\d.]+) \|", line.strip())
        if match:
            rows.append((round(float(match[1]) * 1e6), float(match[2]), float(match[3])))
    return rows


def test_the_machine_column_names_each_seeds_machine_when_they_differ():
    page = load_script()
    same = [dict(seed=1, machine="2-core VM"), dict(seed=2, machine="2-core VM")]
    assert page.machine_of(same) == "2-core VM"
    differ = [dict(seed=1, machine="2-core VM, stopped for an hour"), dict(seed=2, machine="2-core VM, quiet")]
    assert page.machine_of(differ) == "seed 1: 2-core VM, stopped for an hour; seed 2: 2-core VM, quiet"


@pytest.mark.timeout(30)
def test_the_transcribed_pong_curves_are_their_reports_tables():
    page = load_script()
    transcribed = [pair for pair in page.PAIRS.values() if pair.reports]
    assert transcribed
    for pair in transcribed:
        seed_dirs = sorted((Path(page.CURVES) / f"{pair.env}-{pair.algo}").glob("seed*"))
        params = [json.loads((d / "params.json").read_text()) for d in seed_dirs]
        sources = [p["transcribed_from"] for p in params]
        assert sorted(sources) == sorted(pair.reports)  # one seed a report, each report once
        for seed_dir, source, p in zip(seed_dirs, sources, params):
            report_rows = _report_table(ROOT / source)
            assert len(report_rows) >= 5
            curve = page.read_curve(str(seed_dir), pair.x)
            rows = [(int(x), round(wall / 60, 1), ret) for x, wall, ret in curve]
            if p.get("rows") == "every log row":  # the run's own log: the report's table shows some rows, rounded
                shown = [(round(x, -5), wall, round(ret, 1)) for x, wall, ret in rows]
                assert [row for row in shown if row in report_rows] == report_rows
                assert shown[-1] == report_rows[-1]
            else:
                assert rows == report_rows


@pytest.mark.timeout(60)
def test_the_results_page_holds_the_rows_the_committed_curves_give():
    page = load_script()
    text = (ROOT / "docs" / "results.md").read_text()
    for line in page.table():
        assert line in text, f"docs/results.md lacks this row of `python benchmarks/results_page.py table`:\n{line}"
    for command in page.plot_commands():
        image = Path(command[command.index("-o") + 1])
        assert image.is_file(), f"{image} is missing: `python benchmarks/results_page.py plots` draws it"
        assert f"img/results/{image.name}" in text


def write_run_folder(folder: Path, steps: list[int], returns: list[float]) -> None:
    """A run folder as ``rlrun train`` leaves it: progress.csv with the logger's prefixed names, run.json."""
    folder.mkdir(parents=True)
    with open(folder / "progress.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["Diagnostics/CumSteps", "Diagnostics/CumTrainTime", "ReturnAverage", "qLossAverage"])
        for i, (step, ret) in enumerate(zip(steps, returns)):
            writer.writerow([step, 10.0 * i, ret, 0.5])
    (folder / "run.json").write_text(json.dumps({"started": "2026-12-04T20:16:41"}))


@pytest.mark.timeout(30)
def test_a_finished_mujoco_run_becomes_a_curve_and_an_unfinished_one_is_refused(tmp_path):
    page = load_script()
    steps = list(range(0, 100_001, 10_000))
    write_run_folder(tmp_path / "runs" / "done", steps, [float(s) / 100 for s in steps])
    write_run_folder(tmp_path / "runs" / "short", steps[:4], [1.0, 2.0, 3.0, 4.0])
    out = page.import_run("Hopper-v5", "td3", 0, str(tmp_path / "runs" / "done"), "a VM", str(tmp_path / "curves"))
    curve = page.read_curve(out)
    assert curve[0] == (0.0, 0.0, 0.0) and curve[-1] == (100_000.0, 100.0, 1000.0)
    params = json.loads((Path(out) / "params.json").read_text())
    assert params["machine"] == "a VM" and params["started"] == "2026-12-04T20:16:41"
    row = page.summarize({0: curve}, page.PAIRS["Hopper-v5", "td3"].threshold)
    assert row.n_reached == 1 and row.median_steps_to_threshold == 100_000
    with pytest.raises(ValueError, match="30,000 of 100,000 steps; finish it first"):
        page.import_run("Hopper-v5", "td3", 1, str(tmp_path / "runs" / "short"), "a VM", str(tmp_path / "curves"))
    with pytest.raises(ValueError, match="mujoco_seeds.py"):
        page._runner(page.PAIRS["Hopper-v5", "td3"], 0)


@pytest.mark.timeout(30)
def test_the_mujoco_campaign_resumes_unfinished_runs_and_reports_finished_seeds_beside_sb3(tmp_path):
    spec = importlib.util.spec_from_file_location("mujoco_seeds", ROOT / "benchmarks" / "mujoco_seeds.py")
    seeds = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(seeds)
    out = tmp_path / "mujoco"
    fresh = seeds.rlrun_command(out, "td3", "Hopper-v5", 1)
    assert "--resume" not in fresh and fresh[fresh.index("--seed") + 1] == "1"
    assert "algo.batch_size=256" in fresh and "--checkpoint-replay" in fresh  # the zoo's TD3 batch; exact resume
    steps = list(range(0, 100_001, 10_000))
    for seed, final in ((0, 3000.0), (1, 2000.0)):
        write_run_folder(seeds.run_dir(out, "td3", "Hopper-v5", seed), steps, [0.0] * 10 + [final])
    write_run_folder(seeds.run_dir(out, "td3", "Hopper-v5", 2), steps[:3], [0.0, 1.0, 2.0])
    checkpoints = seeds.run_dir(out, "td3", "Hopper-v5", 2) / "checkpoints"
    checkpoints.mkdir()
    (checkpoints / "itr_000019999.ckpt").write_bytes(b"")
    assert seeds.rlrun_command(out, "td3", "Hopper-v5", 2)[3:5] == ["train", "--resume"]
    sb3 = seeds.sb3_path(out, "td3", "Hopper-v5", 0)
    sb3.parent.mkdir(parents=True)
    sb3.write_text(json.dumps({"steps_return_wall": [[50_000, 1000.0, 60.0], [100_000, 2400.0, 120.0]]}))
    lines = seeds.pair_lines(out, "td3", "Hopper-v5")
    assert "| rlrun seed 2 | not finished (20,000 steps) | | |" in lines
    assert "| SB3 seed 0 | 2,400 | 2,400 | 2 min |" in lines
    assert "rlrun median over 2 seed(s): 2,500, mean 2,500 ± 707; at or above SB3's 2,400 (ratio 1.04)." in lines


@pytest.mark.timeout(30)
def test_two_mujoco_streams_split_the_runs_by_seed_and_lock_and_a_dead_streams_lock_is_taken_over(
    tmp_path, monkeypatch
):
    import subprocess
    import sys

    spec = importlib.util.spec_from_file_location("mujoco_seeds", ROOT / "benchmarks" / "mujoco_seeds.py")
    seeds = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(seeds)
    out = tmp_path / "mujoco"
    started: list[tuple[str, str, int]] = []

    def fake_call(command, **kwargs):
        started.append((command[command.index("--algo") + 1], command[command.index("--env") + 1],
                        int(command[command.index("--seed") + 1])))  # fmt: skip
        return 0

    monkeypatch.setattr(seeds.subprocess, "call", fake_call)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        held = seeds.run_dir(out, "sac", "Hopper-v5", 2)
        held.parent.mkdir(parents=True)
        (held.parent / "run_2.lock").write_text(str(other.pid))  # a live stream trains this one
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        stale = seeds.run_dir(out, "td3", "Hopper-v5", 2)
        stale.parent.mkdir(parents=True)
        (stale.parent / "run_2.lock").write_text(str(dead.pid))  # its stream was killed
        assert seeds.run_rlrun(out, (2,)) == 0
    finally:
        other.kill()
        other.wait()
    assert started == [("sac", "HalfCheetah-v5", 2), ("td3", "HalfCheetah-v5", 2), ("td3", "Hopper-v5", 2)]
    assert not (stale.parent / "run_2.lock").exists()  # released after its run
    assert (held.parent / "run_2.lock").read_text() == str(other.pid)  # another stream's lock is left alone
