#!/usr/bin/env bash
# The radio under Wine, with a real SoapySDR: cross-builds SoapySDR 0.8.1 for
# Windows (mingw-w64, -posix) from its public source, builds the simulated radio
# rxsim.dll against it as a Windows SoapySDR module, and runs the demo's two CLKIN
# captures with rxnode.exe under Wine: radio A locked to the lab reference (CLKIN
# PASS, about 0 ppm) and radio B running free 2.5 ppm fast (CLKIN FAIL, +2.5 ppm).
# Once with rxsim.dll found through SOAPY_SDR_PLUGIN_PATH, once with `--sim` (the
# module rxnode.exe carries, written to %LOCALAPPDATA%\rxnode). See
# docs/hardware.md#radio-under-wine.
#
# Not run by CI: it needs SoapySDR's source, which CI cannot download.
#
#   scripts/windows/radio-under-wine.sh [--source PATH] [--exe rxnode.exe]
#
# PATH: a SoapySDR Git directory (bare or not) holding the tag soapy-sdr-0.8.1, or
# an unpacked source tree of that release. Without it the tag is cloned from
# https://github.com/pothosware/SoapySDR. Everything is built and cached under
# target/windows/radio/ (a second run rebuilds nothing); rxnode.exe comes from
# scripts/check-windows.sh --build unless --exe names one built as it builds it.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
TAG=soapy-sdr-0.8.1
MINGW=x86_64-w64-mingw32
TRIPLE=x86_64-pc-windows-gnu
WORK="$ROOT/target/windows/radio"
SOURCE=""
EXE=""
while [ $# -gt 0 ]; do
    case "$1" in
    --source) SOURCE="${2:?--source needs a path}" ;;
    --exe) EXE="${2:?--exe needs a path}" ;;
    *)
        echo "usage: scripts/windows/radio-under-wine.sh [--source PATH] [--exe rxnode.exe]" >&2
        exit 2
        ;;
    esac
    shift 2
done

die() {
    echo "radio-under-wine: FAIL: $*" >&2
    exit 1
}
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }

command -v cmake >/dev/null || die "cmake is not installed (Debian: apt-get install cmake)"
command -v "$MINGW-g++-posix" >/dev/null || die "$MINGW-g++-posix is not installed (Debian: apt-get install mingw-w64)"
command -v python3 >/dev/null || die "python3 is not installed (the checks read JSON with it)"
command -v git >/dev/null || die "git is not installed"
mkdir -p "$WORK"

# --- 1. SoapySDR 0.8.1's source ---------------------------------------------
SRC="$WORK/src-$TAG"
if [ ! -f "$SRC/include/SoapySDR/Version.h" ]; then
    rm -rf "$SRC"
    mkdir -p "$SRC"
    if [ -z "$SOURCE" ]; then
        echo "== cloning SoapySDR $TAG from GitHub =="
        rm -rf "$WORK/SoapySDR.git"
        git clone -q --bare --depth 1 --branch "$TAG" https://github.com/pothosware/SoapySDR.git \
            "$WORK/SoapySDR.git" || die "cannot clone SoapySDR $TAG (no network? give --source PATH)"
        SOURCE="$WORK/SoapySDR.git"
    fi
    if [ -f "$SOURCE/include/SoapySDR/Version.h" ]; then
        cp -a "$SOURCE/." "$SRC/"
    else
        gitdir="$SOURCE"
        [ -d "$SOURCE/.git" ] && gitdir="$SOURCE/.git"
        git --git-dir="$gitdir" rev-parse -q --verify "refs/tags/$TAG" >/dev/null ||
            die "$SOURCE has no tag $TAG"
        git --git-dir="$gitdir" archive "$TAG" | tar -x -C "$SRC" || die "cannot unpack $TAG from $SOURCE"
    fi
fi
grep -q 'SOAPY_SDR_ABI_VERSION "0.8"' "$SRC/include/SoapySDR/Version.h" ||
    die "$SRC is not SoapySDR 0.8 (its Version.h)"

