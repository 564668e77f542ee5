#!/usr/bin/env bash
# Live analysis at 200 MS/s: RUNS runs of `rxnode capture` (release build) on the bundled
# rxsim radio, paced in real time, for SECONDS each, with Welch (N = 2048) and the CLKIN
# check on the hot path — the driver's native CS16 in the 0.5 s pool, as rxnode streams
# it above 100 MS/s (reference locked: ext_ref=1, --clock-source external) — and per run:
# the status, samples received / processed, `dropped+missing` (dropped by the DSP side +
# never delivered) and the overflows (each loses part of the driver's buffer, a number the
# driver does not report), CPU-seconds (user + system), CPU-seconds per
# 10⁹ samples, peak RSS (`/usr/bin/time -v`), the speed-check warning if any, and the
# load average before the run (docs/benchmarks.md#live-analysis-at-200-mss).
#
# usage: scripts/bench-live.sh [RUNS [SECONDS [RATE]]]   (default 5 runs, 10 s, 200e6)
# About RUNS × (SECONDS + 3) s after the build; run it on an otherwise idle machine.
# Needs /usr/bin/time (Debian: apt-get install time) and python3. Linux.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-5}"
SECONDS_EACH="${2:-10}"
RATE="${3:-200e6}"
TARGET="${CARGO_TARGET_DIR:-target}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
cargo build --release --locked --bin rxnode >&2
BIN="$(cd "$TARGET/release" && pwd)/rxnode"

echo "# machine: $(nproc) CPU(s), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# rxnode capture at $RATE S/s for $SECONDS_EACH s, Welch N=2048 + CLKIN, $RUNS runs"
printf '%-4s %-8s %-12s %-12s %-15s %-8s %-14s %-9s %s\n' \
    run status received processed dropped+missing cpu_s cpu_s_per_1e9 rss_mb load_before
for i in $(seq 1 "$RUNS"); do
    load="$(cut -d' ' -f1-3 /proc/loadavg)"
    (cd "$WORK" && /usr/bin/time -v -o "$WORK/time.$i" "$BIN" --sim --json capture \
        --device "driver=rxsim,serial=live$i,pace=1,ext_ref=1,tone_hz=100.1e6,tone_dbfs=-30" --clock-source external \
        --frequency-hz 100e6 --sample-rate-hz "$RATE" --duration-s "$SECONDS_EACH" \
        --clkin-tone-hz 100.1e6 >"$WORK/out.$i.json" 2>"$WORK/err.$i") || true
    python3 - "$WORK/out.$i.json" "$WORK/time.$i" "$WORK/err.$i" "$i" "$load" <<'EOF'
import json, re, sys
out, tm, err, i, load = sys.argv[1:]
t = open(tm).read()
def field(name):
    m = re.search(re.escape(name) + r":\s*([0-9.]+)", t)
    return float(m.group(1)) if m else float("nan")
cpu = field("User time (seconds)") + field("System time (seconds)")
rss_mb = field("Maximum resident set size (kbytes)") * 1024 / 1e6
try:
    s = json.load(open(out))
except Exception:
    print(f"{i:<4} no JSON summary; stderr: {open(err).read().strip()[:300]}")
    sys.exit(0)
lost = s["dropped_samples"] + (s["samples_requested"] - s["samples_received"])
print(f"{i:<4} {s['status']:<8} {s['samples_received']:<12} {s['samples_processed']:<12} "
      f"{lost:<15} {cpu:<8.2f} {cpu / max(s['samples_received'], 1) * 1e9:<14.2f} "
      f"{rss_mb:<9.0f} {load}"
      + (f"  overflows {s['overflows']}" if s["overflows"] else "")
      + (f"  CLKIN {s['clkin']['ppm']:+.4f} ppm" if s.get("clkin") and s["clkin"].get("ppm") is not None else ""))
w = [l for l in open(err).read().splitlines() if "may not keep up" in l]
if w:
    print("     speed check: " + w[0].strip())
EOF
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
