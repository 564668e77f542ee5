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
    # A private deb-src list for the release this machine runs.
    local codename
    codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
    echo "deb-src http://deb.debian.org/debian $codename main" >"$CACHE/apt/sources.list"
    local apt=(-o "Dir::Etc::SourceList=$CACHE/apt/sources.list"
        -o "Dir::Etc::SourceParts=$CACHE/apt/none"
        -o "Dir::State::Lists=$CACHE/apt/lists"
        -o "Dir::Cache::Archives=$CACHE/apt/archives"
        -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
    apt-get "${apt[@]}" update >"$CACHE/apt/update.log" 2>&1 ||
        { cat "$CACHE/apt/update.log"; exit 1; }
    (cd "$CACHE/src" && rm -rf fftw3-* && apt-get "${apt[@]}" source fftw3 >"$CACHE/apt/source.log" 2>&1) ||
        { cat "$CACHE/apt/source.log"; exit 1; }
    local dir
    dir="$(find "$CACHE/src" -maxdepth 1 -type d -name 'fftw3-*' | head -1)"
    [[ "$(sed -n 's/^Version: //p' "$CACHE"/src/fftw3_*.dsc)" == 3.3.10-* ]] ||
        { echo "bench-fftw: $dir is not FFTW 3.3.10" >&2; exit 1; }
    echo "# building FFTW 3.3.10 (${SIMD[*]}) in $dir" >&2
    (cd "$dir" && ./configure --prefix="$PREFIX" "${SIMD[@]}" --disable-fortran \
        --disable-shared --enable-static >"$CACHE/configure.log" 2>&1 &&
        make -j"$(nproc)" >"$CACHE/make.log" 2>&1 && make install >>"$CACHE/make.log" 2>&1) ||
        { tail -30 "$CACHE/configure.log" "$CACHE/make.log"; exit 1; }
    echo "$STAMP" >"$CACHE/stamp"
}

if [[ "$(cat "$CACHE/stamp" 2>/dev/null)" != "$STAMP" ]]; then
    build_fftw
fi
if [[ "${BUILD_ONLY:-0}" == 1 ]]; then
    exit 0
fi
