#!/usr/bin/env bash
# Cross-builds the workspace for Windows (x86_64-pc-windows-gnu) and runs the node's
# loop under Wine (scripts/windows/wine-loop.sh). What CI runs after the tests; see
# docs/hardware.md#windows.
#
# Needs (installed here when run as root on Debian): mingw-w64 (the -posix
# compilers), wine + wine64, the rustup target x86_64-pc-windows-gnu, and SoapySDR's
# headers (libsoapysdr-dev, platform-neutral). No SoapySDR for Windows is needed:
# rxnode.exe links SoapySDR.dll through a delay-loaded import library made here
# from scripts/windows/SoapySDR.def, so it starts on a PC without SoapySDR.
#
#   scripts/check-windows.sh            build, then run the loop under Wine
#   scripts/check-windows.sh --build    build only
# Everything it makes lives under target/ (target/windows/: import libraries, the
# Wine shim, the Wine prefix), so a second run is warm.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
TRIPLE=x86_64-pc-windows-gnu
MINGW=x86_64-w64-mingw32
WORK="$ROOT/target/windows"
RUN_WINE=1
case "${1:-}" in
--build) RUN_WINE=0 ;;
"") ;;
*)
    echo "usage: scripts/check-windows.sh [--build]" >&2
    exit 2
    ;;
esac

die() {
    echo "check-windows: $*" >&2
    exit 1
}
start=$(date +%s)

# --- 1. What it needs -------------------------------------------------------
need_apt=()
command -v "$MINGW-g++-posix" >/dev/null || need_apt+=(mingw-w64)
command -v "$MINGW-dlltool" >/dev/null || need_apt+=(binutils-mingw-w64-x86-64)
[ -f /usr/include/SoapySDR/Device.h ] || need_apt+=(libsoapysdr-dev)
if [ "$RUN_WINE" = 1 ]; then
    command -v wine >/dev/null || need_apt+=(wine)
    [ -x /usr/lib/wine/wine64 ] || command -v wine64 >/dev/null || need_apt+=(wine64)
    command -v git >/dev/null || need_apt+=(git)
    command -v python3 >/dev/null || need_apt+=(python3)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "== installing ${need_apt[*]} (apt-get) =="
        apt-get update -qq || die "apt-get update failed"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${need_apt[@]}" >/dev/null || die "apt-get install ${need_apt[*]} failed"
    else
        die "missing: ${need_apt[*]} — install them (Debian: sudo apt-get install ${need_apt[*]}) or run this script as root"
    fi
fi
command -v "$MINGW-g++-posix" >/dev/null || die "missing $MINGW-g++-posix after installing mingw-w64"
if ! rustup target list --installed 2>/dev/null | grep -qx "$TRIPLE"; then
    command -v rustup >/dev/null || die "missing rustup: the Rust target $TRIPLE is added with rustup"
    echo "== rustup target add $TRIPLE =="
    rustup target add "$TRIPLE" || die "rustup target add $TRIPLE failed"
fi

# --- 2. SoapySDR without SoapySDR: headers and import libraries -------------
# rxnode.exe: a delay-loaded import library of the C API the soapysdr crate calls
# (scripts/windows/SoapySDR.def), so SoapySDR.dll is loaded at the first radio call,
# after rxnode checked it is there. rxsim.dll (a C++ SoapySDR module, loaded by
# SoapySDR itself): an ordinary import library of the C++ symbols it uses, read
# from its own object files. Rebuilt when the .def or rxsim's sources change.
DEPS="$WORK/soapysdr"
stamp="$(cat scripts/windows/SoapySDR.def hw/rxsim/*.cpp hw/rxsim/*.hpp hw/rxsim/scenes/*.hpp \
    /usr/include/SoapySDR/*.h | sha256sum | cut -c1-16)"
