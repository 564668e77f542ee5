#!/usr/bin/env bash
# Welch PSD beside the best-built FFTW on this machine, alternating, per kernel and size.
#
# Builds FFTW 3.3.10 from Debian's source package (`apt-get source fftw3`, through a private
# deb-src list: the system's apt configuration is not touched) with every SIMD flag this
# CPU has (SSE2, AVX, AVX2, AVX-512, FMA as /proc/cpuinfo shows them), single precision,
# cached under target/fftw; then a C harness (scripts/bench-fftw/welch_fftw.c) doing
# exactly what rxnode's Welch does (complex float input, window, N-point FFT with a
# PATIENT plan, |X|² accumulated, hop N/2) alternating with rxnode's own bench
# (`cargo bench -p rxnode-dsp --bench dsp -- --welch-table`) on every kernel this CPU runs
# (avx512, avx2, rustfft), N = 256 … 65536. Prints the best MS/s of each over the rounds,
# the ratio rxnode / FFTW, the CPU model and the load.
#
# usage: scripts/bench-fftw.sh [ROUNDS] [SECONDS_PER_CASE]   (defaults 5 and 0.15)
# needs: apt-get (Debian/Ubuntu), dpkg-source, a C compiler, make.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-5}"
SECS="${2:-0.15}"
TARGET="${CARGO_TARGET_DIR:-target}"
CACHE="$(realpath -m "$TARGET/fftw")"
FLAGS_CPU=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() { [[ "$FLAGS_CPU" == *" $1 "* ]]; }

# The configure flags this CPU allows.
SIMD=(--enable-float)
has sse2 && SIMD+=(--enable-sse2)
has avx && SIMD+=(--enable-avx)
has avx2 && SIMD+=(--enable-avx2)
has avx512f && SIMD+=(--enable-avx512)
has fma && SIMD+=(--enable-fma)
STAMP="fftw-3.3.10 ${SIMD[*]}"
PREFIX="$CACHE/install"

build_fftw() {
    mkdir -p "$CACHE/apt/lists/partial" "$CACHE/apt/archives/partial" "$CACHE/src"
    # A private deb-src list for the release this machine runs (Debian or Ubuntu).
    local id codename
    id="$(. /etc/os-release && echo "${ID:-}")"
    codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
    case "$id" in
    debian) echo "deb-src http://deb.debian.org/debian $codename main" ;;
    ubuntu) echo "deb-src http://archive.ubuntu.com/ubuntu $codename main universe" ;;
    *) echo "bench-fftw: needs Debian or Ubuntu for 'apt-get source fftw3' (this is '$id')" >&2; exit 1 ;;
    esac >"$CACHE/apt/sources.list"
    local apt=(-o "Dir::Etc::SourceList=$CACHE/apt/sources.list"
        -o "Dir::Etc::SourceParts=$CACHE/apt/none"
        -o "Dir::State::Lists=$CACHE/apt/lists"
        -o "Dir::Cache::Archives=$CACHE/apt/archives"
        -o "Debug::NoLocking=1")
    # As root apt drops to the _apt user, which cannot write the private lists.
    [[ "$EUID" == 0 ]] && apt+=(-o "APT::Sandbox::User=root")
    apt-get "${apt[@]}" update >"$CACHE/apt/update.log" 2>&1 ||
        { cat "$CACHE/apt/update.log"; exit 1; }
    (cd "$CACHE/src" && rm -rf fftw3-* && apt-get "${apt[@]}" source fftw3 >"$CACHE/apt/source.log" 2>&1) ||
        { cat "$CACHE/apt/source.log"; exit 1; }
    local dir
    dir="$(find "$CACHE/src" -maxdepth 1 -type d -name 'fftw3-*' | head -1)"
    [[ "$(sed -n 's/^Version: //p' "$CACHE"/src/fftw3_*.dsc)" == 3.3.10-* ]] ||
        { echo "bench-fftw: this release's fftw3 source package is not 3.3.10 ($dir)" >&2; exit 1; }
    echo "# building FFTW 3.3.10 (${SIMD[*]}) in $dir" >&2
    (cd "$dir" && ./configure --prefix="$PREFIX" "${SIMD[@]}" --disable-fortran \
        --disable-shared --enable-static >"$CACHE/configure.log" 2>&1 &&
        make -j"$(nproc)" >"$CACHE/make.log" 2>&1 && make install >>"$CACHE/make.log" 2>&1) ||
        { tail -30 "$CACHE/configure.log" "$CACHE/make.log"; exit 1; }
    # Only the installed library is kept (the build tree is ~130 MB, the package lists 20 MB).
    rm -rf "$dir" "$CACHE/apt/lists"
    echo "$STAMP" >"$CACHE/stamp"
}

