#!/bin/bash
# o227: a script on the main PC takes rxnode's status as the verdict under `set -o pipefail` while a reader that
# stops early (`| grep -q`, `| head -0`) closes the pipe. `validate` of an invalid task, `validate-result` of an
# invalid result and `results verify` of a tampered result ended with status 0 — "valid" — once the reader had gone
# (with a reader: 2), and a failing `doctor` 0 for 1; only capture, sweep and clkin kept their verdict. Expected:
# every verdict keeps its status into a closed pipe. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab verdictpipe; published CAP_1
peer_edit CAP_1 "d['status'] = 'FAIL'"
hdr BAD_1 YES YES NO | grep -v '^RF_TX' > "$L/bad.md"
git -C "$L/origin.git" show rx-node:rx-results/CAP_1/LAB1/RX_RESULT.json > "$L/RX_RESULT.json"
mkdir -p "$L/nowhere"
bad=""
check() { # want args...: the status with a reader, then into a pipe closed at once
  local want=$1; shift
  (cd "$L/main" && "$RXN" "$@" > /dev/null 2>"$L/e1"); local r1=$?
  (cd "$L/main" && "$RXN" "$@" 2>"$L/e2" | true; exit "${PIPESTATUS[0]}"); local r2=$?
  echo "$*: with a reader rc=$r1, into a closed pipe rc=$r2"
  [ "$r1" = "$want" ] || bad="$bad [$*: rc=$r1]"
  [ "$r2" = "$r1" ] || bad="$bad [$* | true: rc=$r2 for $r1]"
  panics "$L/e1" "$L/e2" && bad="$bad panic"
}
check 2 validate "$L/bad.md"
check 2 --json validate "$L/bad.md"
check 2 --json validate-result "$L/RX_RESULT.json"
check 2 results verify CAP_1
check 2 --json results verify CAP_1
check 1 --repo "$L/nowhere" doctor
[ -n "$bad" ] && { echo "broken: a verdict read from rxnode's status changes when the reader closes the pipe:$bad"; exit 0; }; echo held; exit 1
