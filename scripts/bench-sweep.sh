#!/usr/bin/env bash
# `rxnode sweep` against soapy_power on one rxsim scene of five CW emitters at known
# dBFS: the same request for both (band, bin, rate, crop, gain, settle, dwell), run
# alternately, ROUNDS rounds (after one untimed warm-up of each), then per tool the
# hops, the wall times and each emitter's frequency and level error against the scene.
# Both load only the bundled rxsim module (docs/benchmarks.md#side-by-side-with-soapy_power).
#
# usage: scripts/bench-sweep.sh [ROUNDS]            (default 5)
#   RTL_SDR_MISC=DIR  a checkout of keenerd/rtl-sdr-misc: render rxnode's CSV with its
#                     heatmap/heatmap.py (copied to the temp folder; nothing is written in DIR)
#   KEEP=1            keep the temp folder (CSVs, JSON, logs, the heatmap PNG)
#
# Installs what it needs on first use: Debian's python3-soapysdr (and python3-venv) with
# apt-get when missing — that needs root, or sudo — and soapy_power + pillow < 10 (heatmap.py
# calls FreeTypeFont.getsize, gone in Pillow 10) from PyPI into a venv at ${XDG_CACHE_HOME:-~/.cache}/rxnode/bench-sweep-venv that sees the
# system's SoapySDR bindings. Linux (Debian/Ubuntu).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-5}"
TARGET="${CARGO_TARGET_DIR:-target}"
WORK="$(mktemp -d)"
if [ "${KEEP:-0}" = 1 ]; then
    trap 'echo "# kept $WORK"' EXIT
else
    trap 'rm -rf "$WORK"' EXIT
fi

# ---- the request and the scene -------------------------------------------------------
START=420e6 STOP=480e6 BIN=10e3 RATE=10e6 CROP=0.25 GAIN=20 SETTLE=0.01 DWELL=0.05
# soapy_power reads in buffers of this many samples and rounds each hop's samples up to
# a whole number of them: 10000 makes its 0.05 s dwell exactly 500 000 samples, as rxnode's.
SOAPY_BUFFER=10000
# Five CW emitters, absolute Hz : dBFS. All but one sit on a 10 kHz bin centre; 446.00625 MHz
# (PMR446 channel 1) is deliberately 3.75 kHz (0.375 bin) from the nearest one.
EMITTERS="424.5e6:-25;433.92e6:-20;446.00625e6:-30;455.3e6:-40;470.1e6:-50"
# Per hop both tools stop the stream, retune, restart it and discard 10 ms (rxnode
# --settle-s, soapy_power --reset-stream --tune-delay) before the dwell.
DEVICE="driver=rxsim,noise_dbfs=-60,emitters=$EMITTERS"

# ---- installs ------------------------------------------------------------------------
SYSPY=/usr/bin/python3   # Debian's python3-soapysdr is built for the system interpreter
as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else
        echo "error: installing ${*: -1} needs root: run 'apt-get install ${*: -1}' as root, or this script with sudo" >&2
        exit 2
    fi
}
apt_install() {
    echo "# installing $1 with apt-get (needs root)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "$1" >/dev/null ||
        { as_root apt-get update >/dev/null && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "$1" >/dev/null; }
}
[ -x "$SYSPY" ] || { echo "error: $SYSPY not found (Debian's python3)" >&2; exit 2; }
"$SYSPY" -c 'import SoapySDR' 2>/dev/null || apt_install python3-soapysdr
"$SYSPY" -c 'import ensurepip' 2>/dev/null || apt_install python3-venv
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/rxnode/bench-sweep-venv"
if ! "$VENV/bin/python" -c 'import soapypower, SoapySDR, PIL; assert int(PIL.__version__.split(".")[0]) < 10' 2>/dev/null; then
    echo "# installing soapy_power and pillow < 10 from PyPI into $VENV"
    "$SYSPY" -m venv --system-site-packages "$VENV"
    "$VENV/bin/pip" install -q soapy_power 'pillow<10'
fi
PY="$VENV/bin/python"
SOAPY_POWER="$VENV/bin/soapy_power"

echo "# building rxnode (cargo build --release --locked)"
cargo build --release --locked -p rxnode >/dev/null 2>"$WORK/build.log" || { cat "$WORK/build.log" >&2; exit 1; }
RXNODE="$PWD/$TARGET/release/rxnode"