if [ "$(cat "$DEPS/stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "== SoapySDR import libraries (target/windows/soapysdr) =="
    rm -rf "$DEPS"
    mkdir -p "$DEPS/include" "$DEPS/delay" "$DEPS/import"
    cp -a /usr/include/SoapySDR "$DEPS/include/"
    mkdir -p "$DEPS/rxsim"
    for src in hw/rxsim/*.cpp; do
        "$MINGW-g++-posix" -std=c++17 -c "$src" -I"$DEPS/include" \
            -o "$DEPS/rxsim/$(basename "$src" .cpp).o" ||
            die "compiling $src with $MINGW-g++-posix failed"
    done
    {
        echo "LIBRARY SoapySDR.dll"
        echo "EXPORTS"
        grep -E '^    SoapySDR' scripts/windows/SoapySDR.def
        "$MINGW-nm" -u "$DEPS"/rxsim/*.o | awk 'NF == 2 {print $2}' | sed 's/^__imp_//' |
            grep -E '^_Z[A-Z]*N?K?8SoapySDR|^_ZT[VIS]N8SoapySDR|^SoapySDR' |
            grep -vxFf <(grep -E '^    SoapySDR' scripts/windows/SoapySDR.def | tr -d ' ') |
            sort -u | sed -E 's/^(_ZT[VIS].*)$/\1 DATA/; s/^/    /'
    } >"$DEPS/SoapySDR-all.def"
    "$MINGW-dlltool" -d "$DEPS/SoapySDR-all.def" -D SoapySDR.dll -l "$DEPS/import/libSoapySDR.a" ||
        die "dlltool (import library) failed"
    "$MINGW-dlltool" -d scripts/windows/SoapySDR.def -D SoapySDR.dll -y "$DEPS/delay/libSoapySDR.a" ||
        die "dlltool --output-delaylib failed"
    echo "$stamp" >"$DEPS/stamp"
fi

# --- 3. The cross build -----------------------------------------------------
echo "== cargo build --workspace --all-targets --target $TRIPLE =="
export CC_x86_64_pc_windows_gnu="$MINGW-gcc-posix"
export CXX_x86_64_pc_windows_gnu="$MINGW-g++-posix"
export AR_x86_64_pc_windows_gnu="$MINGW-ar"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER="$MINGW-gcc-posix"
export SOAPYSDR_CFLAGS="-I$DEPS/include"
export SOAPYSDR_LIBS="-L$DEPS/import -lSoapySDR"
# soapysdr-sys `links = "soapysdr"`: its build script (pkg-config / PothosSDR
# lookup) is replaced by the delay-loaded import library.
SOAPY_LINK=(
    --config "target.$TRIPLE.soapysdr.rustc-link-lib=[\"SoapySDR\"]"
    --config "target.$TRIPLE.soapysdr.rustc-link-search=[\"$DEPS/delay\"]"
    # The dependencies unoptimized here (Cargo.toml optimizes them for the Linux
    # test suite's speed): this build is compiled once and run only briefly.
    --config 'profile.dev.package."*".opt-level=0'
)
cargo build --workspace --all-targets --locked --target "$TRIPLE" "${SOAPY_LINK[@]}" ||
    die "the Windows cross build failed"
EXE="$ROOT/target/$TRIPLE/debug/rxnode.exe"
[ -f "$EXE" ] || die "no $EXE after the build"
# The exe must not need SoapySDR.dll (nor the mingw runtime DLLs) at load time.
imports="$("$MINGW-objdump" -p "$EXE" | sed -n 's/^\s*DLL Name: //p')"
if grep -qix 'SoapySDR.dll' <<<"$imports"; then
    die "rxnode.exe imports SoapySDR.dll at load time (expected a delay-load): $imports"
fi
# GNU ld leaves the PE delay-import directory entry empty; the descriptor and the
# helper are in the symbol table.
syms="$("$MINGW-nm" "$EXE")"
grep -q '__DELAY_IMPORT_DESCRIPTOR_.*libSoapySDR' <<<"$syms" &&
    grep -q ' T __delayLoadHelper2$' <<<"$syms" ||
    die "rxnode.exe does not delay-load SoapySDR.dll"
for dll in $imports; do
    case "$(tr 'A-Z' 'a-z' <<<"$dll")" in
    libstdc++-6.dll | libgcc_s_seh-1.dll | libwinpthread-1.dll)
        die "rxnode.exe needs the mingw runtime $dll at load time"
        ;;
    esac
done
echo "check-windows: build ok ($(($(date +%s) - start)) s): $EXE"

[ "$RUN_WINE" = 1 ] || exit 0

# --- 4. Under Wine: the trust root's Windows checks, then the node's loop -----
# The unit tests of the node key and of the Windows owner/DACL checks, run by the
# test executable the build made (the same flags: nothing is rebuilt).
LIBTEST="$(cargo test --no-run --lib -p rxnode --locked --target "$TRIPLE" "${SOAPY_LINK[@]}" \
    --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["lib"]:
        print(m["executable"])')" || die "cannot find the rxnode unit-test executable"
[ -n "$LIBTEST" ] || die "cannot find the rxnode unit-test executable"
bash scripts/windows/wine-loop.sh --unit-tests "$LIBTEST" store::winsec store::key exec::guard_timer store::lock::tests::pid_alive store::lock::tests::a_lock_naming_a_reused_pid watch::stale_locks term::msys_terminal_tests ||
    die "the trust root's unit tests under Wine failed"
bash scripts/windows/wine-loop.sh "$EXE" || die "the node's loop under Wine failed"
echo "check-windows: ok ($(($(date +%s) - start)) s)"
