"""Learning Pong on the CPU: A2C with rlpyt's example_3 settings (or PPO), its score against frames and wall time.

    python benchmarks/learning_pong.py                     # A2C, 10M frames (2.5M agent steps): about an hour on 2 cores
    python benchmarks/learning_pong.py --algo ppo          # CleanRL's Atari PPO settings, same budget
    python benchmarks/learning_pong.py --report RUN_DIR    # the summary and plot of a finished or stopped run
    python benchmarks/learning_pong.py --frames 4000 --log-interval 400 --out-dir /tmp/pong   # a smoke run

This checks the whole Atari pipeline on any machine, GPU or not: frames, frame stacks, life losses, reward
clipping and the algorithm. The run is an ordinary ``rlrun train`` run (CpuSampler, one worker per core, the
model on the CPU with a torch thread per core, no evaluation: the returns are those of the training episodes,
as in the published curves), so it checkpoints after every log row and a stopped run continues with
``rlrun train --resume RUN_DIR``.

- A2C: 16 envs x 5 steps, Adam at 1e-3, value loss 0.5, entropy 0.01, gradient norm clipped at 1, decorrelation
  up to 400 steps: rlpyt's example_3 (``A2C()``'s defaults).
- A2C with OpenAI Baselines' settings (``--algo a2c-baselines``): 16 envs x 5 steps, TensorFlow's RMSprop
  (``RMSpropTF``: alpha 0.99, eps 1e-5) at 7e-4, value loss 1.0 (Baselines' ``vf_coef=0.5`` weighs a mean
  squared error, rlrun half the squared error), entropy 0.01, gradient norm clipped at 0.5, orthogonal
  initialisation; on rlrun's small network (Baselines: the Nature network, and a learning rate decaying to 0
  over 40M frames). torch's own RMSprop, or example_3's Adam at 1e-3, silence the small network's first
  layer within the first million frames, after which A2C cannot learn (``docs/performance.md``).
- PPO: CleanRL's ``ppo_atari.py`` settings where rlrun's keywords reach them: 8 envs x 128 steps, 4 epochs of
  4 minibatches, Adam (eps 1e-5) at 2.5e-4 decaying linearly to 0 at the end of the run's budget, ratio clip
  0.1 held fixed, GAE 0.95, value loss 0.5, entropy 0.01, gradient norm clipped at 0.5, normalised
  advantages; on rlrun's small A3C network (CleanRL: the Nature network, 84x84 frames, a clipped value loss,
  advantages normalised per minibatch rather than per batch).
- PPO with the rest of CleanRL's run (``--algo ppo-cleanrl``): the same, on the Nature network (32/64/64 channels,
  512 units) with orthogonal initialisation, advantages normalised per minibatch, the value loss clipped at 0.1
  and FIRE after each reset, and CleanRL's learning-rate schedule: linear to 0 over 40M frames, of which the
  run trains the first 10M, and CleanRL's 84x84 frames (``AtariEnv(frame_shape=(84, 84))``).
- PPO for a GPU machine with 16 cores (``--algo ppo-pong-gpu``, run by ``benchmarks/gpu_pong_ppo.sh``): ppo-cleanrl
  with the update of CleanRL's EnvPool sweep (ratio and value clip 0.2, 8 minibatches, 3 epochs) on 60 envs x 32
  steps, and rlpyt's 104x80 frames. ``--print-flags`` prints a preset's options for a script.

The report (``<out-dir>/<date>-<machine>-pong-<algo>.md`` and ``.png``) gives, at each log row, the average
return of the last 100 training episodes (``MinibatchRl``'s ``log_traj_window``) against frames (agent steps
x 4, the frame skip) and wall time, the first log row at or above ``--target`` (+15), and published scores at
about the same frame counts beside it. The window smooths the curve and makes it lag: once Pong's episodes
last 2,500-3,500 agent steps, 100 of them span 1.0-1.4M frames of 8 envs' play.
Exit code 0: the target was reached; 1: it was not; 2: the run failed or left no progress.csv.
"""

from __future__ import annotations

import argparse
import datetime
import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from curve_summary import read_curve  # noqa: E402
from run_all import machine_label  # noqa: E402

FRAME_SKIP = 4  # AtariEnv's default: one agent step is 4 emulator frames
TARGET = 15.0
STRETCH = 18.0  # also reported: the mark of the GPU scripts (rl_games reaches +20 in about 2 minutes)

