#!/usr/bin/env bash
# A fresh clone's `make test`, N times in a row, with a CPU hog running beside it (issue 31: the suite
# must not depend on timing). Clones the current checkout's HEAD into a temporary folder, starts one
# busy loop, runs `make test` N times (the first run also creates the clone's venv) and writes one line
# per run to OUT/summary.txt (exit code, seconds, pytest's last line) and each run's output beside it.
#   scripts/suite_under_hog.sh [N=20] [OUT=/tmp/suite-under-hog]
# Exit status: the number of failed runs (0: all passed).
set -u
n=${1:-20}
out=${2:-/tmp/suite-under-hog}
src=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
mkdir -p "$out"
git clone -q "$src" "$work/repo" && cd "$work/repo" || exit 1
echo "commit $(git rev-parse --short HEAD) start $(date -u +%FT%TZ) runs $n" >> "$out/summary.txt"
( while :; do :; done ) &
hog=$!
trap 'kill $hog 2>/dev/null; rm -rf "$work"' EXIT
failed=0
for i in $(seq 1 "$n"); do
  s=$(date +%s)
  make test > "$out/run$i.log" 2>&1
  rc=$?
  [ "$rc" -ne 0 ] && failed=$((failed + 1))
  echo "run $i rc=$rc $(( $(date +%s) - s ))s $(tail -1 "$out/run$i.log")" >> "$out/summary.txt"
done
echo "end $(date -u +%FT%TZ) failed $failed of $n" >> "$out/summary.txt"
exit "$failed"
