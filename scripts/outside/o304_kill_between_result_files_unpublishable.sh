#!/bin/bash
# o304: `rxnode run T1` is killed (SIGKILL, power loss) at each file rename of the run in turn (strace injects
# the kill at rename N: progress, radio lock, the two result files, the spectrum picture, checkpoint, state), then
# `status` and `publish T1` run. A kill between RX_RESULT.json and RX_RESULT.md left the new PASS JSON beside the
# approval's NOT RUN Markdown: status said "its result files had been written and stand", T1 was completed, and
# publish refused it for good ("the files disagree"): a measurement that can never be published or run again.
# Expected: after every kill, status finishes the run and publish sends a result whose two files agree.
source "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || { echo "cannot play: strace is not installed"; exit 2; }
cap='{"op":"rx_capture","device":"driver=rxsim,serial=o304","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'
bad=""; kills=0
for n in $(seq 1 12); do
  newlab o304; policy; rxn node set-name LAB1 >/dev/null
  { hdr T1 YES YES NO; plan "$cap"; } | post; approve
  D=$L/rx/.local/rx_agent_outbox/T1
  ( strace -f -qq -o $L/renames.txt -e trace=rename -e inject=rename:signal=SIGKILL:when=$n \
    "$RXN" --repo "$L/rx" --sim run T1 > $L/run.out 2>&1; echo $? > $L/run.rc ) 2>/dev/null; rc=$(cat $L/run.rc)
  at=$(grep -a 'rename(' $L/renames.txt | sed -n "${n}p" | grep -o '", "[^"]*"' | sed 's/.*\///; s/"//')
  if [ $rc = 0 ]; then echo "rename $n: none (the run has fewer renames), run exit 0"; rm -rf "$L"; break; fi
  kills=$((kills + 1))
  rxn status > $L/st.out 2>&1
  echo "PUBLISH T1" | rxn publish T1 > $L/pub.out 2>&1; prc=$?
  js=$(python3 -c "import json; print(json.load(open('$D/RX_RESULT.json'))['status'])" 2>/dev/null)
  echo "kill at rename $n (${at:-?}): status: $(grep -a 'interrupted run\|INTERRUPTED run' $L/st.out | sed 's/.*did not finish; //' | cut -c1-90); publish exit $prc $(grep -a '^published\|error' $L/pub.out | head -1 | cut -c1-150); JSON ${js:-none}"
  panics $L/*.out && bad="$bad a panic after a kill at rename $n;"
  [ $prc = 0 ] || bad="$bad killed at rename $n (${at:-?}): publish T1 exit $prc ($(grep -ao 'the files disagree\|RX_RESULT.md says NOT RUN\|[^;]*' $L/pub.out | head -1 | cut -c1-80));"
  rm -rf "$L"
done
[ $kills -ge 5 ] || bad="$bad only $kills kill(s) landed;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
