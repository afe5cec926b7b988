#!/usr/bin/env bash
# AsyncRl with the served (GPU) sampler, and SyncRl over NCCL, on a CUDA machine, in one command.
#
# Steps (each with its own timeout; together under 10 minutes):
#   1. async_dqn_gpu: examples/atari_dqn_async_gpu.py, DQN on Pong with AsyncGpuSampler (rlpyt's 36 envs x 5
#      steps, replay ratio 8) for 30k steps: the sampler process acts for every env on the GPU while this
#      process optimises on it (on another GPU when there are two).
#   2. sync_rl_nccl: examples/sync_rl_nccl.py, A2C on CartPole with SyncRl, one rank per visible GPU over
#      NCCL; it exits 1 unless every rank ends with the same parameters. (NCCL needs a GPU per rank: on
#      a one-GPU machine the run has one rank.)
#   3. async_dqn_speed: benchmarks/async_dqn_speed.py on the machine's cores, sync against async DQN at
#      replay ratio 0.5 (CPU only, to set beside the 2-core figures in docs/async_rl.md).
#
#   bash benchmarks/gpu_async_sync_rl.sh              # on the GPU machine (about 6 minutes)
#   bash benchmarks/gpu_async_sync_rl.sh --dry-run    # anywhere: the same steps on the CPU, tiny (2 gloo ranks)
#
# Gymnasium and ale-py come from .whl/ when it exists (see shared/gpu.md). Output goes to the terminal
# and to $RESULTS/gpu_async_sync_rl_<time>/ (a log per step and summary.txt).
# Exit code: 0 every step ran, 2 a step failed or timed out.
# Environment: PYTHON (default python3), RESULTS (default results), SITE (default /tmp/site).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
NAME=gpu_async_sync_rl
FLAGS="--dry-run"
HELP=2,20
# shellcheck source=benchmarks/gpu_common.sh
. benchmarks/gpu_common.sh "$@"
setup_python

if [ "$DRY_RUN" = 1 ]; then
    ASYNC=(--n_steps 2000 --min_steps_learn 500 --replay_size 5000 --log_interval_steps 1000
        --eval_max_steps 2000 --batch_B 4)
    SYNC=(--cpu --n_ranks 2 --n_steps 2000)
    SPEED=(--n_steps 640 --min_steps_learn 192 --batch_T 8)
else
    ASYNC=(--n_steps 30000 --min_steps_learn 10000 --replay_size 30000 --log_interval_steps 10000
        --eval_max_steps 5000)
    SYNC=(--n_steps 200000)
    SPEED=(--n_steps 20000 --min_steps_learn 4000 --batch_T 8)
fi
cd "$RUN_DIR" || exit 2  # the examples log under ./data
REPO=$OLDPWD
step async_dqn_gpu 240 "$PYTHON" "$REPO/examples/atari_dqn_async_gpu.py" "${ASYNC[@]}"
step sync_rl_nccl 150 "$PYTHON" "$REPO/examples/sync_rl_nccl.py" "${SYNC[@]}"
step async_dqn_speed 180 "$PYTHON" "$REPO/benchmarks/async_dqn_speed.py" --replay_ratio 0.5 "${SPEED[@]}"

say ""
say "=== summary"
for name in async_dqn_gpu sync_rl_nccl async_dqn_speed; do
    log=$RUN_DIR/$name.log
    [ -f "$log" ] || continue
    say "--- $name"
    grep -E "^Devices|^Final|identical|steps/s|async / sync|per batch|Error" "$log" | tail -12 | tee -a "$SUMMARY"
done
finish