if [[ "$(cat "$CACHE/stamp" 2>/dev/null)" != "$STAMP" ]]; then
    build_fftw
fi
if [[ "${BUILD_ONLY:-0}" == 1 ]]; then
    exit 0
fi

# The C harness, built against that FFTW with every instruction set this CPU has.
HARNESS="$CACHE/welch_fftw"
if [[ ! -x "$HARNESS" || scripts/bench-fftw/welch_fftw.c -nt "$HARNESS" ]]; then
    cc -O3 -march=native -I"$PREFIX/include" scripts/bench-fftw/welch_fftw.c \
        "$PREFIX/lib/libfftw3f.a" -lm -o "$HARNESS"
fi
# rxnode's bench binary (release profile, as `cargo bench` builds it).
BENCH="$(cargo bench -p rxnode-dsp --bench dsp --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "dsp" and m.get("executable"):
        print(m["executable"])')"
[[ -x "$BENCH" ]] || { echo "bench-fftw: no dsp bench binary" >&2; exit 1; }

# PATIENT planning once; its wisdom is kept beside the build.
WISDOM="$CACHE/wisdom-patient"
if [[ ! -s "$WISDOM" ]]; then
    echo "# planning FFTW (PATIENT, once; wisdom in $WISDOM)" >&2
    "$HARNESS" --wisdom "$WISDOM" --seconds 0.01 >/dev/null
fi

OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
LOAD0="$(cut -d' ' -f1-3 /proc/loadavg)"
T0="$(date -u +%Y-%m-%dT%H:%MZ)"
for r in $(seq 1 "$ROUNDS"); do
    "$HARNESS" --wisdom "$WISDOM" --seconds "$SECS" | sed "s/^/$r /" >>"$OUT"
    "$BENCH" --welch-table --seconds "$SECS" | sed "s/^/$r /" >>"$OUT"
done
LOAD1="$(cut -d' ' -f1-3 /proc/loadavg)"

echo "# Welch, complex f32, Hann, 50 % overlap, in cache: rxnode beside FFTW 3.3.10 (${SIMD[*]}, PATIENT)"
echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) CPUs; load average $LOAD0 at the start ($T0), $LOAD1 at the end"
echo "# $ROUNDS rounds alternating FFTW and rxnode, ${SECS} s per case; best pass of each (MS/s = samples advanced per second); ratio = rxnode / FFTW, and its range over the rounds"
python3 - "$OUT" <<'PY'
import collections, sys
best = collections.defaultdict(float)
per_round = collections.defaultdict(dict)
plan = {}
for line in open(sys.argv[1]):
    f = line.split()
    r = int(f[0])
    if f[1] == "fftw":
        key = ("fftw", int(f[2]))
        v = float(f[3])
        plan[int(f[2])] = f[4]
    else:
        key = (f[2], int(f[3]))
        v = float(f[4])
    best[key] = max(best[key], v)
    per_round[key][r] = v
sizes = sorted({n for _, n in best})
engines = [e for e in ("avx512", "avx2", "rustfft") if any((e, n) in best for n in sizes)]
head = "| N | FFTW MS/s | " + " | ".join(f"{e} MS/s | {e} / FFTW (rounds)" for e in engines) + " |"
print(head)
print("|" + "---:|" * (2 + 2 * len(engines)))
for n in sizes:
    f = best.get(("fftw", n))
    row = [str(n), f"{f:.0f}" if f else "—"]
    for e in engines:
        v = best.get((e, n))
        if v is None or not f:
            row += ["—", "—"]
            continue
        rs = [per_round[(e, n)][r] / per_round[("fftw", n)][r]
              for r in per_round[(e, n)] if r in per_round[("fftw", n)]]
        row += [f"{v:.0f}", f"**{v / f:.2f}×** ({min(rs):.2f}–{max(rs):.2f})"]
    print("| " + " | ".join(row) + " |")
print("FFTW plans chosen: " + ", ".join(f"{n}: {plan[n]}" for n in sizes if n in plan))
PY