# ---- only the bundled rxsim module ---------------------------------------------------
# `rxnode --sim` writes its embedded module to $XDG_CACHE_HOME/rxnode/librxsim-<hash>.so
# (docs/hardware.md#the-simulated-radio-rxsim); both tools then load that one file and
# nothing from the system: SOAPY_SDR_ROOT is an empty folder.
mkdir -p "$WORK/cache" "$WORK/empty-root" "$WORK/cwd"
XDG_CACHE_HOME="$WORK/cache" "$RXNODE" --sim inventory --dry-run --json >/dev/null
MODULE="$(ls "$WORK"/cache/rxnode/librxsim-*.so)"
export SOAPY_SDR_PLUGIN_PATH="$MODULE" SOAPY_SDR_ROOT="$WORK/empty-root"
unset RXNODE_SIM RUST_LOG
loaded="$("$PY" -c 'import SoapySDR; print(" ".join(SoapySDR.listModules()))')"
if [ "$loaded" != "$MODULE" ]; then
    echo "error: SoapySDR would load [$loaded], not only $MODULE" >&2
    exit 1
fi

# ---- the runs ------------------------------------------------------------------------
cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
echo "# machine: $cpu, $(nproc) cores; rxnode $("$RXNODE" --version | cut -d' ' -f2), soapy_power $("$VENV/bin/pip" show soapy_power 2>/dev/null | sed -n 's/^Version: //p')"
echo "# SoapySDR modules loaded by both: $loaded (SOAPY_SDR_ROOT empty)"
echo "# request: $(awk "BEGIN{print $START/1e6}")–$(awk "BEGIN{print $STOP/1e6}") MHz, bin $BIN Hz, rate $RATE S/s, crop $CROP, gain $GAIN dB, settle $SETTLE s, dwell $DWELL s"
echo "# scene: $DEVICE"

run_rxnode() { # NAME
    local t0 t1
    t0=$EPOCHREALTIME
    (cd "$WORK/cwd" && "$RXNODE" --json sweep -d "$DEVICE" --start-hz "$START" --stop-hz "$STOP" \
        -B "$BIN" -r "$RATE" -g "$GAIN" --settle-s "$SETTLE" -t "$DWELL" --crop "$CROP" \
        --csv "$WORK/$1.csv" >"$WORK/$1.json" 2>"$WORK/$1.log")
    t1=$EPOCHREALTIME
    echo "$t0 $t1" >"$WORK/$1.time"
}
run_soapy() { # NAME
    local t0 t1
    t0=$EPOCHREALTIME
    "$SOAPY_POWER" -d "$DEVICE" -f "$START:$STOP" -B "$BIN" -r "$RATE" -g "$GAIN" \
        --reset-stream --tune-delay "$SETTLE" -t "$DWELL" -s "$SOAPY_BUFFER" -k "$(awk "BEGIN{print $CROP*100}")" \
        -u 1 -F rtl_power -O "$WORK/$1.csv" 2>"$WORK/$1.log"
    t1=$EPOCHREALTIME
    echo "$t0 $t1" >"$WORK/$1.time"
}
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "# load before: $(uptime)"
run_rxnode rx-warm
run_soapy sp-warm
for r in $(seq 1 "$ROUNDS"); do
    # Alternate which tool goes first, so neither always runs after the other.
    if [ $((r % 2)) = 1 ]; then run_rxnode "rx-$r"; run_soapy "sp-$r"
    else run_soapy "sp-$r"; run_rxnode "rx-$r"; fi
    echo "$(load)" >"$WORK/load-$r"
done
echo "# load after:  $(uptime)"

# ---- the heatmap check ---------------------------------------------------------------
# heatmap.py draws one image row per CSV timestamp (rtl_power stamps every line of a pass
# with the pass's time); each round's rxnode CSV is tried, and soapy_power's round 1 too.
HEATMAP="NOT RUN: set RTL_SDR_MISC to a checkout of keenerd/rtl-sdr-misc"
if [ -n "${RTL_SDR_MISC:-}" ]; then
    if [ -f "$RTL_SDR_MISC/heatmap/heatmap.py" ] && [ -f "$RTL_SDR_MISC/heatmap/Vera.ttf" ]; then
        mkdir -p "$WORK/heatmap"
        cp "$RTL_SDR_MISC/heatmap/heatmap.py" "$RTL_SDR_MISC/heatmap/Vera.ttf" "$WORK/heatmap/"
        heat() { # CSV PNG -> "ok WxH" or the error's last line
            if (cd "$WORK/heatmap" && "$PY" heatmap.py "$1" "$2") >"$2.log" 2>&1; then
                "$PY" -c 'import sys; from PIL import Image; i = Image.open(sys.argv[1]); print("ok %dx%d" % i.size)' "$2"
            else
                tail -1 "$2.log"
            fi
        }
        good=0 HEATMAP=""
        for r in $(seq 1 "$ROUNDS"); do
            out="$(heat "$WORK/rx-$r.csv" "$WORK/heatmap/rx-$r.png")"
            stamps="$(cut -d, -f1-2 "$WORK/rx-$r.csv" | sort -u | wc -l)"
            case "$out" in ok*) good=$((good + 1)) ;; esac
            HEATMAP="$HEATMAP
  rxnode round $r CSV ($stamps distinct timestamps): $out"
        done
        HEATMAP="rxnode's CSV rendered in $good of $ROUNDS rounds$HEATMAP
  soapy_power round 1 CSV: $(heat "$WORK/sp-1.csv" "$WORK/heatmap/sp-1.png")"
    else
        HEATMAP="NOT RUN: $RTL_SDR_MISC/heatmap/heatmap.py or Vera.ttf is missing"
    fi
