# Shared by the one-command GPU scripts (gpu_sampler_speed.sh, gpu_async_sync_rl.sh, gpu_pong_learning.sh).
# From the repository root, source it with the script's arguments after setting NAME (the script's name),
# FLAGS (the options it takes, e.g. "--dry-run --scaling") and HELP (its help lines for sed, e.g. 2,20).
# Each flag given sets its variable to 1 (--dry-run: DRY_RUN, --scaling: SCALING; 0 when absent); --help
# prints the help lines; anything else exits 2. It sets up:
#   - $RUN_DIR: $RESULTS/<NAME>_<time>[_dry_run]/, with one log per step and summary.txt;
#   - say: print a line and append it to the summary;
#   - step NAME SECONDS CMD...: run CMD under its own timeout, its output to the terminal and to
#     $RUN_DIR/NAME.log, recording a crash or timeout in BROKEN and a missed target (a line starting
#     "FAIL: missed" with exit code 1) in MISSED;
#   - setup_python: install .whl/ into $SITE when there (the GPU machine has no registry), print the
#     versions, the CPUs and the GPU; exits 2 if the imports fail;
#   - finish: the final RESULT line and the exit code (0 all ran and met, 1 a target missed, 2 a step broke);
#     a script that left a target unchecked (a dry run too short for it) says which in UNCHECKED.
# Environment: PYTHON (default python3), RESULTS (default results), SITE (default /tmp/site), WHEELS (default .whl).

for flag in $FLAGS; do
    var=${flag#--}
    printf -v "${var//-/_}" 0
done
for arg in "$@"; do
    case " $FLAGS " in
        *" $arg "*) var=${arg#--}; printf -v "${var//-/_}" 1; continue ;;
    esac
    case "$arg" in
        -h | --help) sed -n "${HELP}p" "$0"; exit 0 ;;
        *) echo "unknown argument $arg (use ${FLAGS// /, } or --help)" >&2; exit 2 ;;
    esac
done
DRY_RUN=${dry_run:-0}
SCALING=${scaling:-0}

PYTHON=${PYTHON:-python3}
SITE=${SITE:-/tmp/site}
RUN_DIR=${RESULTS:-results}/${NAME}_$(date +%Y%m%d_%H%M%S)$([ "$DRY_RUN" = 1 ] && echo _dry_run)
mkdir -p "$RUN_DIR" || exit 2
SUMMARY=$RUN_DIR/summary.txt
BROKEN=()  # steps that crashed or timed out
MISSED=()  # runs that completed but missed a target

say() { echo "$*" | tee -a "$SUMMARY"; }

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

setup_python() {
    say "$NAME $(date -Is) on $(hostname), $(nproc) CPUs, git $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    say "results in $RUN_DIR"
    local wheels=${WHEELS:-.whl}  # the tests point it at an empty folder: this checkout's .whl/ is the GPU machine's Python's
    if [ -d "$wheels" ] && compgen -G "$wheels/*.whl" >/dev/null; then
        step install_wheels 90 "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
            --target "$SITE" "$wheels"/*.whl || { say "cannot install the wheels in $wheels/"; exit 2; }
        export PYTHONPATH=$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}
    else
        say "no $wheels/ here: gymnasium and ale-py must be importable already"
        export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
    fi
    export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
    step versions 45 "$PYTHON" -c "
import os, sys, torch, numpy, gymnasium, ale_py, psutil
print('python', sys.version.split()[0], 'torch', torch.__version__, 'numpy', numpy.__version__,
      'gymnasium', gymnasium.__version__, 'ale_py', ale_py.__version__)
print('cpus', os.cpu_count(), 'usable', len(os.sched_getaffinity(0)), 'load', os.getloadavg())
print('cuda', torch.cuda.is_available(), torch.cuda.device_count(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')
" || { say "the imports fail: nothing to measure"; exit 2; }
    if command -v nvidia-smi >/dev/null; then
        step nvidia_smi 20 nvidia-smi --query-gpu=name,memory.used,memory.total,utilization.gpu --format=csv
    fi
}

finish() {
    say ""
    if [ "${#BROKEN[@]}" -gt 0 ]; then
        say "RESULT: steps failed or timed out: ${BROKEN[*]}${MISSED:+; targets missed in: ${MISSED[*]}}"
        exit 2
    fi
    if [ "${#MISSED[@]}" -gt 0 ]; then
        say "RESULT: every step ran; targets missed in: ${MISSED[*]} (see the MISSED lines above)"
        exit 1
    fi
    if [ -n "${UNCHECKED:-}" ]; then
        say "RESULT: every step ran; not checked: $UNCHECKED"
    else
        say "RESULT: every step ran and every target was met"
    fi
    exit 0
}
