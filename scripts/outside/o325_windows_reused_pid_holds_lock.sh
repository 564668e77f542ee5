#!/bin/bash
# o325: a lock records its holder's PID and, on Linux, the process's start, so a PID given to another process
# since is not taken for the holder (o300). On Windows the start was never recorded, and Windows gives an
# ended process's ID out again soon: after a watcher was killed (power cut, Task Manager) and its ID given to
# another process, the next `watch` was refused as "another rxnode holds … PID N" while that process lived.
# Here the killed watcher's lock is pointed at a live Windows program's ID, as Windows' reuse leaves it.
# RXN here is a Windows build (rxnode.exe, scripts/check-windows.sh --build), run under Wine 8 (wine64).
# Exit 2: cannot play here.
source "$(dirname "$0")/lib.sh"
umask 077; newlab o325
wine_lab || exit 2
wp() { printf 'Z:%s' "${1//\//\\}"; }
wrx() { $W "$(wp $L/bin/rxnode.exe)" --repo "$(wp $L/rx)" "$@"; }
wrx node set-name LABW >/dev/null
# Wine itself in the background (not a subshell), so that the kill reaches the watcher.
$W "$(wp $L/bin/rxnode.exe)" --repo "$(wp $L/rx)" watch --interval 30 </dev/null >$L/w1.out 2>&1 & w1=$!
for _ in $(seq 1 100); do [ -f $L/rx/.local/rxnode.lock ] && break; sleep 0.2; done
sleep 1; kill -9 $w1; wait $w1 2>/dev/null; sleep 1
kill -0 $w1 2>/dev/null && { echo "cannot play: the first watcher survived its kill"; exit 2; }
# Windows gives the dead watcher's ID to another process: here a Windows program that sleeps (Wine hands IDs
# out in its own order, so the lock is pointed at that program's ID, as Windows' reuse would leave it).
cat >$L/sleeper.c <<'C'
#include <windows.h>
#include <stdio.h>
int main(void) { printf("%lu\n", GetCurrentProcessId()); fflush(stdout); Sleep(60000); return 0; }
C
x86_64-w64-mingw32-gcc -O1 -o $L/bin/sleeper.exe $L/sleeper.c || { echo "cannot play: mingw-w64"; exit 2; }
$W "$(wp $L/bin/sleeper.exe)" >$L/sleeper.out 2>&1 & s=$!
for _ in $(seq 1 50); do [ -s $L/sleeper.out ] && break; sleep 0.2; done
spid=$(tr -dc 0-9 <$L/sleeper.out); [ -n "$spid" ] || { echo "cannot play: no sleeper PID"; exit 2; }
sed -i "s/\"pid\":[0-9]*/\"pid\":$spid/" $L/rx/.local/rxnode.lock
echo "killed watcher's lock, its PID now the sleeper's: $(cut -c1-200 $L/rx/.local/rxnode.lock 2>/dev/null)"
wrx watch --once --interval 0.2 </dev/null >$L/w2.out 2>&1; rc=$?; kill $s 2>/dev/null; wait $s 2>/dev/null; $WS -k
echo "next watch --once: exit $rc: $(tr '\n' ' ' <$L/w2.out | sed "s#Z:[^ ]*rx[\\/]#<rx>/#g" | cut -c1-260)"
[ $rc = 3 ] && grep -q 'another rxnode holds' $L/w2.out && {
  echo "broken: the killed watcher's lock, its PID given out again, refused the next watcher"; exit 0; }
grep -q 'taking over stale lock' $L/w2.out && [ $rc = 0 ] && { echo held; exit 1; }
echo "cannot play: neither refused nor taken over (exit $rc)"; exit 2
