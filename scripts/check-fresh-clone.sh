#!/usr/bin/env bash
# Clones the repository into a fresh folder and runs `make test` and `make run` there, as a new user would.
#
#   scripts/check-fresh-clone.sh [REPO] [BRANCH]     (defaults: /work/main, its checked-out branch)
#
# Set KEEP=1 to keep the clone. The clone sits in /tmp, so ../shared is absent there and
# `make conformance` would only say it is skipped; it is not run here.
set -euo pipefail

repo=${1:-/work/main}
branch=${2:-}
dir=$(mktemp -d /tmp/ag-fresh-XXXX)
cleanup() { if [ "${KEEP:-0}" = 1 ]; then echo "kept $dir"; else rm -rf "$dir"; fi; }
trap cleanup EXIT

echo "== cloning $repo${branch:+ ($branch)} into $dir"
git clone --quiet ${branch:+--branch "$branch"} "$repo" "$dir"
cd "$dir"
echo "== at $(git log -1 --format='%h %s')"

status=0
run_step() {
  local name=$1; shift
  local log="$dir.$name.log"
  local t0=$(date +%s)
  echo "== make $name (log: $log)"
  if "$@" >"$log" 2>&1 </dev/null; then
    echo "   PASS make $name ($(( $(date +%s) - t0 )) s)"
    tail -n 5 "$log" | sed 's/^/   | /'
  else
    echo "   FAIL make $name ($(( $(date +%s) - t0 )) s); last lines:"
    tail -n 40 "$log" | sed 's/^/   | /'
    status=1
  fi
}

run_step test make test
run_step run make run
if [ -s demo.wav ]; then
  echo "== demo.wav: $(stat -c %s demo.wav) bytes"
  python3 - <<'PY' || true
import soundfile as sf, numpy as np
d, sr = sf.read("demo.wav", always_2d=True)
print(f"== demo.wav: {d.shape[0]} frames x {d.shape[1]} channel(s) at {sr} Hz, "
      f"{d.shape[0] / sr:.2f} s, peak {np.abs(d).max():.4f}, rms {np.sqrt((d * d).mean()):.4f}")
PY
else
  echo "== demo.wav was not written"
  status=1
fi

if [ $status = 0 ]; then echo "== fresh clone: OK"; else echo "== fresh clone: FAILED"; fi
exit $status
