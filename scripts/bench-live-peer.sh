#!/usr/bin/env bash
# The live path against the radio's own bare reader, on the same rxsim args, alternating:
# per pair, first the stock `SoapySDRUtil --rate=RATE --direction=RX` (reads the driver's
# native CS16 and does nothing else), then `rxnode capture` (release build; CS16 → float,
# Welch N = 2048 at 50 %, the CLKIN check, reference locked) — once with the radio unpaced
# (`pace=0`: as fast as each can read and, for rxnode, analyse) and once paced at RATE.
# Per run: MS/s (SoapySDRUtil: the mean of its reports; rxnode: samples analysed ÷ the
# capture's duration, and what its reader received), CPU-seconds (user + system, whole
# process), CPU-seconds per 10⁹ samples analysed, peak RSS, samples lost (rxnode), and the
# load average before the run; at the end the ratios rxnode ÷ reader per pair
# (docs/benchmarks.md#the-live-path-against-the-bare-reader).
#
# With RXNODE_BENCH_BASE=PATH (another rxnode binary, e.g. an older build) each pair also runs
# that binary right before this one, and its ratios are printed beside; RXNODE_BENCH_BIN=PATH
# uses that binary instead of building this checkout.
#
# usage: scripts/bench-live-peer.sh [PAIRS [SECONDS [RATE]]]   (default 3 pairs, 10 s, 200e6)
# About PAIRS × 4 × (SECONDS + 2) s after the build (× 6 with a base). Needs /usr/bin/time (apt-get install
# time), SoapySDRUtil (apt-get install soapysdr-tools) and python3. Linux.
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS="${1:-3}"
SECONDS_EACH="${2:-10}"
RATE="${3:-200e6}"
TARGET="${CARGO_TARGET_DIR:-target}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
command -v SoapySDRUtil >/dev/null || { echo "needs SoapySDRUtil (apt-get install soapysdr-tools)" >&2; exit 2; }
if [ -n "${RXNODE_BENCH_BIN:-}" ]; then
    BIN="$(realpath "$RXNODE_BENCH_BIN")"
else
    cargo build --release --locked --bin rxnode >&2
    BIN="$(cd "$TARGET/release" && pwd)/rxnode"
fi
BASE="${RXNODE_BENCH_BASE:+$(realpath "$RXNODE_BENCH_BASE")}"
# `rxnode --sim` installs its embedded rxsim module under $XDG_CACHE_HOME/rxnode/: the
# reader loads that same module, and nothing else.
XDG_CACHE_HOME="$WORK/cache" "$BIN" --sim inventory --dry-run --json >/dev/null
MODULE="$(ls "$WORK"/cache/rxnode/librxsim-*)"
mkdir -p "$WORK/empty-root"
ARGS="ext_ref=1,tone_hz=100.1e6,tone_dbfs=-30"

load() { cut -d' ' -f1-3 /proc/loadavg; }

reader() { # TAG PACE
    SOAPY_SDR_PLUGIN_PATH="$MODULE" SOAPY_SDR_ROOT="$WORK/empty-root" \
        /usr/bin/time -v -o "$WORK/time.$1" timeout -s INT "$SECONDS_EACH" \
        SoapySDRUtil --args="driver=rxsim,serial=$1,pace=$2,$ARGS" --rate="$RATE" --direction=RX \
        >"$WORK/out.$1" 2>&1 || true
}

rxnode() { # TAG PACE [BINARY]
    (cd "$WORK" && XDG_CACHE_HOME="$WORK/cache" /usr/bin/time -v -o "$WORK/time.$1" "${3:-$BIN}" --sim --json capture \
        --device "driver=rxsim,serial=$1,pace=$2,$ARGS" --clock-source external \
        --frequency-hz 100e6 --sample-rate-hz "$RATE" --duration-s "$SECONDS_EACH" \
        --clkin-tone-hz 100.1e6 >"$WORK/out.$1" 2>"$WORK/err.$1") || true
}

echo "# machine: $(nproc) CPU(s), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
    "$(if grep -q -w avx512f /proc/cpuinfo; then echo AVX-512; elif grep -q -w avx2 /proc/cpuinfo; then echo AVX2; else echo 'no AVX2'; fi)"
echo "# $PAIRS pairs, $SECONDS_EACH s per run, RATE $RATE; rxsim args $ARGS; $(date -u '+%F %H:%M UTC')"
echo "# rxnode: $BIN${BASE:+; base: $BASE}"
for i in $(seq 1 "$PAIRS"); do
    for pace in 0 1; do
        echo "$(load)" >"$WORK/load.r$pace.$i"
        reader "r$pace.$i" "$pace"
        if [ -n "$BASE" ]; then
            echo "$(load)" >"$WORK/load.b$pace.$i"
            rxnode "b$pace.$i" "$pace" "$BASE"
        fi
        echo "$(load)" >"$WORK/load.x$pace.$i"
        rxnode "x$pace.$i" "$pace"
    done
