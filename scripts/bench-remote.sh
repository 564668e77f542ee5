#!/usr/bin/env bash
# The stock SoapySDR client through the stock SoapyRemote server:
# `SoapySDRUtil --rate=R --direction=RX` against `SoapySDRServer` on loopback serving the
# bundled rxsim (and nothing else), RUNS runs of 10 s per row; prints the client's last
# report (Msps, overflows) per run and a summary per row. The last rows serve rxsim with
# `pace=0`: the rate the whole chain (server stream thread, rxsim, UDP, client) reaches
# when nothing paces it — the headroom above 61.44 MS/s.
# usage: scripts/bench-remote.sh [RUNS] [RATE ...]   (Linux; needs soapyremote-server,
#        soapysdr0.8-module-remote, avahi-daemon on the system D-Bus: scripts/setup.sh --tests and
#        scripts/remote-services.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-5}"
shift || true
if [ $# -gt 0 ]; then RATES=("$@"); else RATES=(2e6 20e6 61.44e6); fi
TARGET="${CARGO_TARGET_DIR:-target}"
WORK="$(mktemp -d)"
SERVER_PID=
cleanup() {
    [ -n "$SERVER_PID" ] && kill -INT "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

bash scripts/remote-services.sh
cargo build --release --locked -p rxnode >/dev/null 2>&1 || cargo build --release -p rxnode
# `rxnode --sim` installs the embedded rxsim module into $XDG_CACHE_HOME/rxnode/.
XDG_CACHE_HOME="$WORK/cache" "$TARGET/release/rxnode" --sim inventory --dry-run --json >/dev/null
MODULE="$(ls "$WORK"/cache/rxnode/librxsim-*)"
mkdir -p "$WORK/empty-root" "$WORK/client"
REMOTE="$(ls /usr/lib/*/SoapySDR/modules0.8/libremoteSupport.so /usr/lib/SoapySDR/modules0.8/libremoteSupport.so \
    /usr/local/lib/SoapySDR/modules0.8/libremoteSupport.so 2>/dev/null | head -1 || true)"
[ -n "$REMOTE" ] || { echo "bench-remote: libremoteSupport.so not found (apt-get install soapysdr0.8-module-remote)" >&2; exit 1; }
ln -s "$REMOTE" "$WORK/client/"

start_server() { # PORT
    SOAPY_SDR_PLUGIN_PATH="$MODULE" SOAPY_SDR_ROOT="$WORK/empty-root" \
        SoapySDRServer --bind="127.0.0.1:$1" >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        grep -q "Press Ctrl+C" "$WORK/server.log" 2>/dev/null && { sleep 0.3; return 0; }
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "bench-remote: SoapySDRServer did not start:" >&2
    cat "$WORK/server.log" >&2
    exit 1
}

stop_server() {
    kill -INT "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}

# One 10 s client run; prints "<Msps> <overflows>" from its last report.
one_run() { # RATE EXTRA_ARGS PORT
    SOAPY_SDR_PLUGIN_PATH="$WORK/client" SOAPY_SDR_ROOT="$WORK/empty-root" timeout -s INT 11 \
        SoapySDRUtil --args="driver=remote,remote=tcp://127.0.0.1:$3,remote:driver=rxsim$2" \
        --rate="$1" --direction=RX 2>&1 | tr '\r' '\n' | grep MBps | tail -1 |
        sed -E 's/^[^0-9]*//' | awk '{o = 0; for (i = 1; i <= NF; i++) if ($i == "Overflows") o = $(i + 1); print $1, o}'
}

row() { # LABEL RATE EXTRA_ARGS
    local clean=0 min=
    local figures=()
    for i in $(seq "$RUNS"); do
        local port=$((55300 + RANDOM % 600))
        start_server "$port"
        read -r msps ovf < <(one_run "$2" "$3" "$port" || true)
        stop_server
        msps="${msps:-0}" ovf="${ovf:-?}"
        figures+=("$msps/$ovf")
        [ "$ovf" = 0 ] && clean=$((clean + 1))
        min=$(awk -v a="$msps" -v b="${min:-$msps}" 'BEGIN { print (a < b ? a : b) }')
    done
    printf '%-34s %s of %s runs with 0 overflows; lowest %s Msps; runs (Msps/overflows): %s\n' \
        "$1" "$clean" "$RUNS" "$min" "${figures[*]}"
}

echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# SoapySDRUtil --rate=R --direction=RX through SoapySDRServer on 127.0.0.1, $RUNS runs of 10 s"
for r in "${RATES[@]}"; do
    row "$r S/s, UDP (default)" "$r" ""
done
row "61.44e6 S/s, remote:prot=tcp" 61.44e6 ",remote:prot=tcp"
row "unpaced rxsim (pace=0), UDP" 61.44e6 ",remote:pace=0"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
