#!/usr/bin/env bash
# Soak of radio health and the stall watchdog (docs/benchmarks.md#radio-health-soak),
# on the bundled simulated radio, in a lab of temp Git repositories (a bare origin, a
# main-PC clone that posts tasks, the RX checkout). Two parts:
#
#   stall   TRIALS tasks, each: a capture on an rxsim whose stream stalls 0.3 s in
#           (rx_stall_after_s=0.3), then a capture on a good rxsim. Checks that each
#           stalled capture ends PARTIAL, "stream stalled", within 3 s of the stall,
#           that the radio was re-tested, and that the following capture passes —
#           with nobody restarting anything. Prints the count and the times.
#   faults  for SECONDS: a `watch --no-prompt` watcher runs (scheduled self-tests of
#           the radio every 10 s); tasks are posted, approved with `rxnode review`
#           while it runs, and run, each on the radio serial=SOAK with a fault drawn at
#           random (none, fail_open=1, rx_stall_after_s=0, rx_stall_after_s=0.3).
#           Checks that no run is dispatched to a radio that was BAD: when the radio
#           was BAD before a run and no self-test ran until after it, the run's step
#           must be BLOCKED and rxsim must show no open of the radio by that run.
#           Occasionally `rxnode health test` on the working radio (the operator's
#           repair) returns it to GOOD.
#
# usage: scripts/soak-health.sh [TRIALS] [SECONDS]     (default 100 and 1800)
#   RXNODE=path   the rxnode binary (default target/debug/rxnode; built if missing)
#   KEEP=1        keep the lab folder
# Needs git and python3. Linux/macOS.
set -euo pipefail
cd "$(dirname "$0")/.."
TRIALS="${1:-100}"
SECONDS_FAULTS="${2:-1800}"
TARGET="${CARGO_TARGET_DIR:-target}"
RX="${RXNODE:-$TARGET/debug/rxnode}"
if [ ! -x "$RX" ]; then
    cargo build -q -p rxnode