done
echo "# load average after: $(load)"

python3 - "$WORK" "$PAIRS" "$SECONDS_EACH" "${BASE:+1}" <<'EOF'
import json, re, statistics, sys
work, pairs, secs, base = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"

def rd(name):
    try:
        return open(f"{work}/{name}", errors="replace").read()
    except OSError:
        return ""

def timing(tag):
    t = rd(f"time.{tag}")
    def field(name):
        m = re.search(re.escape(name) + r":\s*([0-9.]+)", t)
        return float(m.group(1)) if m else float("nan")
    cpu = field("User time (seconds)") + field("System time (seconds)")
    return cpu, field("Maximum resident set size (kbytes)") * 1024 / 1e6

def reader(tag):
    cpu, rss = timing(tag)
    reports = [float(x) for x in re.findall(r"([0-9.]+) Msps", rd(f"out.{tag}"))]
    overflows = re.findall(r"Overflows (\d+)", rd(f"out.{tag}"))
    ms = statistics.mean(reports) if reports else float("nan")
    # Its sample count, from its reported rate over the run.
    return dict(ms=ms, cpu=cpu, rss=rss, lost="n/a", n=ms * 1e6 * secs,
                note=f"{len(reports)} reports" + (f", overflows {sum(map(int, overflows))}" if overflows else ""))

def node(tag):
    cpu, rss = timing(tag)
    try:
        s = json.load(open(f"{work}/out.{tag}"))
    except Exception:
        return dict(ms=float("nan"), cpu=cpu, rss=rss, lost="?",
                    note="no JSON summary: " + rd(f"err.{tag}").strip()[:200])
    d = max(s["duration_s"], 1e-9)
    lost = s["lost_samples"] if s.get("lost_samples") is not None else "unknown"
    clk = s.get("clkin") or {}
    note = (f"{s['status']}, received {s['samples_received'] / d / 1e6:.0f} MS/s, "
            f"{s['samples_processed'] / 1e9:.3f}e9 analysed")
    if clk.get("ppm") is not None:
        note += f", CLKIN {clk['ppm']:+.4f} ppm"
    elif clk:
        note += f", CLKIN {clk.get('status')}"
    w = [l for l in rd(f"err.{tag}").splitlines() if "may not keep up" in l]
    if w:
        note += ", speed check warned"
    return dict(ms=s["samples_processed"] / d / 1e6, cpu=cpu, rss=rss, lost=lost,
                n=s["samples_processed"], note=note)

print(f"{'run':<14} {'MS/s':>8} {'CPU-s':>7} {'CPU-s/1e9':>9} {'RSS MB':>7} {'lost':>11}  load before; notes")
ratios = {(k, p): [] for k in "xb" for p in (0, 1)}
for i in range(1, pairs + 1):
    for pace in (0, 1):
        r = reader(f"r{pace}.{i}")
        runs = [("reader", r, "r")]
        if base:
            runs.append(("base", node(f"b{pace}.{i}"), "b"))
        runs.append(("rxnode", node(f"x{pace}.{i}"), "x"))
        for name, v, tag in runs:
            per = v["cpu"] / v["n"] * 1e9 if v.get("n") else float("nan")
            label = f"{name} {'unpaced' if pace == 0 else 'paced'}"
            print(f"{label:<14} {v['ms']:>8.1f} {v['cpu']:>7.2f} {per:>9.2f} {v['rss']:>7.0f} "
                  f"{str(v['lost']):>11}  {rd(f'load.{tag}{pace}.{i}').strip()}; {v['note']}")
            if tag != "r":
                ratios[(tag, pace)].append((v["ms"] / r["ms"], v["cpu"] / r["cpu"]))
for tag, name in (("b", "base"), ("x", "rxnode")):
    if not ratios[(tag, 0)]:
        continue
    un = [a for a, _ in ratios[(tag, 0)]]
    cp = [b for _, b in ratios[(tag, 1)]]
    print(f"# unpaced throughput {name} ÷ reader per pair: " + ", ".join(f"{v:.2f}" for v in un)
          + f"  (median {statistics.median(un):.2f}; goal ≥ 0.8)")
    print(f"# paced CPU-s {name} ÷ reader per pair: " + ", ".join(f"{v:.2f}" for v in cp)
          + f"  (median {statistics.median(cp):.2f}; goal ≤ 1.5)")
EOF
