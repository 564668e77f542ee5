#!/usr/bin/env bash
# DSP and analyze benchmarks: the Rust DSP bench, then `rxnode analyze` against the
# typical numpy Welch code on the same 32 Mi-sample cf32 file, in the same run.
# usage: scripts/bench.sh [SAMPLES]   (needs python3 with numpy: pip install numpy)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-33554432}"
TARGET="${CARGO_TARGET_DIR:-target}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
FILE="$WORK/bench.cf32"

echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
cargo build --release --locked -p rxnode >/dev/null 2>&1 || cargo build --release -p rxnode
python3 scripts/bench_numpy.py "$FILE" --gen "$N"
cat "$FILE" >/dev/null   # page cache warm for both

t0=$(date +%s.%N)
"$TARGET/release/rxnode" --json analyze "$FILE" --sample-rate-hz 2e6 >"$WORK/rx.json"
t1=$(date +%s.%N)
python3 scripts/bench_numpy.py "$FILE" --rate 2e6
t2=$(date +%s.%N)
python3 - "$t0" "$t1" "$t2" "$N" <<'PY'
import sys
t0, t1, t2, n = map(float, sys.argv[1:])
rx, np_ = t1 - t0, t2 - t1
print(f"rxnode analyze (whole process): {rx:.3f} s, {n / rx / 1e6:.1f} MS/s")
print(f"numpy script (whole process):   {np_:.3f} s, {n / np_ / 1e6:.1f} MS/s")
print(f"ratio numpy/rxnode: {np_ / rx:.1f}x")
PY
cargo bench -p rxnode-dsp --bench dsp -- --file "$FILE"