fi
RX="$(cd "$(dirname "$RX")" && pwd)/$(basename "$RX")"
WORK="$(mktemp -d)"
WATCHER=""
cleanup() {
    if [ -n "$WATCHER" ]; then kill "$WATCHER" 2>/dev/null || true; wait "$WATCHER" 2>/dev/null || true; fi
    if [ "${KEEP:-0}" = 1 ]; then echo "# kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

BRANCH=video-development
TASK_PATH=docs/handoff/NEXT_RX_TASK.md
git init -q --bare "$WORK/origin.git"
git clone -q "$WORK/origin.git" "$WORK/main" 2>/dev/null
(
    cd "$WORK/main"
    git checkout -q -b "$BRANCH"
    git -c user.name=lab -c user.email=lab@example.invalid commit -q --allow-empty -m start
    git push -q origin "$BRANCH"
)
git clone -q -b "$BRANCH" "$WORK/origin.git" "$WORK/rx"
export RXNODE_SIM=1 NO_COLOR=1
rx() { "$RX" --repo "$WORK/rx" "$@"; }

# Post a YELLOW task whose plan is $2 (JSON) under the ID $1.
post() {
    local id="$1" plan="$2" head
    head="$(git -C "$WORK/main" rev-parse HEAD)"
    mkdir -p "$WORK/main/$(dirname "$TASK_PATH")"
    cat >"$WORK/main/$TASK_PATH" <<EOF
TASK_ID = $id
TASK_TITLE = Soak $id
SOURCE_BRANCH = $BRANCH
EXPECTED_HEAD = $head
REQUIRES_APPROVAL = YES
HARDWARE_ACCESS = YES
RF_RX = YES
RF_TX = NO
ALLOW_COMMIT = NO
ALLOW_PUSH = NO
RISK_LEVEL = YELLOW

# Soak

\`\`\`rx-plan
$plan
\`\`\`
EOF
    git -C "$WORK/main" add "$TASK_PATH"
    git -C "$WORK/main" -c user.name=lab -c user.email=lab@example.invalid commit -q -m "post $id"
    git -C "$WORK/main" push -q origin "$BRANCH"
}

capture() { # device duration
    printf '{"op": "rx_capture", "device": "%s", "frequency_hz": 100e6, "sample_rate_hz": 1e6, "gain_db": 10, "duration_s": %s}' "$1" "$2"
}

# ---- part 1: stalls ------------------------------------------------------------------
if [ "$TRIALS" -gt 0 ]; then
    echo "# part 1: $TRIALS stalled captures (rx_stall_after_s=0.3), each followed by a good one"
    STALL_DEV="driver=rxsim,serial=STALL,rx_stall_after_s=0.3"
    : >"$WORK/stall.tsv"
    for i in $(seq 1 "$TRIALS"); do
        id="SOAK_STALL_$i"
        post "$id" "{\"steps\": [$(capture "$STALL_DEV" 2.0), $(capture driver=rxsim,serial=GOOD 0.2)]}"
        printf 'A\n' | rx watch --once --interval 0.2 >/dev/null 2>&1
        t0=$(date +%s.%N)
        rx run "$id" >/dev/null 2>&1 || true
        t1=$(date +%s.%N)
        python3 - "$WORK/rx/.local/rx_agent_outbox/$id/RX_RESULT.json" "$t0" "$t1" >>"$WORK/stall.tsv" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["captures"]
st = [k["status"] for k in r["checks"]]
stalled = c[0].get("stop_reason") == "stalled"
retested = any("re-tested: PASS" in e for e in r["errors"])
ok = st == ["PARTIAL", "PASS"] and stalled and retested and c[0]["duration_s"] < 0.3 + 3.0
print(f'{int(ok)}\t{c[0]["duration_s"]:.3f}\t{c[0]["samples_received"]}\t{float(sys.argv[3]) - float(sys.argv[2]):.3f}\t{",".join(st)}')
EOF
    done
    python3 - "$WORK/stall.tsv" <<'EOF'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]) if l.strip()]
ok = sum(int(r[0]) for r in rows)
cap = sorted(float(r[1]) for r in rows)
run = sorted(float(r[3]) for r in rows)
print(f"trials {len(rows)}: {ok} ended PARTIAL (stalled) within 3 s of the stall, re-tested, next capture PASS")
print(f"stalled capture duration (stall at 0.3 s): median {statistics.median(cap):.3f} s, max {cap[-1]:.3f} s")
print(f"whole run (both captures, the re-test, the result): median {statistics.median(run):.3f} s, max {run[-1]:.3f} s")
bad = [r for r in rows if r[0] != "1"]
for r in bad[:5]:
    print("NOT OK:", "\t".join(r).strip())
sys.exit(0 if ok == len(rows) else 1)
EOF
fi

# ---- part 2: random faults under an unattended watcher ----------------------------------
echo "# part 2: random faults for $SECONDS_FAULTS s under watch --no-prompt"
mkdir -p "$WORK/rx/.local"
printf '{"health": {"self_test_every_s": 10, "radios": ["driver=rxsim,serial=SOAK"]}}\n' >"$WORK/rx/.local/rxnode-policy.json"
rx watch --once --interval 0.2 </dev/null >/dev/null 2>&1 # makes .local ignored, first self-test
# The binary itself in the background (not the rx function: its subshell's PID would be
# killed, not the watcher's).
"$RX" --repo "$WORK/rx" watch --no-prompt --interval 0.5 </dev/null >"$WORK/watcher.log" 2>&1 &
WATCHER=$!
FAULTS=("" ",fail_open=1" ",rx_stall_after_s=0" ",rx_stall_after_s=0.3")
health_of() { rx --json health | python3 -c 'import json,sys; print(next((r["health"] for r in json.load(sys.stdin)["radios"] if r["identity"]=="driver=rxsim,serial=SOAK"), "UNTESTED"))'; }
tests_of() { grep -c '"event":"self_test".*serial=SOAK' "$WORK/rx/.local/rx_agent_ledger.jsonl" || true; }
end=$(( $(date +%s) + SECONDS_FAULTS ))
n=0 checked=0 checked_good=0 wrongly_blocked=0 racy=0 violations=0 blocked=0 dispatched=0
declare -A statuses=()
while [ "$(date +%s)" -lt "$end" ]; do
    n=$((n + 1))
    id="SOAK_FAULT_$n"
    fault="${FAULTS[$((RANDOM % ${#FAULTS[@]}))]}"
    post "$id" "{\"steps\": [$(capture "driver=rxsim,serial=SOAK$fault" 0.5)]}"
    for _ in $(seq 1 100); do
        grep -q "\"$id\"" "$WORK/rx/.local/rx_agent_state.json" 2>/dev/null && break
        sleep 0.1
    done
    printf 'A\n' | rx review "$id" >/dev/null 2>&1 || { echo "review $id failed"; continue; }
    # The count first, then the health: a self-test landing between the two makes the
    # count differ afterwards, so a stale reading is never judged.
    tests_before="$(tests_of)"
    before="$(health_of)"
    events="$WORK/events-$n.log"
    RXSIM_EVENT_LOG="$events" rx run "$id" >/dev/null 2>&1 || true
    tests_after="$(tests_of)"
    result="$WORK/rx/.local/rx_agent_outbox/$id/RX_RESULT.json"
    # The step's status; whether the health guard blocked it (its reason names the BAD
    # radio); how many self-tests the run made itself (its re-tests after a failure).
    read -r step_status health_blocked own_tests <<<"$(python3 - "$result" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
text = json.dumps(r)
print(r["checks"][0]["status"], int("is BAD since" in text),
      sum(e.count("re-tested:") for e in r.get("errors", [])))
PY
)"
    statuses[$step_status]=$(( ${statuses[$step_status]:-0} + 1 ))
    opened=0
    grep -q "make serial=SOAK" "$events" 2>/dev/null && opened=1
    [ "$opened" = 1 ] && dispatched=$((dispatched + 1))
    # Self-tests by others (the watcher's schedule) while the run ran: the health the
    # run met may then differ from the one read before it, so the run is not judged.
    foreign=$(( tests_after - tests_before - own_tests ))
    if [ "$foreign" -ne 0 ]; then
        racy=$((racy + 1))
    elif [ "$before" = BAD ]; then
        checked=$((checked + 1))
        if [ "$opened" = 1 ] || [ "$step_status" != BLOCKED ] || [ "$health_blocked" != 1 ]; then
            violations=$((violations + 1))
            echo "VIOLATION: $id ran on a BAD radio (step $step_status, opened=$opened)"
        else
            blocked=$((blocked + 1))
        fi
    else
        # GOOD or UNTESTED at dispatch: the run must reach the radio, not be held back
        # by the health guard (a fail_open fault fails the open itself).
        checked_good=$((checked_good + 1))
        if [ "$health_blocked" = 1 ]; then
            wrongly_blocked=$((wrongly_blocked + 1))
            echo "WRONGLY BLOCKED: $id met a $before radio but the health guard blocked it"
        fi
    fi
    # Now and then the operator repairs the radio: a self-test of the working radio.
    if [ $((RANDOM % 8)) = 0 ]; then
        rx health test driver=rxsim,serial=SOAK >/dev/null 2>&1 || true
    fi
done
kill "$WATCHER" 2>/dev/null || true
wait "$WATCHER" 2>/dev/null || true
WATCHER=""
transitions=$(grep -c '"event":"radio_health".*serial=SOAK' "$WORK/rx/.local/rx_agent_ledger.jsonl" || true)
selftests=$(grep -c '"event":"self_test".*serial=SOAK' "$WORK/rx/.local/rx_agent_ledger.jsonl" || true)
echo "runs $n in $SECONDS_FAULTS s; step statuses: $(for k in "${!statuses[@]}"; do printf '%s %s; ' "$k" "${statuses[$k]}"; done)"
echo "radio opened by $dispatched runs; $transitions health changes; $selftests self-tests (watcher, re-tests, operator)"
echo "judged runs (no self-test by another process while they ran): $(( checked + checked_good )) of $n"
echo "  met a BAD radio: $checked — blocked without opening it: $blocked; violations (dispatched to a BAD radio): $violations"
echo "  met a GOOD or UNTESTED radio: $checked_good — wrongly blocked by the health guard: $wrongly_blocked"
echo "runs during which the watcher's self-test ran (not judged): $racy"
[ "$violations" = 0 ] && [ "$wrongly_blocked" = 0 ]
