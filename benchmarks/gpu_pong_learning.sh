#!/usr/bin/env bash
# Learning Pong on a CUDA machine with many cores, in one command: PPO, A2C and DQN through `rlrun train`
# (rlpyt's Atari configs), the model on the GPU, CpuSampler (PPO, A2C) or GpuSampler (DQN) with 15 workers.
#
# Goal (issue: benchmarks): PPO on Pong to an average return of +18 within 3 minutes on one H200 and 16
# cores; CleanRL with EnvPool needs about 5 minutes, rl_games about 2. Each run has a step budget and a
# timeout; a run stopped by the timeout (SIGTERM: it checkpoints and exits 143) still has every row it
# logged. The summary gives, per run, the steps and wall time at which the average return first reached
# +18 (benchmarks/curve_summary.py), the best return and the speed. Runs log under $RUN_DIR/<algo>/.
# Evaluation is off (--eval-envs 0): the returns are those of the training episodes, as in the
# published curves it is compared with, and no time goes to evaluation.
#
#   bash benchmarks/gpu_pong_learning.sh              # on the GPU machine (at most about 9 minutes)
#   bash benchmarks/gpu_pong_learning.sh --dry-run    # anywhere: the same runs on the CPU, tiny
#
# Exit code: 0 every run ran and PPO reached +18 within 180 s, 1 it did not, 2 a run failed.
# Environment: PYTHON (default python3), RESULTS (default results), SITE (default /tmp/site).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
NAME=gpu_pong_learning
FLAGS="--dry-run"
HELP=2,16
# shellcheck source=benchmarks/gpu_common.sh
. benchmarks/gpu_common.sh "$@"
setup_python

TARGET=18
SEED=${SEED:-1}  # fixed, so that a rerun repeats the same episodes (the dry run relies on one ending)
if [ "$DRY_RUN" = 1 ]; then
    COMMON=(--env pong --workers 2 --n-envs 4 --eval-envs 0 --no-progress-bar --seed "$SEED")
    PPO=(--sampler cpu --batch-T 16 --steps 1024 --log-interval 512)
    A2C=(--sampler cpu --batch-T 5 --steps 400 --log-interval 200)
    DQN=(--sampler gpu --steps 600 --log-interval 300 --set algo.min_steps_learn=200 --set algo.replay_size=2000)
    TIMEOUTS=(120 120 120)
else
    COMMON=(--env pong --workers 15 --cuda-idx 0 --eval-envs 0 --no-progress-bar --seed "$SEED")
    PPO=(--sampler cpu --n-envs 32 --batch-T 128 --steps 2000000 --log-interval 32768)
    A2C=(--sampler cpu --n-envs 32 --steps 2000000 --log-interval 32000)
    DQN=(--sampler gpu --n-envs 32 --steps 500000 --log-interval 20000)
    TIMEOUTS=(240 150 150)
fi
LOGS=$(cd "$RUN_DIR" && pwd)  # absolute: rlrun train takes an absolute --log-dir as given
step ppo "${TIMEOUTS[0]}" "$PYTHON" -m rlrun train --algo ppo "${COMMON[@]}" "${PPO[@]}" --log-dir "$LOGS/ppo"
step a2c "${TIMEOUTS[1]}" "$PYTHON" -m rlrun train --algo a2c "${COMMON[@]}" "${A2C[@]}" --log-dir "$LOGS/a2c"
step dqn "${TIMEOUTS[2]}" "$PYTHON" -m rlrun train --algo dqn "${COMMON[@]}" "${DQN[@]}" --log-dir "$LOGS/dqn"

say ""
say "=== summary: first log row with an average return of at least $TARGET"
RUNS=()
for algo in ppo a2c dqn; do
    for run in "$RUN_DIR/$algo" "$RUN_DIR/$algo"/run_*; do
        [ -f "$run/progress.csv" ] && RUNS+=("$run")
    done
done
if [ "${#RUNS[@]}" -gt 0 ]; then
    "$PYTHON" benchmarks/curve_summary.py "${RUNS[@]}" --target "$TARGET" | tee -a "$SUMMARY"
fi
if [ "$DRY_RUN" = 1 ]; then
    UNCHECKED="the +$TARGET target (a dry run of a few hundred steps)"
elif ! grep -E "/ppo.*reached $TARGET at [0-9,]+ steps, ([0-9]|[0-9][0-9]|1[0-7][0-9]|180) s" "$SUMMARY" >/dev/null; then
    MISSED+=("ppo (no +$TARGET within 180 s)")
fi
finish
