#!/usr/bin/env bash
# A fleet on one origin served by `git daemon` on loopback: for each fleet size,
# N nodes each run a watcher publishing its status every INTERVAL s
# (docs/protocol.md#node-status) and all publish one result at the same moment
# to the one `rx-node` branch. Reports per size: results landed, the time until
# the last result landed, the worst number of push attempts of one node, the most
# commits any rx-status branch ever held (sampled every few seconds), whether a
# fresh clone holds every node's files byte-identical to what the node published,
# the main PC's `results nodes` time and how many nodes it saw alive, and the load.
#
# The server is set up as a lab's would be: `git daemon --max-connections=256`.
# At its limit (32 by default) git daemon makes room by killing a connection that
# comes from the same address as another one; on loopback every node shares one
# address, so a fleet of 64 at the default limit has its own fetches and pushes
# killed mid-way — a limit a lab of separate machines does not hit that way.
#
# With LAYOUT=own every node publishes to a branch of its own, rx-results/<NODE>
# (`rxnode node set-publish-ref own`, docs/publishing.md#one-ref-per-node), so no
# publication races another; "landed" then counts the nodes whose own branch on
# the origin holds their result, and the main PC's `results` (newest 50 across
# every branch) is timed too.
#
# usage: scripts/bench-fleet.sh [SIZES] [RXNODE]
#   SIZES      fleet sizes, default "8 16 32 64"
#   RXNODE     the binary, default target/release/rxnode
#   LAYOUT     shared (every node on rx-node, the default) or own
#   WATCHERS   1 (default): each node runs a watcher publishing its status; 0: none,
#              and each fleet ends as soon as every publication has ended
#   FLEET_SECONDS  how long each fleet runs after its publications start (default 120)
#   INTERVAL   heartbeat interval in seconds (default 2)
#   DAEMON_MAX_CONNECTIONS  git daemon's --max-connections (default 256; git's own
#              default is 32; 0 = unlimited)
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES="${1:-8 16 32 64}"
BIN="$(realpath "${2:-${CARGO_TARGET_DIR:-target}/release/rxnode}")"
SECONDS_PER_FLEET="${FLEET_SECONDS:-120}"
INTERVAL="${INTERVAL:-2}"
MAXCONN="${DAEMON_MAX_CONNECTIONS:-256}"
LAYOUT="${LAYOUT:-shared}"
WATCH="${WATCHERS:-1}"
case "$LAYOUT" in shared|own) ;; *) echo "LAYOUT must be shared or own" >&2; exit 2 ;; esac
command -v git >/dev/null || { echo "git is needed" >&2; exit 2; }
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
    for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
