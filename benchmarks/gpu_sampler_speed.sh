#!/usr/bin/env bash
# The served samplers against CpuSampler on a CUDA machine with 16 cores, in one command.
#
# Goal: GpuSampler and AlternatingSampler each at >= 2x CpuSampler, i.e. >= 0.6 of the env-only ceiling
# (15 cores / env step time; the 16th core is the master's). It runs benchmarks/sampler_speed.py twice:
#
#   1. --device cuda --batch-B 60 --workers 15 (the goal, checked with --check): GpuSampler and
#      CpuSampler get 15 workers of 4 envs each, the alternating samplers 30 workers (two per core,
#      one of each group) of 2 envs each. B=60 rather than 64 splits evenly in both layouts (64 would
#      leave some workers one env more, and the slowest worker sets every step), and is the batch
#      CpuSampler was measured with on that machine before (13.1k steps/s, docs in shared/gpu.md).
#   2. --batch-B 120, 3 rounds: twice the envs per step. A GPU call costs about the same for 60 and 120
#      observations, so this shows how much of any gap is the per-step call's latency.
#
# With no registry there, Gymnasium and ale-py come as wheels in .whl/ (see shared/gpu.md); when .whl/
# exists they are installed into $SITE (default /tmp/site) first. Every step has its own timeout, and
# the timeouts add up to under 10 minutes. Output goes to the terminal and to
# $RESULTS/gpu_sampler_speed_<time>/ (one log per step, and summary.txt).
#
#   bash benchmarks/gpu_sampler_speed.sh                      # on the GPU machine (about 3 minutes)
#   RESULTS=/some/dir bash benchmarks/gpu_sampler_speed.sh    # results elsewhere than ./results
#   bash benchmarks/gpu_sampler_speed.sh --dry-run            # anywhere: the same steps on the CPU, tiny
#   bash benchmarks/gpu_sampler_speed.sh --scaling            # instead: CpuSampler and GpuSampler at 1, 2,
#                                                             # 4, 8 and 15 workers of 4 envs (about 5 minutes)
#
# Exit code: 0 every target met, 1 a target missed (the runs completed), 2 a step failed or timed out.
# Environment: PYTHON (default python3), RESULTS (default results), SITE (default /tmp/site).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
NAME=gpu_sampler_speed
FLAGS="--dry-run --scaling"
HELP=2,25
# shellcheck source=benchmarks/gpu_common.sh
. benchmarks/gpu_common.sh "$@"
setup_python

if [ "$DRY_RUN" = 1 ]; then
    # The same steps on the CPU with tiny settings, to show the script works before GPU time is spent.
    DEVICE=cpu
    MAIN=(--batch-B 8 --workers 2 --seconds 0.5 --repeats 2 --warmup 0.2 --decorrelation-steps 10)
    LARGE=(--batch-B 16 --workers 2 --seconds 0.5 --repeats 1 --warmup 0.2 --decorrelation-steps 10)
else
    DEVICE=cuda
    MAIN=(--batch-B 60 --workers 15)
    LARGE=(--batch-B 120 --workers 15 --repeats 3)
fi
METHODS=serial,cpu,gpu,alternating,alternating_nooverlap,gym_async

if [ "$SCALING" = 1 ]; then
    # Steps per second, share of the ceiling and cores used as workers are added; each run prints its table.
    if [ "$DRY_RUN" = 1 ]; then WORKERS=(1 2); ROUNDS=(--seconds 0.5 --repeats 1 --warmup 0.2 --decorrelation-steps 10)
    else WORKERS=(1 2 4 8 15); ROUNDS=(--seconds 2 --repeats 2); fi
    for w in "${WORKERS[@]}"; do
        step "scaling_w$w" 90 "$PYTHON" benchmarks/sampler_speed.py --device "$DEVICE" --workers "$w" \
            --batch-B $((4 * w)) --only cpu,gpu "${ROUNDS[@]}"
    done
    say ""
    say "=== summary: steps/s and share of the ceiling per worker count"
    for w in "${WORKERS[@]}"; do
        log=$RUN_DIR/scaling_w$w.log
        [ -f "$log" ] || continue
        say "--- $w workers"
        grep -E "^rlrun (CpuSampler|GpuSampler)|^ceiling|CpuSampler / ceiling" "$log" | tee -a "$SUMMARY"
    done
    say ""
    say "=== the cost model's prediction for this machine (rlrun.samplers.auto, docs/performance.md), to set beside the above"
    "$PYTHON" -m rlrun.samplers.auto.project --kinds gpu,cpu --workers "$(IFS=,; echo "${WORKERS[*]}")" 2>&1 | tee -a "$SUMMARY"
    finish
fi

step main_b60 270 "$PYTHON" benchmarks/sampler_speed.py --device "$DEVICE" "${MAIN[@]}" \
    --only "$METHODS" --check
step large_b120 150 "$PYTHON" benchmarks/sampler_speed.py --device "$DEVICE" "${LARGE[@]}" \
    --only cpu,gpu,alternating

say ""
say "=== summary (the tables and ratios of each run)"
for log in "$RUN_DIR"/main_b60.log "$RUN_DIR"/large_b120.log; do
    [ -f "$log" ] || continue
    say "--- $(basename "$log" .log)"
    # From the table header to the end: the table, the ceilings and every ratio with its verdict.
    sed -n '/^ceiling:/,$p' "$log" | tee -a "$SUMMARY"
done
finish