PPO_FLAGS = [  # CleanRL's ppo_atari.py settings, on rlrun's default (small A3C) network
    "--n-envs", "8", "--batch-T", "128",
    "--set", "algo.learning_rate=2.5e-4", "--set", "algo.ratio_clip=0.1", "--set", "algo.gae_lambda=0.95",
    "--set", "algo.value_loss_coeff=0.5", "--set", "algo.clip_grad_norm=0.5",
    "--set", "algo.normalize_advantage=True", "--set", "algo.epochs=4", "--set", "algo.minibatches=4",
    "--set", "algo.anneal_ratio_clip=False", "--set", "optim.eps=1e-5",
]  # fmt: skip

ALGO_FLAGS = {
    "a2c": [
        "--n-envs", "16", "--batch-T", "5",
        "--set", "algo.learning_rate=1e-3", "--set", "sampler.max_decorrelation_steps=400",
    ],
    "a2c-baselines": [  # OpenAI Baselines' A2C settings (its vf_coef 0.5 on a mean squared error), small network
        "--n-envs", "16", "--batch-T", "5", "--set", "model.orthogonal_init=True",
        "--set", "algo.OptimCls='RMSpropTF'", "--set", "optim.alpha=0.99", "--set", "optim.eps=1e-5",
        "--set", "algo.learning_rate=7e-4", "--set", "algo.value_loss_coeff=1.0", "--set", "algo.clip_grad_norm=0.5",
        "--set", "sampler.max_decorrelation_steps=400",
    ],
    "ppo": PPO_FLAGS,
    "ppo-cleanrl": [  # the same, and what else of CleanRL's run rlrun reaches: network, init, clipping, normalisation
        *PPO_FLAGS, "--set", "algo.normalize_advantage=False", "--set", "algo.minibatch_advantage_norm=True",
        "--set", "algo.value_clip=0.1", "--set", "env.fire_on_reset=True", "--set", "model.orthogonal_init=True",
        "--set", "model.channels=(32,64,64)", "--set", "model.kernel_sizes=(8,4,3)", "--set", "model.strides=(4,2,1)",
        "--set", "model.paddings=(0,0,0)", "--set", "model.fc_sizes=512",
        # CleanRL's learning rate decays over its total_timesteps, 10M agent steps (40M frames); the published
        # curve is read at 10M frames, a quarter of the way down. (Runs before 2026-12-03 decayed it over the
        # run's own frames, so at 10M frames their rate had reached 0.)
        "--set", "algo.lr_schedule_steps=10000000",
        # CleanRL's 84x84 frames: the whole screen shrunk by area averaging. (Runs before 2026-12-03 evening
        # had rlpyt's 104x80, every other row and column.)
        "--set", "env.frame_shape=(84,84)",
    ],
}  # fmt: skip
# PPO for the GPU machine (one H200, 16 cores; benchmarks/gpu_pong_ppo.sh): ppo-cleanrl's algorithm and network
# with the batch and the update of CleanRL's EnvPool sweep, which solved Pong in about 5 minutes (16 envs x 128
# steps, 8 minibatches, 3 epochs, clip 0.2: cleanrl docs/get-started/examples.md, cleanrl PR #100), laid out for
# 15 workers: 60 envs (4 per worker, where GpuSampler was measured at 13.3k steps/s) x 32 steps, so that a batch
# stays at about 2k steps (1,920) and the policy changes as often per frame as in that sweep. The value clip
# follows the ratio clip, as CleanRL's clip_coef sets both. Frames stay rlpyt's 104x80: the +19.9 run at 10M
# frames (benchmarks/results/2026-12-03-2cpu-vm-pong-ppo-cleanrl-schedule.md) had them, and they step about 12%
# faster than 84x84 (shared/facts.md).
ALGO_FLAGS["ppo-pong-gpu"] = [
    *ALGO_FLAGS["ppo-cleanrl"], "--n-envs", "60", "--batch-T", "32",
    "--set", "algo.ratio_clip=0.2", "--set", "algo.value_clip=0.2",
    "--set", "algo.epochs=3", "--set", "algo.minibatches=8", "--set", "env.frame_shape=None",
]  # fmt: skip