fi

# ---- the table -----------------------------------------------------------------------
"$PY" - "$WORK" "$ROUNDS" "$EMITTERS" "$BIN" "$HEATMAP" <<'PY'
import json, re, statistics, sys

work, rounds, emitters, asked_bin, heatmap = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5]
truth = [tuple(float(x) for x in e.split(":")) for e in emitters.split(";")]
strongest = max(p for _, p in truth)


def rtl_power(path):
    """rtl_power CSV -> (rows, {bin centre Hz: dB}) (a bin's centre: low + i * step)."""
    rows, bins = 0, {}
    for line in open(path):
        f = [x.strip() for x in line.split(",")]
        if len(f) < 7:
            continue
        rows += 1
        low, step = float(f[2]), float(f[4])
        for i, db in enumerate(f[6:]):
            bins[low + i * step] = float(db)
    return rows, bins


def strongest_near(points, hz, bin_hz):
    """The strongest (Hz, dB) within 2 bins of hz, or None."""
    near = [(f, p) for f, p in points if abs(f - hz) <= 2 * bin_hz]
    return max(near, key=lambda fp: fp[1]) if near else None


def wall(name):
    t0, t1 = map(float, open(f"{work}/{name}.time").read().split())
    return t1 - t0


def measure(tool, r):
    name = f"{tool}-{r}"
    rows, csv = rtl_power(f"{work}/{name}.csv")
    steps = sorted(csv)
    csv_bin = (steps[-1] - steps[0]) / (len(steps) - 1)
    m = {"wall": wall(name), "rows": rows, "csv_bin": csv_bin, "csv": csv}
    if tool == "rx":
        j = json.load(open(f"{work}/{name}.json"))
        m.update(status=j["status"], hops=j["hops_per_repeat"], bin=j["bin_hz"], fft=j["fft_size"],
                 sweep_s=j["elapsed_s"], samples=j["hops"][0]["samples"],
                 overflows=sum(h["overflows"] for h in j["hops"]), floor=j["settle_dwell_floor_s"],
                 points=[(p["frequency_hz"], p["power_db"]) for p in j["peaks"]])
    else:
        log = open(f"{work}/{name}.log").read()
        num = lambda k: float(re.search(rf"^INFO: {k}: ([0-9.]+)", log, re.M).group(1))
        m.update(status="ok" if rows else "no output", hops=int(num("hops")), bin=csv_bin,
                 fft=int(num("bins")), sweep_s=num("Total time"),
                 samples=int(re.search(r"^INFO: buffer_size \(samples\): (\d+)", log, re.M).group(1)),
                 points=sorted(csv.items()))
    m["found"] = [strongest_near(m["points"], hz, m["bin"]) for hz, _ in truth]
    # rxnode's peaks are bin centres of its own CSV: the same bin must be the strongest there.
    if tool == "rx":
        from_csv = [strongest_near(sorted(csv.items()), hz, m["bin"]) for hz, _ in truth]
        m["csv_agrees"] = all((a is None and b is None) or (a and b and abs(a[0] - b[0]) < 1e-3)
                              for a, b in zip(m["found"], from_csv))
    else:
        m["csv_agrees"] = True
    return m


runs = {t: [measure(t, r) for r in range(1, rounds + 1)] for t in ("rx", "sp")}
loads = [open(f"{work}/load-{r}").read().strip() for r in range(1, rounds + 1)]
label = {"rx": "rxnode sweep", "sp": "soapy_power"}

