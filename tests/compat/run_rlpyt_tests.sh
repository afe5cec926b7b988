#!/usr/bin/env bash
# Run rlpyt's own test files against rlrun: copy them out of an rlpyt checkout into a temporary folder,
# replace `rlpyt` by `rlrun` (the migration guide's one step), and run them with pytest there.
# They are not copied into this repository. rlpyt's test_gym_wrapper.py imports the old `gym` package
# for its spaces; it is installed into a throwaway folder on the path, never into the environment.
#   usage: bash tests/compat/run_rlpyt_tests.sh RLPYT_CHECKOUT [pytest args...]
set -euo pipefail
src="${1:?give the path of an rlpyt checkout (the folder holding tests/ and rlpyt/)}"
shift
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tests" "$work/gym"
for f in test_gym_wrapper.py test_rlpyt.py test_serial_sampler.py; do
  sed 's/\brlpyt\b/rlrun/g' "$src/tests/$f" > "$work/tests/$f"
done
python -m pip install -q --no-deps --target "$work/gym" "gym==0.26.2" gym-notices cloudpickle >/dev/null
cd "$work"
PYTHONPATH="$work/gym${PYTHONPATH:+:$PYTHONPATH}" python -m pytest -q -p no:cacheprovider -o addopts="" tests "$@"
