#!/bin/bash
# o308: `rxnode run T1` is killed (SIGKILL, power loss) at each file rename in turn (strace injects the kill at
# rename N), then `status` and `publish T1` run. Each kill between writing a file under its temporary name and renaming
# it left the temporary for good: .local/rx_agent_outbox/T1/.RX_RESULT.md.tmp-<pid>, .RX_RESULT.json.tmp-<pid>,
# .SPECTRUM_1.tmp-<pid>.png, .local/.rx_agent_state.json.tmp-<pid>, .local/.rx_run_progress.json.tmp-<pid>,
# .git/rxnode/.ledger-checkpoint.json.tmp-<pid>; no later command removed them.
# Expected: after status and publish no temporary of the killed run is left; a file of that shape that names a live
# process, and a link of that shape (and what it names), are kept.
source "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || { echo "cannot play: strace is not installed"; exit 2; }
cap='{"op":"rx_capture","device":"driver=rxsim,serial=o308","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'
bad=""; kills=0; left=0
for n in $(seq 1 14); do
  newlab o308; policy; rxn node set-name LAB1 >/dev/null
  { hdr T1 YES YES NO; plan "$cap"; } | post; approve
  ( strace -f -qq -o $L/renames.txt -e trace=rename -e inject=rename:signal=SIGKILL:when=$n \
    "$RXN" --repo "$L/rx" --sim run T1 > $L/run.out 2>&1; echo $? > $L/run.rc ) 2>/dev/null
  at=$(grep -a 'rename(' $L/renames.txt | sed -n "${n}p" | grep -o '", "[^"]*"' | sed 's/.*\///; s/"//')
  if [ "$(cat $L/run.rc)" = 0 ]; then echo "rename $n: none (the run has fewer renames), run exit 0"; rm -rf "$L"; break; fi
  kills=$((kills + 1))
  tmps=$(cd $L/rx && find .local .git/rxnode -name '*.tmp-*' | tr '\n' ' ')
  [ -n "$tmps" ] && left=$((left + 1))
  # What is not the killed run's: a live process's temporary (this shell's PID) and a link of that shape.
  O=$L/rx/.local/rx_agent_outbox/T1; echo live > $O/.RX_RESULT.md.tmp-$$
  # (a link under .local/ makes every command refuse the checkout; in the Git directory's rxnode/ it is only not ours)
  echo elsewhere > $L/elsewhere; ln -s $L/elsewhere $L/rx/.git/rxnode/.ledger-checkpoint.json.tmp-999999
  rxn status > $L/st.out 2>&1
  echo "PUBLISH T1" | rxn publish T1 > $L/pub.out 2>&1; prc=$?
  after=$(cd $L/rx && find .local .git/rxnode -name '*.tmp-*' ! -name ".RX_RESULT.md.tmp-$$" ! -name '.ledger-checkpoint.json.tmp-999999' | tr '\n' ' ')
  echo "kill at rename $n (${at:-?}): left ${tmps:-nothing}; after status and publish (exit $prc): ${after:-nothing}"
  panics $L/*.out && bad="$bad a panic after a kill at rename $n;"
  [ -n "$after" ] && bad="$bad killed at rename $n (${at:-?}): $after still there after status and publish;"
  [ -f $O/.RX_RESULT.md.tmp-$$ ] || bad="$bad a live process's temporary was removed;"
  [ -L $L/rx/.git/rxnode/.ledger-checkpoint.json.tmp-999999 ] && [ -f $L/elsewhere ] || bad="$bad a link of a temporary's name (or what it names) was removed;"
  rm -rf "$L"
done
[ $kills -ge 5 ] && [ $left -ge 3 ] || bad="$bad only $kills kill(s) landed, $left left a temporary;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
