#!/bin/bash
# o326: on Linux a keyed transmitter is bounded even while `rxnode run` and its TX guard are both stopped: a
# kernel SIGKILL timer ends the guard at the permit's end + 0.47 s. Windows has no such timer: while run and
# the guard were both suspended (Process Explorer's or PsSuspend's "Suspend", NtSuspendProcess), nothing
# ended the guard, and the radio stayed keyed for as long as they stayed suspended. Here a 2 s RED tone on
# rxsim is keyed, both processes are suspended the moment the key-up is in rxsim's log, and held 5 s; the
# guard must be gone by the permit's end + 0.5 s (2.5 s after the key-up) while both are still suspended.
# RXN here is a Windows build (rxnode.exe, scripts/check-windows.sh --build), run under Wine 8 (wine64), with
# SoapySDR.dll from scripts/windows/radio-under-wine.sh (target/windows/radio). Exit 2: cannot play here.
source "$(dirname "$0")/lib.sh"
umask 077; newlab o326
wine_lab || exit 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DLL=$ROOT/target/windows/radio/soapysdr/bin/SoapySDR.dll
[ -f "$DLL" ] || { echo "cannot play: no $DLL (run scripts/windows/radio-under-wine.sh once)"; exit 2; }
cp "$DLL" $L/bin/
x86_64-w64-mingw32-gcc -O2 -o $L/bin/suspend-pair.exe "$ROOT/scripts/windows/suspend-pair.c" ||
  { echo "cannot play: mingw-w64"; exit 2; }
wp() { printf 'Z:%s' "${1//\//\\}"; }
mkdir -p "$L/empty root"; export SOAPY_SDR_ROOT="$(wp "$L/empty root")"
wrx() { $W "$(wp $L/bin/rxnode.exe)" --sim --repo "$(wp $L/rx)" "$@"; }
git -C $L/rx remote set-url origin "$(wp $L/origin.git)"
policy; wrx node set-name LABW >/dev/null 2>&1
{ hdr T326 YES NO YES; plan '{"op":"tx_tone","device":"driver=rxsim,serial=wine-tx","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":2}'; } | post
echo A | wrx watch --once --interval 0.2 >$L/watch.out 2>&1
$W "$(wp $L/bin/suspend-pair.exe)" "$(wp $RXSIM_EVENT_LOG)" 5000 >$L/suspend.out 2>&1 & sp=$!
echo 'AUTHORIZE RF TX' | wrx run T326 >$L/run.out 2>$L/run.err; rc=$?
wait $sp; $WS -k
cat $L/suspend.out
echo "run: exit $rc; TX lines in rxsim's log: $(txlines)"
python3 - $L/rx/.local/rx_agent_ledger.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1], encoding="utf-8"):
    e = json.loads(l)
    if e.get("task_id") == "T326" and e["event"] in ("tx_keyed", "tx_guard_exit"):
        print("ledger:", e["event"], json.dumps(e.get("detail", ""))[:300])
PY
grep -q 'suspended' $L/suspend.out || { echo "cannot play: the pair was not suspended while keyed: $(tail -c 300 $L/run.err)"; exit 2; }
if ms=$(sed -n 's/^guard ended \([0-9]*\) ms after the key-up while both were suspended.*/\1/p' $L/suspend.out) && [ -n "$ms" ]; then
  [ "$ms" -le 2500 ] && { echo held; exit 1; }
  echo "broken: the guard of a 2 s permit ended ${ms} ms after the key-up, past the permit's end + 0.5 s"; exit 0
fi
echo "broken: with rxnode run and its TX guard both suspended, the guard of a 2 s permit was still alive 5 s after the key-up"; exit 0
