#!/usr/bin/env bash
# Keyed time of an authorized 1 s tone when `rxnode run` or its TX guard process is
# frozen by SIGSTOP 0.3 s into the tone, by the radio's own account: rxsim's event log,
# from `activateStream TX` to `deactivateStream TX` or to the death of the process that
# held the stream (`exitWhileActive TX`). The bound is the permit + 0.5 s = 1.5 s
# (docs/safety.md#the-tx-guard-process). Prints every trial, then max and median per case.
# usage: scripts/guard-keyed-time.sh [TRIALS] [RXNODE]   (20 trials; target/debug/rxnode)
set -euo pipefail
cd "$(dirname "$0")/.."
TRIALS="${1:-20}"
RXN="$(realpath "${2:-${CARGO_TARGET_DIR:-target}/debug/rxnode}")"
export GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 NO_COLOR=1 RXNODE_SIM=1
L="$(mktemp -d)"
trap 'rm -rf "$L"' EXIT
export HOME="$L/home"
mkdir -p "$HOME"
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binary $RXN"
G() { git -c user.name=MainPC -c user.email=m@x.invalid -c init.defaultBranch=main "$@"; }
G init --bare -q "$L/origin.git"
G clone -q "$L/origin.git" "$L/main" 2>/dev/null
(cd "$L/main" && G checkout -q -b video-development && echo lab >README.md && G add -A && G commit -qm start && G push -q origin video-development)
G clone -q -b video-development "$L/origin.git" "$L/rx" 2>/dev/null
mkdir -p "$L/rx/.local"
echo '{"tx":{"allowed_ranges_hz":[[433.05e6,434.79e6]],"max_gain_db":10,"max_duration_s":2}}' >"$L/rx/.local/rxnode-policy.json"
chmod 600 "$L/rx/.local/rxnode-policy.json"
BASE=$(git -C "$L/main" rev-parse HEAD)
post() { # id
  mkdir -p "$L/main/docs/handoff"
  {
    printf 'TASK_ID = %s\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\nEXPECTED_HEAD = %s\nREQUIRES_APPROVAL = YES\n' "$1" "$BASE"
    printf 'HARDWARE_ACCESS = YES\nRF_RX = NO\nRF_TX = YES\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n'
    printf '\n# task\n\n```rx-plan\n{"steps":[{"op":"tx_tone","device":"driver=rxsim,serial=%s","frequency_hz":433.92e6,"sample_rate_hz":1e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":1}]}\n```\n' "$1"
  } >"$L/main/docs/handoff/NEXT_RX_TASK.md"
  (cd "$L/main" && G add -A && G commit -qm "post $1" && G push -q origin video-development)
  echo A | "$RXN" --repo "$L/rx" watch --once --interval 0.2 >/dev/null 2>&1
}
keyed() { # log -> seconds keyed, or "open" when never keyed off
  python3 - "$1" <<'EOF'
import sys
on = {}; off = {}
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) < 4 or f[3] != "TX":
        continue
    if f[2] == "activateStream":
        on.setdefault(f[1], float(f[0]))
    elif f[2] in ("deactivateStream", "exitWhileActive") and f[1] in on:
        off.setdefault(f[1], float(f[0]))
if not on:
    print("never"); sys.exit()
pid, t = next(iter(on.items()))
print("%.3f" % (off[pid] - t) if pid in off else "open")
EOF
}
for target in run guard; do
  results=()
  for i in $(seq 1 "$TRIALS"); do
    id="STOP_${target^^}_$i"
    post "$id"
    log="$L/$id.log"
    : >"$log"
    mkfifo "$L/in.$id"
    (RXSIM_EVENT_LOG="$log" setsid "$RXN" --repo "$L/rx" --sim run "$id" <"$L/in.$id" >"$L/out.$id" 2>&1 || true) &
    exec 3>"$L/in.$id"
    echo 'AUTHORIZE RF TX' >&3
    for _ in $(seq 500); do grep -q ' activateStream TX' "$log" && break; sleep 0.01; done
    sleep 0.3
    rp=$(pgrep -f -- "--repo $L/rx --sim run $id\$" | head -1)
    gp=$(pgrep -P "$rp" -f -- "tx-guard $id" | head -1)
    if [ "$target" = run ]; then kill -STOP "$rp"; else kill -STOP "$gp"; fi
    sleep 2.5
    k=$(keyed "$log")
    kill -CONT "$rp" "$gp" 2>/dev/null || true
    exec 3>&-
    wait
    echo "$target trial $i: keyed $k s"
    results+=("$k")
  done
  printf '%s\n' "${results[@]}" | python3 -c "
import sys
v=[x.strip() for x in sys.stdin if x.strip()]
bad=[x for x in v if x in ('open',)]
n=sorted(float(x) for x in v if x not in ('open','never'))
print('SIGSTOP of $target: %d trials, max %.3f s, median %.3f s, never keyed off: %d (bound 1.5 s)' % (len(v), n[-1], n[len(n)//2], len(bad)) if n else 'no keyed trial')
"
done
