#!/usr/bin/env bash
# Is streamed Welch limited by memory bandwidth? Measures the one-thread streaming read
# bandwidth (scripts/bench-membw/read_bw.c, -O3 -march=native) and Welch N=2048 50 % fed
# once from a buffer of at least 4x the last-level cache (`cargo bench -p rxnode-dsp
# --bench dsp -- --welch-streamed MIB`, every kernel this CPU runs), alternating, and
# prints each Welch figure as a fraction of the bandwidth (input bytes read: 8 per sample).
# Each pass is timed by its thread's CPU time (a pass is long enough to be preempted on a
# shared machine), best pass of each.
#
# usage: scripts/bench-membw.sh [ROUNDS] [SECONDS_PER_CASE]   (defaults 5 and 1)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-5}"
SECS="${2:-1}"
TARGET="${CARGO_TARGET_DIR:-target}"
mkdir -p "$TARGET/membw"

# The last-level cache of cpu0 (the highest level listed), in KiB.
LLC_KIB=0
LLC_LEVEL=0
for d in /sys/devices/system/cpu/cpu0/cache/index*; do
    level="$(cat "$d/level")"
    size="$(cat "$d/size")"
    case "$size" in
    *K) kib="${size%K}" ;;
    *M) kib="$((${size%M} * 1024))" ;;
    *) kib="$((size / 1024))" ;;
    esac
    if ((level > LLC_LEVEL || (level == LLC_LEVEL && kib > LLC_KIB))); then
        LLC_LEVEL="$level"
        LLC_KIB="$kib"
    fi
done
((LLC_KIB > 0)) || { echo "bench-membw: no cache size under /sys/devices/system/cpu/cpu0/cache" >&2; exit 1; }
MIB=$(((4 * LLC_KIB + 1023) / 1024))

READER="$TARGET/membw/read_bw"
if [[ ! -x "$READER" || scripts/bench-membw/read_bw.c -nt "$READER" ]]; then
    cc -O3 -march=native scripts/bench-membw/read_bw.c -o "$READER"
fi
BENCH="$(cargo bench -p rxnode-dsp --bench dsp --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "dsp" and m.get("executable"):
        print(m["executable"])')"
[[ -x "$BENCH" ]] || { echo "bench-membw: no dsp bench binary" >&2; exit 1; }

OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
LOAD0="$(cut -d' ' -f1-3 /proc/loadavg)"
T0="$(date -u +%Y-%m-%dT%H:%MZ)"
for r in $(seq 1 "$ROUNDS"); do
    "$READER" --mib "$MIB" --seconds "$SECS" | sed "s/^/$r /" >>"$OUT"
    "$BENCH" --welch-streamed "$MIB" --seconds "$SECS" | sed "s/^/$r /" >>"$OUT"
done
LOAD1="$(cut -d' ' -f1-3 /proc/loadavg)"

echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) CPUs; last-level cache L$LLC_LEVEL $((LLC_KIB / 1024)) MiB; buffers $MIB MiB (4x)"
echo "# load average $LOAD0 at the start ($T0), $LOAD1 at the end; $ROUNDS rounds alternating, ${SECS} s per case, best pass of each"
python3 - "$OUT" <<'PY'
import collections, sys
best = collections.defaultdict(float)
rounds = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.split()
    r = int(f[0])
    if f[1] == "read-bw":
        key, gbs, ms = "read", float(f[3]), None
    else:
        key, gbs, ms = f[2], float(f[5]), float(f[4])
        clock = f[6]
    rounds[key][r] = gbs
    best[key] = max(best[key], gbs)
    if ms is not None:
        best[key + " MS/s"] = max(best[key + " MS/s"], ms)
bw = best["read"]
lo, hi = min(rounds["read"].values()), max(rounds["read"].values())
print(f"one-thread read bandwidth: {bw:.2f} GB/s (rounds {lo:.2f}–{hi:.2f}); every pass timed by its thread's CPU time (Welch: {clock} clock)")
print("| Welch N=2048 50 %, streamed | MS/s | GB/s of input | fraction of the read bandwidth (rounds) |")
print("|---|---:|---:|---:|")
for e in ("avx512", "avx2", "rustfft"):
    if e not in best:
        continue
    fr = [rounds[e][r] / rounds["read"][r] for r in rounds[e] if r in rounds["read"]]
    print(f"| {e} | {best[e + ' MS/s']:.0f} | {best[e]:.2f} | **{best[e] / bw:.2f}** ({min(fr):.2f}–{max(fr):.2f}) |")
PY