print()
print(f"per round (1-min / 5-min / 15-min load after it): " + " | ".join(loads))
print()
print("| tool | hops | bin (FFT) | samples/hop | wall time per run, s (rounds 1..%d) | median wall | median sweep (tool's own) |" % rounds)
print("|---|---|---|---|---|---|---|")
med = {}
for t in ("rx", "sp"):
    ms = runs[t]
    walls = [m["wall"] for m in ms]
    med[t] = statistics.median(walls)
    hops = sorted({m["hops"] for m in ms})
    print(f"| {label[t]} | {'/'.join(map(str, hops))} | {ms[0]['bin']:.2f} Hz ({ms[0]['fft']}) | {ms[0]['samples']} "
          f"| {' '.join(f'{w:.3f}' for w in walls)} | {med[t]:.3f} s | {statistics.median(m['sweep_s'] for m in ms):.3f} s |")
print(f"settle + dwell floor per pass: {runs['rx'][0]['floor']:.3f} s; wall = the whole process (start-up included), "
      "sweep = the tool's own timer (rxnode elapsed_s, soapy_power 'Total time')")
print()
print("frequency error = the strongest bin within 2 bins of the emitter (rxnode: its reported peak) minus the truth;")
print("level error over the rounds, min..max; relative = against the strongest emitter (433.92 MHz, -20 dBFS)")
print()
print("| emitter | truth dBFS | tool | freq error Hz (bins) | level error abs dB | level error rel dB |")
print("|---|---|---|---|---|---|")
worst = {t: {"bins": 0.0, "on_bin_abs": 0.0, "on_bin_rel": 0.0, "missing": 0} for t in runs}
for k, (hz, p) in enumerate(truth):
    on_bin = abs(hz / asked_bin - round(hz / asked_bin)) < 1e-6
    for t in ("rx", "sp"):
        ms = runs[t]
        if any(m["found"][k] is None for m in ms):
            worst[t]["missing"] += 1
            print(f"| {hz / 1e6:.5f} MHz{'' if on_bin else ' (off-grid)'} | {p:g} | {label[t]} | NOT FOUND | | |")
            continue
        ferr = sorted({round(m["found"][k][0] - hz, 2) for m in ms})
        bins = [e / ms[0]["bin"] for e in ferr]
        top = [max(m["found"][j][1] for j in range(len(truth)) if m["found"][j]) for m in ms]
        aerr = [m["found"][k][1] - p for m in ms]
        rerr = [(m["found"][k][1] - top[i]) - (p - strongest) for i, m in enumerate(ms)]
        w = worst[t]
        w["bins"] = max(w["bins"], max(abs(b) for b in bins))
        if on_bin:
            w["on_bin_abs"] = max(w["on_bin_abs"], max(abs(e) for e in aerr))
            w["on_bin_rel"] = max(w["on_bin_rel"], max(abs(e) for e in rerr))
        rng = lambda v: f"{min(v):+.2f}..{max(v):+.2f}"
        abs_txt = rng(aerr) if t == "rx" else "n/a (not dBFS)"
        print(f"| {hz / 1e6:.5f} MHz{'' if on_bin else ' (off-grid)'} | {p:g} | {label[t]} "
              f"| {' / '.join(f'{e:+.0f}' for e in ferr)} ({' / '.join(f'{b:+.3f}' for b in bins)}) | {abs_txt} | {rng(rerr)} |")

print()
rx, sp = runs["rx"], runs["sp"]
ok = lambda c: "MET" if c else "NOT MET"
rx_hops, sp_hops = max(m["hops"] for m in rx), min(m["hops"] for m in sp)
print("acceptance:")
print(f"  rxnode hops <= soapy_power hops: {rx_hops} vs {sp_hops}: {ok(rx_hops <= sp_hops)}")
print(f"  rxnode median wall <= soapy_power's: {med['rx']:.3f} s vs {med['sp']:.3f} s: {ok(med['rx'] <= med['sp'])}")
for t in ("rx", "sp"):
    w = worst[t]
    print(f"  {label[t]}: every emitter within 1/2 bin: worst {w['bins']:.3f} bin"
          f"{', %d not found' % w['missing'] if w['missing'] else ''}: {ok(w['bins'] <= 0.5 and not w['missing'])}")
w = worst["rx"]
print(f"  rxnode on-bin levels within 0.5 dB of truth: worst {w['on_bin_abs']:.2f} dB (dBFS), {w['on_bin_rel']:.2f} dB (relative): {ok(w['on_bin_abs'] <= 0.5)}")
w = worst["sp"]
print(f"  soapy_power on-bin relative levels within 0.5 dB: worst {w['on_bin_rel']:.2f} dB: {ok(w['on_bin_rel'] <= 0.5)}")
bad = [m for m in rx if m["status"] != "PASS" or m["overflows"] or not m["csv_agrees"]]
print(f"  rxnode PASS, 0 overflows and JSON peaks = its CSV's bins in every round: {ok(not bad)}")
print(f"heatmap.py (keenerd/rtl-sdr-misc): {heatmap}")
PY