# --- 2. SoapySDR.dll and SoapySDRUtil.exe -----------------------------------
# The DLL is named SoapySDR.dll as PothosSDR names it (rxnode.exe delay-loads that
# name); the mingw C++ and thread runtimes are linked in (-static).
INST="$WORK/soapysdr"
BUILD="$WORK/build"
CMAKE_FLAGS=(
    -DCMAKE_TOOLCHAIN_FILE="$ROOT/scripts/windows/mingw-toolchain.cmake"
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$INST"
    -DCMAKE_PROJECT_INCLUDE="$ROOT/scripts/windows/soapysdr-dll-name.cmake"
    -DCMAKE_SHARED_LINKER_FLAGS=-static -DCMAKE_EXE_LINKER_FLAGS=-static
    -DENABLE_PYTHON=OFF -DENABLE_PYTHON3=OFF -DENABLE_DOCS=OFF -DENABLE_TESTS=OFF -DENABLE_APPS=ON
)
stamp="$({ cat scripts/windows/mingw-toolchain.cmake scripts/windows/soapysdr-dll-name.cmake; echo "${CMAKE_FLAGS[*]}"; } | sha256sum | cut -c1-16)"
if [ "$(cat "$INST/stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "== building SoapySDR $TAG for Windows (target/windows/radio/build) =="
    t0="$(now)"
    rm -rf "$BUILD" "$INST"
    cmake -S "$SRC" -B "$BUILD" "${CMAKE_FLAGS[@]}" >"$WORK/cmake.log" 2>&1 || {
        tail -30 "$WORK/cmake.log" >&2
        die "cmake (configure) failed: $WORK/cmake.log"
    }
    cmake --build "$BUILD" -j "$(nproc)" >"$WORK/build.log" 2>&1 || {
        tail -30 "$WORK/build.log" >&2
        die "building SoapySDR failed: $WORK/build.log"
    }
    cmake --install "$BUILD" >>"$WORK/build.log" 2>&1 || die "installing SoapySDR failed: $WORK/build.log"
    [ -f "$INST/bin/SoapySDR.dll" ] || die "no $INST/bin/SoapySDR.dll after the build: $(ls -R "$INST")"
    echo "$stamp" >"$INST/stamp"
    echo "  SoapySDR built in $(since "$t0") s"
fi
IMPLIB="$(ls "$INST"/lib/libSoapySDR*.a | head -1)"
[ -f "$IMPLIB" ] || die "no SoapySDR import library in $INST/lib"

# --- 3. rxsim.dll against it --------------------------------------------------
# The flags of hw/build.rs for a mingw target.
MODDIR="$WORK/modules"
mkdir -p "$MODDIR"
mstamp="$(cat hw/rxsim/*.cpp hw/rxsim/*.hpp hw/rxsim/scenes/*.hpp "$INST/stamp" | sha256sum | cut -c1-16)"
if [ "$(cat "$MODDIR/stamp" 2>/dev/null)" != "$mstamp" ]; then
    echo "== building rxsim.dll against SoapySDR.dll =="
    t0="$(now)"
    "$MINGW-g++-posix" -std=c++17 -O3 -fno-trapping-math -shared -Wall -Wextra -static \
        hw/rxsim/*.cpp -o "$MODDIR/rxsim.dll" -I"$INST/include" "$IMPLIB" ||
        die "building rxsim.dll failed"
    echo "$mstamp" >"$MODDIR/stamp"
    echo "  rxsim.dll built in $(since "$t0") s"
fi
imports="$("$MINGW-objdump" -p "$MODDIR/rxsim.dll" | sed -n 's/^\s*DLL Name: //p')"
grep -qx 'SoapySDR.dll' <<<"$imports" || die "rxsim.dll does not import SoapySDR.dll: $imports"

# --- 4. rxnode.exe ------------------------------------------------------------
if [ -z "$EXE" ]; then
    EXE="$ROOT/target/$TRIPLE/debug/rxnode.exe"
    bash scripts/check-windows.sh --build >"$WORK/check-windows-build.log" 2>&1 || {
        tail -30 "$WORK/check-windows-build.log" >&2
        die "scripts/check-windows.sh --build failed: $WORK/check-windows-build.log"
    }
fi
[ -f "$EXE" ] || die "no $EXE"

# --- 5. Under Wine ------------------------------------------------------------
WINE=""
for w in /usr/lib/wine/wine64 "$(command -v wine64 || true)" "$(command -v wine || true)"; do
    if [ -n "$w" ] && [ -x "$w" ]; then
        WINE="$w"
        break
    fi
done
[ -n "$WINE" ] || die "wine64 is not installed (Debian: apt-get install wine wine64)"
export WINEDEBUG=-all
export WINEPREFIX="$ROOT/target/windows/wineprefix"
export WINEDLLOVERRIDES="mscoree,mshtml="
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "== creating the Wine prefix (target/windows/wineprefix, once) =="
    "$WINE" wineboot --init >/dev/null 2>&1 || true
    for s in /usr/lib/wine/wineserver64 /usr/lib/wine/wineserver "$(command -v wineserver || true)"; do
        if [ -n "$s" ] && [ -x "$s" ]; then
            "$s" -w >/dev/null 2>&1 || true
            break
        fi
    done
    [ -f "$WINEPREFIX/system.reg" ] || die "wineboot did not create $WINEPREFIX"
fi

# The laptop: rxnode.exe with SoapySDR.dll beside it (as PothosSDR's folder on
# PATH would give it), under a folder name with spaces.
LAB="$WORK/wine lab"
rm -rf "$LAB"
BIN="$LAB/bin"
mkdir -p "$BIN" "$LAB/empty root" "$LAB/out"
cp "$EXE" "$BIN/rxnode.exe"
cp "$INST/bin/SoapySDR.dll" "$INST/bin/SoapySDRUtil.exe" "$BIN/"
# Wine 8 has no bcryptprimitives.dll!ProcessPrng, which Rust's std calls: the
# test shim of scripts/windows/wine-loop.sh (never shipped).
"$MINGW-gcc" -O2 -shared -o "$BIN/bcryptprimitives.dll" scripts/windows/processprng-shim.c \
    -ladvapi32 || die "building the ProcessPrng shim failed"
winpath() { printf 'Z:%s' "${1//\//\\}"; }
export SOAPY_SDR_ROOT="$(winpath "$LAB/empty root")"
export SOAPY_SDR_PLUGIN_PATH="$(winpath "$MODDIR/rxsim.dll")"

echo "== under Wine ($("$WINE" --version 2>/dev/null || echo wine)) =="
"$WINE" "$(winpath "$BIN/SoapySDRUtil.exe")" --info >"$LAB/out/info.txt" 2>&1 ||
    die "SoapySDRUtil --info failed: $(cat "$LAB/out/info.txt")"
grep -q 'Lib Version: v0.8.1' "$LAB/out/info.txt" || die "SoapySDRUtil --info: $(cat "$LAB/out/info.txt")"
grep -qi 'rxsim.dll' "$LAB/out/info.txt" || die "SoapySDR did not find rxsim.dll: $(cat "$LAB/out/info.txt")"
grep -q 'Available factories\.\.\. *rxsim' "$LAB/out/info.txt" ||
    die "SoapySDR did not load rxsim.dll: $(cat "$LAB/out/info.txt")"
echo "  SoapySDRUtil.exe --info: SoapySDR v0.8.1, factories: rxsim"

# capture NAME EXPECTED_EXIT [--sim] DEVICE CLOCK_SOURCE
capture() {
    local name="$1" want="$2"
    shift 2
    local sim=()
    if [ "$1" = --sim ]; then
        sim=(--sim)
        shift
    fi
    local got=0 t0
    t0="$(now)"
    "$WINE" "$(winpath "$BIN/rxnode.exe")" "${sim[@]}" --json capture -d "$1" --clock-source "$2" \
        -f 100M -r 2M -g 20 -t 1 --fft-size 2048 --clkin-tone-hz 100.1M --clkin-tolerance-ppm 0.5 \
        >"$LAB/out/$name.json" 2>"$LAB/out/$name.err" || got=$?
    local wall
    wall="$(since "$t0")"
    [ "$got" = "$want" ] || die "capture $name exited $got, expected $want: $(cat "$LAB/out/$name.err")"
    python3 - "$LAB/out/$name.json" "$name" "$wall" "${sim[*]:-SOAPY_SDR_PLUGIN_PATH}" <<'EOF' ||
import json, sys
path, name, wall, how = sys.argv[1:5]
d = json.load(open(path))
c = d["clkin"]
want_ppm, want_status = (0.0, "PASS") if name.startswith("locked") else (2.5, "FAIL")
assert c["status"] == want_status, c
assert abs(c["ppm"] - want_ppm) < 0.01, c
assert d["samples_received"] == d["samples_requested"] == 2_000_000, d
assert d["lost_samples"] == 0 and d["overflows"] == 0, d
print(f"  {name:6} ({how}): CLKIN {c['status']} {c['ppm']:+.8f} ppm ± {c['ppm_uncertainty']:.8f} (1σ),"
      f" {d['samples_received']} samples, {d['lost_samples']} lost, {d['overflows']} overflows,"
      f" capture {d['duration_s']:.3f} s, wall {wall} s")
EOF
        die "capture $name: unexpected result ($LAB/out/$name.json)"
}
LOCKED="driver=rxsim,serial=demo-locked,ext_ref=1,tone_hz=100100000"
FREE="driver=rxsim,serial=demo-free,ppm=2.5,tone_hz=100100000"
capture locked 0 "$LOCKED" external
capture free 1 "$FREE" internal
capture locked-sim 0 --sim "$LOCKED" external
capture free-sim 1 --sim "$FREE" internal

# --- 6. A transmission under Wine: the TX guard process on Windows -----------
# A RED task posted by the main PC, approved in the watcher and authorized with
# the typed phrase: `run` hands the tone to `rxnode tx-guard` in a kill-on-close
# Job object (docs/safety.md#the-tx-guard-process). Then `run` is killed (its
# Wine process, SIGKILL, as Task Manager's "End task" would) as soon as it keys a
# second tone: the guard must be gone soon after.
umask 077
export RXSIM_EVENT_LOG="$LAB/out/rxsim-events.log"
: >"$RXSIM_EVENT_LOG"
ORIGIN="$LAB/origin.git"
MAIN="$LAB/main pc"
RX="$LAB/rx laptop"
BRANCH=video-development
git init -q --bare "$ORIGIN"
git clone -q "$ORIGIN" "$MAIN" 2>/dev/null
git -C "$MAIN" config user.name "main pc"
git -C "$MAIN" config user.email "main@lab.invalid"
git -C "$MAIN" checkout -q -b "$BRANCH"
echo "lab repo" >"$MAIN/README.md"
git -C "$MAIN" add README.md
git -C "$MAIN" commit -q -m start
git -C "$MAIN" push -q origin "$BRANCH"
git clone -q -b "$BRANCH" "$ORIGIN" "$RX"
git -C "$RX" remote set-url origin "$(winpath "$ORIGIN")"
W_EXE="$(winpath "$BIN/rxnode.exe")"
W_RX="$(winpath "$RX")"
rxw() { "$WINE" "$W_EXE" --sim --repo "$W_RX" "$@"; }
post_red() { # post_red ID — a 1.5 s tone at 433.92 MHz on rxsim
    cat >"$LAB/plan.json" <<PLAN
{"steps": [{"op": "tx_tone", "device": "driver=rxsim,serial=wine-tx", "frequency_hz": 433.92e6,
  "sample_rate_hz": 2.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 1.5}]}
PLAN
    "$WINE" "$W_EXE" --repo "$(winpath "$MAIN")" task new --id "$1" --title "TX under Wine" \
        --hardware --tx --risk RED --plan "$(winpath "$LAB/plan.json")" \
        --out "$(winpath "$MAIN/docs/handoff/NEXT_RX_TASK.md")" >/dev/null ||
        die "task new $1 failed"
    git -C "$MAIN" add docs/handoff/NEXT_RX_TASK.md
    git -C "$MAIN" commit -q -m "post $1"
    git -C "$MAIN" push -q origin "$BRANCH"
    printf 'A\n' | rxw watch --once --interval 0.2 >"$LAB/out/watch-$1.out" 2>&1 ||
        die "watch --once did not approve $1: $(cat "$LAB/out/watch-$1.out")"
}
rxw node set-name LAB-WIN-TX >/dev/null || die "node set-name failed"
cat >"$RX/.local/rxnode-policy.json" <<'POLICY'
{"rx": {"max_duration_s": 10, "max_sample_rate_hz": 20000000, "max_gain_db": 50, "max_iq_bytes": 104857600},
 "tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 2}}
POLICY
ledger_of() { # ledger_of ID — the task's ledger events, one per line
    python3 - "$RX/.local/rx_agent_ledger.jsonl" "$1" <<'PY'
import json, sys
for l in open(sys.argv[1], encoding="utf-8"):
    e = json.loads(l)
    if e.get("task_id") == sys.argv[2]:
        print(e["event"], json.dumps(e.get("detail", "")))
PY
}

post_red T_WINTX1
t0="$(now)"
printf 'AUTHORIZE RF TX\n' | rxw run T_WINTX1 >"$LAB/out/run1.out" 2>"$LAB/out/run1.err" ||
    die "run T_WINTX1 failed: $(cat "$LAB/out/run1.err")"
wall="$(since "$t0")"
python3 - "$RX" "$RXSIM_EVENT_LOG" "$wall" <<'PY' || die "the tone through the guard under Wine: unexpected"
import glob, json, sys
rx, log, wall = sys.argv[1:4]
found = glob.glob(rx + "/.local/**/T_WINTX1/RX_RESULT.json", recursive=True)
assert found, "no RX_RESULT.json for T_WINTX1 under .local/"
r = json.load(open(found[0]))
tx = [c for c in r["checks"] if "tx_tone" in c["name"]]
assert tx and all(c["status"] == "PASS" for c in tx), r["checks"]
events = [l.split() for l in open(log)]
mine = [(float(e[0]), e[1], e[2]) for e in events if len(e) > 3 and e[3] == "TX"]
acts = [t for t, _, ev in mine if ev == "activateStream"]
offs = [t for t, _, ev in mine if ev in ("deactivateStream", "closeStream")]
assert acts and offs, mine
pids = {p for _, p, _ in mine}
assert len(pids) == 1, pids
print(f"  RED tone through the guard: PASS, keyed {offs[0] - acts[0]:.3f} s of 1.5 s"
      f" (rxsim log, {pids.pop()}), run wall {wall} s")
PY
ledger_of T_WINTX1 | grep -q '^tx_guard_exit' || die "no tx_guard_exit for T_WINTX1: $(ledger_of T_WINTX1)"

post_red T_WINTX2
: >"$RXSIM_EVENT_LOG"
printf 'AUTHORIZE RF TX\n' | rxw run T_WINTX2 >"$LAB/out/run2.out" 2>"$LAB/out/run2.err" &
SHELL_PID=$!
# Wait for the key-up, kill run's Wine process (found by its Windows command line),
# then time the guard's process to its end.
python3 - "$RXSIM_EVENT_LOG" "$LAB/out/run2.err" <<'PY' || die "killing run under a keyed guard: see above"
import os, signal, sys, time
log, err = sys.argv[1:3]
def find(text):
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                line = open(f"/proc/{p}/cmdline", "rb").read().replace(b"\0", b" ")
            except OSError:
                continue
            if text.encode() in line:
                return int(p)
    return None
def dead(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] in "ZX"
    except OSError:
        return True
deadline = time.time() + 60
guard = run = None
while time.time() < deadline:
    if "activateStream TX" in open(log).read():
        guard = find("tx-guard T_WINTX2")
        run = find(" run T_WINTX2")
        if guard and run:
            break
    time.sleep(0.01)
assert guard and run and guard != run, f"no keyed guard for T_WINTX2 (guard {guard}, run {run}): {open(err).read()}"
os.kill(run, signal.SIGKILL)
killed = time.time()
while not dead(guard) and time.time() < killed + 5:
    time.sleep(0.005)
gone = time.time() - killed
if not dead(guard):
    os.kill(guard, signal.SIGKILL)
    sys.exit(f"the guard (pid {guard}) outlived its killed run by 5 s")
ev = [l.split() for l in open(log)]
act = [float(e[0]) for e in ev if e[2:4] == ["activateStream", "TX"]]
off = [float(e[0]) for e in ev if e[2] in ("deactivateStream", "closeStream") and e[3] == "TX"]
sent = [l for l in open(err) if "TX off" in l]
if off:
    how = f"the guard keyed off {off[0] - killed:+.3f} s after the kill"
    assert off[0] - killed < 0.5, how
else:
    how = "no key-off in the log: keyed until the guard's process ended"
print(f"  run killed {killed - act[0]:.3f} s into a 1.5 s tone: {how}; guard process gone"
      f" {gone:.3f} s after the kill; {sent[0].split('WARN ')[-1].strip() if sent else 'no TX report'}")
PY
wait "$SHELL_PID" 2>/dev/null || true
echo "radio-under-wine: ok"