export GIT_TERMINAL_PROMPT=0
G=(git -c user.name=bench -c user.email=bench@example.invalid)
now() { date +%s.%N; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binary $BIN"
if [ "$WATCH" = 1 ]; then
    echo "# layout $LAYOUT; heartbeat every ${INTERVAL} s; each fleet runs ${SECONDS_PER_FLEET} s after its publications start; git daemon --max-connections=${MAXCONN}"
else
    echo "# layout $LAYOUT; no watchers (no heartbeats); each fleet ends when its publications have; git daemon --max-connections=${MAXCONN}"
fi
printf '%-5s %-7s %-14s %-13s %-15s %-8s %-16s %-19s %-12s %s\n' \
    nodes landed "last landed s" "worst pushes" "status commits" intact "results nodes s" "alive/stale/silent" "results s" "load (1 5 15)"

for N in $SIZES; do
    D="$WORK/fleet-$N"
    mkdir -p "$D"
    "${G[@]}" init -q --bare -b video-development "$D/origin.git"
    "${G[@]}" clone -q "$D/origin.git" "$D/main" 2>/dev/null
    (cd "$D/main" && "${G[@]}" checkout -q -b video-development \
        && echo fleet > README.md && "${G[@]}" add README.md && "${G[@]}" commit -q -m start \
        && "${G[@]}" push -q origin video-development)
    "$BIN" --repo "$D/main" task new --id FLEET_BENCH_1 --title "Fleet benchmark" --force >/dev/null
    (cd "$D/main" && "${G[@]}" add -A && "${G[@]}" commit -q -m task && "${G[@]}" push -q origin video-development)
    PORT="$(free_port)"
    git daemon --reuseaddr --listen=127.0.0.1 --port="$PORT" --base-path="$D" --export-all \
        --max-connections="$MAXCONN" \
        --enable=receive-pack "$D" >/dev/null 2>&1 &
    DAEMON=$!
    PIDS+=("$DAEMON")
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
    URL="git://127.0.0.1:$PORT/origin.git"
    # Each node: clone, name, status policy, approve the task, record it done.
    for i in $(seq "$N"); do
        n="$D/rx$i"
        "${G[@]}" clone -q -b video-development "$URL" "$n"
        "$BIN" --repo "$n" node set-name "FLEET-$i" >/dev/null
        [ "$LAYOUT" = own ] && "$BIN" --repo "$n" node set-publish-ref own >/dev/null
        if [ "$WATCH" = 1 ]; then
            printf '{"status": {"publish_every_s": %s}}\n' "$INTERVAL" > "$n/.local/rxnode-policy.json"
        fi
        echo A | "$BIN" --repo "$n" watch --once --interval 0.2 >/dev/null
        "$BIN" --repo "$n" mark-completed FLEET_BENCH_1 --status PASS --note "bench" >/dev/null
    done
    # The watchers, their stdin a FIFO this script holds open: they never get an answer.
    mkfifo "$D/stdin"
    exec 9<>"$D/stdin"
    WATCHERS=()
    if [ "$WATCH" = 1 ]; then
        for i in $(seq "$N"); do
            "$BIN" --repo "$D/rx$i" watch --interval "$INTERVAL" <"$D/stdin" >/dev/null 2>"$D/watch$i.err" &
            WATCHERS+=("$!")
            PIDS+=("$!")
        done
        sleep "$INTERVAL"
    fi
    # All publish at once.
    T0="$(now)"
    for i in $(seq "$N"); do
        ( set +e
          echo "PUBLISH FLEET_BENCH_1" | "$BIN" --repo "$D/rx$i" --json publish FLEET_BENCH_1 --push \
            > "$D/pub$i.json" 2>"$D/pub$i.err"
          echo "$? $(now)" > "$D/pub$i.done" ) &
    done
    # Sample the status branches while the fleet runs.
    MAXC=0
    END=$(( $(date +%s) + SECONDS_PER_FLEET ))
    [ "$WATCH" = 1 ] || END=0
    while [ "$(date +%s)" -lt "$END" ]; do
        for i in $(seq "$N"); do
            c="$(git -C "$D/origin.git" rev-list --count "rx-status/FLEET-$i" 2>/dev/null || echo 0)"
            [ "$c" -gt "$MAXC" ] && MAXC="$c"
        done
        sleep 3
    done
    for i in $(seq "$N"); do
        for _ in $(seq 600); do [ -f "$D/pub$i.done" ] && break; sleep 0.5; done
    done
    # Where node i's result lives on the origin.
    ref_of() { if [ "$LAYOUT" = own ]; then echo "rx-results/FLEET-$1"; else echo rx-node; fi; }
    LANDED=0
    for i in $(seq "$N"); do
        git -C "$D/origin.git" cat-file -e "$(ref_of "$i"):rx-results/FLEET_BENCH_1/FLEET-$i/RX_RESULT.json" 2>/dev/null \
            && LANDED=$((LANDED + 1))
    done
    LAST="$(cat "$D"/pub*.done | awk -v t0="$T0" 'BEGIN{m=0} {if ($1==0 && $2-t0>m) m=$2-t0} END{printf "%.1f", m}')"
    FAILED="$(cat "$D"/pub*.done | awk '$1!=0' | wc -l)"
    WORST="$(python3 - "$D"/pub*.json <<'PY'
import json, sys
m = 0
for f in sys.argv[1:]:
    try:
        m = max(m, json.load(open(f)).get("push_attempts", 0))
    except (OSError, ValueError):
        pass
print(m)
PY
)"
    # A fresh copy of every branch over git://: every node's three files there,
    # byte-identical to what it published (its outbox copy of RX_RESULT.md/.json,
    # the LOG_META.json of its own local results branch).
    git clone -q --mirror "$URL" "$D/check.git" 2>/dev/null || true
    INTACT=0
    for i in $(seq "$N"); do
        p="rx-results/FLEET_BENCH_1/FLEET-$i"
        r="$(ref_of "$i")"
        git -C "$D/check.git" show "$r:$p/RX_RESULT.md" 2>/dev/null | cmp -s - "$D/rx$i/.local/rx_agent_outbox/FLEET_BENCH_1/RX_RESULT.md" \
            && git -C "$D/check.git" show "$r:$p/RX_RESULT.json" 2>/dev/null | cmp -s - "$D/rx$i/.local/rx_agent_outbox/FLEET_BENCH_1/RX_RESULT.json" \
            && cmp -s <(git -C "$D/rx$i" show "$r:$p/LOG_META.json" 2>/dev/null) <(git -C "$D/check.git" show "$r:$p/LOG_META.json" 2>/dev/null) \
            && INTACT=$((INTACT + 1))
    done
    T1="$(now)"
    "$BIN" --repo "$D/main" --json results nodes > "$D/nodes.json"
    T2="$(now)"
    if [ "$N" -le 8 ]; then
        "$BIN" --repo "$D/main" results nodes > "$D/nodes.txt" 2>&1 || true
    fi
    # alive/stale/silent as the main PC saw them (docs/protocol.md#node-status).
    ALIVE="$(python3 -c 'import json,sys; s=[n["state"] for n in json.load(open(sys.argv[1]))["nodes"]]; print("/".join(str(s.count(k)) for k in ("alive","stale","silent")))' "$D/nodes.json")"
    [ "$WATCH" = 1 ] || ALIVE="(no watchers)"
    RN="$(python3 -c "print(f'{$T2 - $T1:.2f}')")"
    T3="$(now)"
    "$BIN" --repo "$D/main" --json results --no-fetch > "$D/results.json"
    T4="$(now)"
    RS="$(python3 -c "print(f'{$T4 - $T3:.2f}')")"
    printf '%-5s %-7s %-14s %-13s %-15s %-8s %-16s %-19s %-12s %s\n' \
        "$N" "$LANDED/$N" "$LAST" "$WORST" "$MAXC" "$INTACT/$N" "$RN" "$ALIVE" "$RS" "$(cut -d' ' -f1-3 /proc/loadavg)"
    [ -f "$D/nodes.txt" ] && sed 's/^/#   | /' "$D/nodes.txt"
    if [ "$FAILED" -gt 0 ]; then
        echo "#   $FAILED publication(s) failed (exit 1; the result stays in the node's outbox for \`publish --push\`):"
        grep -ho '"message":"[^"]*' "$D"/pub*.err | cut -c12- | sed -E 's/[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+:[0-9]+/HOST:PORT/; s/commit [0-9a-f]{40}/commit …/' \
            | sort | uniq -c | sort -rn | head -6 | sed 's/^/#     /'
    fi
    for p in "${WATCHERS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
    kill "$DAEMON" 2>/dev/null || true
    wait 2>/dev/null || true
    exec 9>&-
    PIDS=()
    rm -rf "$D"
done