# Published Pong scores at up to 10M frames, for the report: (label, frames, average return). Their x-axes
# count agent steps ("10M timesteps" = 40M frames); the frames here are those steps x 4.
# - OpenAI Baselines' A2C (benchmarks_atari10M.htm, its mean over 6 runs, read from the plot's SVG path data:
#   exact plot values): RMSprop at 7e-4, 5 steps per env, one env per CPU of their machine. It crosses +15
#   at about 21M frames and reaches +18.5 at 40M.
# - CleanRL's ppo_atari.py (docs/rl-algorithms/ppo.md, PongNoFrameskip-v4.png, read by eye, +-2): 8 envs x
#   128 steps, Adam at 2.5e-4, Nature CNN; 20.36 +- 0.20 at 40M frames over 3 seeds.
PUBLISHED = {
    "a2c": [
        ("Baselines A2C", 4e6, -20.1),
        ("Baselines A2C", 6e6, -19.0),
        ("Baselines A2C", 10e6, -12.2),
    ],
    "ppo": [
        ("CleanRL PPO (read by eye)", 4e6, -9.0),
        ("CleanRL PPO (read by eye)", 6e6, 5.0),
        ("CleanRL PPO (read by eye)", 10e6, 16.0),
    ],
}
PUBLISHED["a2c-baselines"] = PUBLISHED["a2c"]
PUBLISHED["ppo-cleanrl"] = PUBLISHED["ppo-pong-gpu"] = PUBLISHED["ppo"]


