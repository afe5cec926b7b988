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
#
# Exit code: 0 every target met, 1 a target missed (the runs completed), 2 a step failed or timed out.
# Environment: PYTHON (default python3), RESULTS (default results), SITE (default /tmp/site).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
DRY_RUN=0
for arg in "$@"; do
    case "$arg" in
        --dry-run) DRY_RUN=1 ;;
        -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
        *) echo "unknown argument $arg (use --dry-run or --help)" >&2; exit 2 ;;
    esac
done
PYTHON=${PYTHON:-python3}
SITE=${SITE:-/tmp/site}
STAMP=$(date +%Y%m%d_%H%M%S)
RUN_DIR=${RESULTS:-results}/gpu_sampler_speed_${STAMP}$([ "$DRY_RUN" = 1 ] && echo _dry_run)
mkdir -p "$RUN_DIR" || exit 2
SUMMARY=$RUN_DIR/summary.txt
BROKEN=()  # steps that crashed or timed out
MISSED=()  # benchmark runs that completed but missed a target (sampler_speed.py --check exits 1)

say() { echo "$*" | tee -a "$SUMMARY"; }

# step NAME SECONDS CMD...: run CMD under its own timeout, its output to the terminal and to $RUN_DIR/NAME.log.
step() {
    local name=$1 seconds=$2
    shift 2
    say ""
    say "=== $name (timeout ${seconds}s): $*"
    timeout --kill-after=10 "$seconds" "$@" 2>&1 | tee "$RUN_DIR/$name.log"
    local rc=${PIPESTATUS[0]}
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        say "=== $name: TIMED OUT after ${seconds}s"
        BROKEN+=("$name (timed out)")
    elif [ "$rc" = 1 ] && grep -q "^FAIL: missed" "$RUN_DIR/$name.log"; then
        say "=== $name: completed, a target missed ($(grep "^FAIL: missed" "$RUN_DIR/$name.log"))"
        MISSED+=("$name")
    elif [ "$rc" != 0 ]; then
        say "=== $name: FAILED with exit code $rc"
        BROKEN+=("$name (exit $rc)")
    else
        say "=== $name: ok"
    fi
    return "$rc"
}

say "gpu_sampler_speed $(date -Is) on $(hostname), $(nproc) CPUs, git $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
say "results in $RUN_DIR"

if [ -d .whl ] && compgen -G ".whl/*.whl" >/dev/null; then
    step install_wheels 90 "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --target "$SITE" .whl/*.whl || { say "cannot install the wheels in .whl/"; exit 2; }
    export PYTHONPATH=$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}
else
    say "no .whl/ here: gymnasium and ale-py must be importable already"
    export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1

step versions 45 "$PYTHON" -c "
import os, sys, torch, numpy, gymnasium, ale_py, psutil
print('python', sys.version.split()[0], 'torch', torch.__version__, 'numpy', numpy.__version__,
      'gymnasium', gymnasium.__version__, 'ale_py', ale_py.__version__)
print('cpus', os.cpu_count(), 'usable', len(os.sched_getaffinity(0)), 'load', os.getloadavg())
print('cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')
" || { say "the imports fail: nothing to measure"; exit 2; }
if command -v nvidia-smi >/dev/null; then
    step nvidia_smi 20 nvidia-smi --query-gpu=name,memory.used,memory.total,utilization.gpu --format=csv
fi

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
say ""
if [ "${#BROKEN[@]}" -gt 0 ]; then
    say "RESULT: steps failed or timed out: ${BROKEN[*]}${MISSED:+; targets missed in: ${MISSED[*]}}"
    exit 2
fi
if [ "${#MISSED[@]}" -gt 0 ]; then
    say "RESULT: every step ran; targets missed in: ${MISSED[*]} (see the MISSED lines above)"
    exit 1
fi
say "RESULT: every step ran and every target was met"
