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
# On a CPU with AVX-512 a second FFTW is built with only what an AVX2 laptop has (SSE2, AVX,
# AVX2, FMA; cached under target/fftw-avx2, its harness built for x86-64-v3) and run in the
# same rounds: the AVX2 kernel is shown beside both, the native FFTW (AVX-512 codelets, which
# an AVX2 laptop cannot run) and the FFTW an AVX2 laptop would have.
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
# The peer an AVX2 laptop has, built beside it when this CPU has more than AVX2.
SIMD_AVX2=()
has avx512f && has avx2 && has fma && SIMD_AVX2=(--enable-float --enable-sse2 --enable-avx --enable-avx2 --enable-fma)

build_fftw() { # CACHE_DIR FLAGS...
    local CACHE="$1"
    shift
    local SIMD=("$@")
    local STAMP="fftw-3.3.10 ${SIMD[*]}"
    local PREFIX="$CACHE/install"
    if [[ "$(cat "$CACHE/stamp" 2>/dev/null)" == "$STAMP" ]]; then
        return 0
    fi
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

build_fftw "$CACHE" "${SIMD[@]}"
CACHE_AVX2="$(realpath -m "$TARGET/fftw-avx2")"
if [[ ${#SIMD_AVX2[@]} -gt 0 ]]; then
    build_fftw "$CACHE_AVX2" "${SIMD_AVX2[@]}"
fi
if [[ "${BUILD_ONLY:-0}" == 1 ]]; then
    exit 0
fi

# The C harness, built against that FFTW with every instruction set this CPU has.
harness() { # CACHE_DIR -march
    if [[ ! -x "$1/welch_fftw" || scripts/bench-fftw/welch_fftw.c -nt "$1/welch_fftw" ]]; then
        cc -O3 -march="$2" -I"$1/install/include" scripts/bench-fftw/welch_fftw.c \
            "$1/install/lib/libfftw3f.a" -lm -o "$1/welch_fftw"
    fi
}
harness "$CACHE" native
HARNESS="$CACHE/welch_fftw"
HARNESS_AVX2=""
if [[ ${#SIMD_AVX2[@]} -gt 0 ]]; then
    harness "$CACHE_AVX2" x86-64-v3
    HARNESS_AVX2="$CACHE_AVX2/welch_fftw"
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
WISDOM_AVX2="$CACHE_AVX2/wisdom-patient"
for h in "$HARNESS:$WISDOM" ${HARNESS_AVX2:+"$HARNESS_AVX2:$WISDOM_AVX2"}; do
    if [[ ! -s "${h#*:}" ]]; then
        echo "# planning FFTW (PATIENT, once; wisdom in ${h#*:})" >&2
        "${h%%:*}" --wisdom "${h#*:}" --seconds 0.01 >/dev/null
    fi
done

OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
LOAD0="$(cut -d' ' -f1-3 /proc/loadavg)"
T0="$(date -u +%Y-%m-%dT%H:%MZ)"
for r in $(seq 1 "$ROUNDS"); do
    "$HARNESS" --wisdom "$WISDOM" --seconds "$SECS" | sed "s/^/$r /" >>"$OUT"
    if [[ -n "$HARNESS_AVX2" ]]; then
        "$HARNESS_AVX2" --wisdom "$WISDOM_AVX2" --seconds "$SECS" | sed "s/^/$r /; s/ fftw / fftw-avx2 /" >>"$OUT"
    fi
    "$BENCH" --welch-table --seconds "$SECS" | sed "s/^/$r /" >>"$OUT"
done
LOAD1="$(cut -d' ' -f1-3 /proc/loadavg)"

echo "# Welch, complex f32, Hann, 50 % overlap, in cache: rxnode beside FFTW 3.3.10 (${SIMD[*]}, PATIENT)"
if [[ -n "$HARNESS_AVX2" ]]; then
    echo "# and beside FFTW-AVX2: FFTW 3.3.10 built with ${SIMD_AVX2[*]} only (what an AVX2 laptop has), its harness for x86-64-v3, PATIENT"
fi
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
    if f[1] in ("fftw", "fftw-avx2"):
        key = (f[1], int(f[2]))
        v = float(f[3])
        plan[(f[1], int(f[2]))] = f[4]
    else:
        key = (f[2], int(f[3]))
        v = float(f[4])
    best[key] = max(best[key], v)
    per_round[key][r] = v
sizes = sorted({n for _, n in best})
engines = [e for e in ("avx512", "avx2", "rustfft") if any((e, n) in best for n in sizes)]
avx2_peer = any(("fftw-avx2", n) in best for n in sizes)
# Each kernel beside the native FFTW; the AVX2 kernel also beside the AVX2-only FFTW.
cols = [(e, "fftw", "FFTW") for e in engines]
if avx2_peer and "avx2" in engines:
    cols.insert(engines.index("avx2") + 1, ("avx2", "fftw-avx2", "FFTW-AVX2"))
head = "| N | FFTW MS/s | " + ("FFTW-AVX2 MS/s | " if avx2_peer else "")
head += " | ".join((f"{e} MS/s | " if p == "fftw" else "") + f"{e} / {name} (rounds)" for e, p, name in cols) + " |"
print(head)
print("|" + "---:|" * (2 + avx2_peer + len(cols) + len(engines)))
for n in sizes:
    row = [str(n)]
    for p in ("fftw", "fftw-avx2")[: 1 + avx2_peer]:
        f = best.get((p, n))
        row.append(f"{f:.0f}" if f else "—")
    for e, p, _ in cols:
        v, f = best.get((e, n)), best.get((p, n))
        if p == "fftw":
            row.append(f"{v:.0f}" if v is not None else "—")
        if v is None or not f:
            row.append("—")
            continue
        rs = [per_round[(e, n)][r] / per_round[(p, n)][r]
              for r in per_round[(e, n)] if r in per_round[(p, n)]]
        row.append(f"**{v / f:.2f}×** ({min(rs):.2f}–{max(rs):.2f})")
    print("| " + " | ".join(row) + " |")
for p, name in (("fftw", "FFTW"), ("fftw-avx2", "FFTW-AVX2")):
    if any((p, n) in plan for n in sizes):
        print(f"{name} plans chosen: " + ", ".join(f"{n}: {plan[(p, n)]}" for n in sizes if (p, n) in plan))
PY