def train(args: argparse.Namespace) -> tuple[int, Path]:
    run_root = Path(args.out_dir).resolve() / f"pong_{args.algo}"
    command = [
        sys.executable, "-m", "rlrun", "train", "--algo", args.algo.split("-")[0], "--env", "pong",
        "--sampler", "cpu", "--workers", str(args.workers), "--torch-threads", str(args.torch_threads),
        "--steps", str(args.frames // FRAME_SKIP), "--log-interval", str(args.log_interval),
        "--eval-envs", "0", "--no-progress-bar", "--seed", str(args.seed), "--log-dir", str(run_root),
        *ALGO_FLAGS[args.algo],
    ]  # fmt: skip
    print("$", " ".join(command[1:]), flush=True)
    code = subprocess.call(command, cwd=ROOT)
    return code, run_root / "run_0"


def curve(run_dir: Path) -> list[tuple[float, float, float]]:
    """``(frames, wall seconds, average return)`` of each log row with a return."""
    return [(s * FRAME_SKIP, t, r) for s, t, r in read_curve(str(run_dir))[0]]


def summary(rows: list[tuple[float, float, float]], target: float) -> list[str]:
    """The first rows at ``target`` and at ``STRETCH`` (+18, the GPU scripts' mark), the best, the last."""
    lines = []
    for mark in sorted({target, max(target, STRETCH)}):
        hit = next(((f, t) for f, t, r in rows if r >= mark), None)
        reached = f"reached {mark:+g} at {hit[0] / 1e6:.2f}M frames, {hit[1] / 60:.1f} min" if hit else ""
        lines.append(reached or f"{mark:+g} not reached")
    best = max(rows, key=lambda row: row[2])
    frames, seconds = rows[-1][0], rows[-1][1]
    lines += [
        f"best {best[2]:+.1f} at {best[0] / 1e6:.2f}M frames; last {rows[-1][2]:+.1f}",
        f"{frames / 1e6:.2f}M frames in {seconds / 60:.1f} min ({frames / FRAME_SKIP / max(seconds, 1e-9):,.0f} "
        "agent steps/s, training and logging included)",
    ]
    return lines


def milestones(rows: list[tuple[float, float, float]], every: float = 1e6) -> list[tuple[float, float, float]]:
    """The first row at or past each multiple of ``every`` frames."""
    picked, next_mark = [], every
    for row in rows:
        if row[0] >= next_mark:
            picked.append(row)
            while next_mark <= row[0]:
                next_mark += every
    return picked


def write_plot(rows: list[tuple[float, float, float]], algo: str, target: float, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (by_frames, by_time) = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    by_frames.plot([r[0] / 1e6 for r in rows], [r[2] for r in rows], label=f"rlrun {algo.upper()}")
    for label in dict.fromkeys(label for label, _f, _s in PUBLISHED[algo]):
        points = [(f / 1e6, s) for name, f, s in PUBLISHED[algo] if name == label]
        by_frames.plot(*zip(*points), marker="o", linestyle=":", label=label)
    by_time.plot([r[1] / 60 for r in rows], [r[2] for r in rows])
    for ax in (by_frames, by_time):
        ax.axhline(target, color="gray", linestyle="--", linewidth=1)
        ax.grid(alpha=0.3)
    by_frames.set_xlabel("frames (millions)")
    by_time.set_xlabel("wall time (minutes)")
    by_frames.set_ylabel("average return of training episodes")
    by_frames.legend(fontsize=7, loc="lower right")
    fig.suptitle(f"Pong, {algo.upper()} on the CPU ({os.cpu_count()} cores); dashed: {target:+g}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(run_dir: Path, algo: str, target: float, out_dir: Path, command: str) -> tuple[Path, bool]:
    rows = curve(run_dir)
    machine = machine_label(os.cpu_count() or 1, socket.gethostname())
    path = out_dir / f"{datetime.date.today().isoformat()}-{machine}-pong-{algo}.md"
    plot = path.with_suffix(".png")
    has_plot = bool(rows) and write_plot(rows, algo, target, plot)
    lines = [f"# Pong, {algo.upper()} on the CPU: score against frames and wall time", "", f"`{command}`", ""]
    lines += [f"Run folder: `{run_dir}`; {os.cpu_count()} cores.", ""]
    if not rows:
        lines += ["No episode ended in any logged interval yet."]
    else:
        lines += ["- " + line for line in summary(rows, target)] + [""]
        lines += ["| frames | wall time (min) | average return |", "|---|---|---|"]
        lines += [f"| {f / 1e6:.1f}M | {t / 60:.1f} | {r:+.1f} |" for f, t, r in milestones(rows)]
        if PUBLISHED[algo]:
            lines += ["", "Published, at about the same frames:", ""]
            lines += [
                f"- {label}: {score:+.1f} at {frames / 1e6:.0f}M frames" for label, frames, score in PUBLISHED[algo]
            ]
        if has_plot:
            lines += ["", f"![Pong {algo}]({plot.name})"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reached = any(r >= target for _f, _t, r in rows)
    return path, reached


def algo_of_run(run_dir: Path) -> str | None:
    """The preset a run folder was trained with, from the name :func:`train` gives its parent (``pong_ALGO``):
    a report titled and compared by another preset's figures would mislead."""
    prefix, _, algo = run_dir.resolve().parent.name.partition("_")
    return algo if prefix == "pong" and algo in ALGO_FLAGS else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--algo",
        choices=sorted(ALGO_FLAGS),
        default=None,
        help="the preset (default: a2c; with --report, the one the run folder was made with, pong_ALGO/run_N)",
    )
    parser.add_argument("--frames", type=int, default=10_000_000, help="emulator frames (agent steps x 4)")
    parser.add_argument("--log-interval", type=int, default=50_000, help="agent steps between log rows")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=os.cpu_count() or 1,
        help="the training process's torch threads (default: every CPU, as the workers wait while it trains)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", type=float, default=TARGET)
    parser.add_argument("--out-dir", default=str(ROOT / "benchmarks" / "results"))
    parser.add_argument("--report", metavar="RUN_DIR", help="only write the report of this run folder")
    parser.add_argument(
        "--print-flags",
        action="store_true",
        help="only print the `rlrun train` options of --algo's preset, one per line (for scripts: gpu_pong_ppo.sh)",
    )
    args = parser.parse_args(argv)
    if args.algo is None:
        args.algo = (args.report and algo_of_run(Path(args.report))) or "a2c"
    if args.print_flags:
        print("\n".join(ALGO_FLAGS[args.algo]))
        return 0
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.report:
        run_dir, code = Path(args.report), 0
        command = f"python benchmarks/learning_pong.py --algo {args.algo} --report {args.report}"
    else:
        code, run_dir = train(args)
        command = "python benchmarks/learning_pong.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if not (run_dir / "progress.csv").exists():
        print(f"{run_dir}: no progress.csv (rlrun train exited {code})")
        return 2
    path, reached = write_report(run_dir, args.algo, args.target, out_dir, command.strip())
    print(path.read_text(encoding="utf-8"))
    if code != 0:
        print(f"rlrun train exited {code}; the report covers the rows it logged")
        return 2
    return 0 if reached else 1


if __name__ == "__main__":
    sys.exit(main())
