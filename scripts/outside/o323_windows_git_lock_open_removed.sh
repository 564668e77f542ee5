#!/bin/bash
# o323: a watcher that takes the single-watcher lock over from a dead rxnode removes the Git lock files its
# fetch leaves — but only those no process has open. That look was Linux-only (/proc/*/fd): on Windows "no
# process has it open" was always true, so a ref lock held open by a live Git (another program writing
# .git\refs\remotes\origin\<branch>.lock, last modified before the watcher started) was removed under it.
# RXN here is a Windows build (rxnode.exe, scripts/check-windows.sh --build), run under Wine 8 (wine64); the live
# Git is a small Windows program holding the lock file open as libgit2 does (sharing read, write and delete).
# Exit 2: cannot play here.
source "$(dirname "$0")/lib.sh"
umask 077; newlab o323
wine_lab || exit 2
cat >$L/holder.c <<'C'
#include <windows.h>
#include <stdio.h>
int wmain(int c, wchar_t **v) {
  HANDLE h = CreateFileW(v[1], GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                         OPEN_EXISTING, 0, NULL);
  if (h == INVALID_HANDLE_VALUE) { printf("cannot open: %lu\n", GetLastError()); return 1; }
  printf("holding\n"); fflush(stdout); Sleep(60000); return 0;
}
C
x86_64-w64-mingw32-gcc -municode -O1 -o $L/bin/holder.exe $L/holder.c || { echo "cannot play: mingw-w64"; exit 2; }
wp() { printf 'Z:%s' "${1//\//\\}"; }
wrx() { $W "$(wp $L/bin/rxnode.exe)" --repo "$(wp $L/rx)" "$@"; }
wrx node set-name LABW >/dev/null
# A watcher killed mid-poll: its lock stays, naming a PID that is gone.
# Wine itself in the background (not a subshell), so that the kill reaches the watcher.
$W "$(wp $L/bin/rxnode.exe)" --repo "$(wp $L/rx)" watch --interval 30 </dev/null >$L/w1.out 2>&1 & w1=$!
for _ in $(seq 1 100); do [ -f $L/rx/.local/rxnode.lock ] && break; sleep 0.2; done
sleep 1; kill -9 $w1; wait $w1 2>/dev/null; sleep 1
kill -0 $w1 2>/dev/null && { echo "cannot play: the first watcher survived its kill"; exit 2; }
# Wine gives a dead process's ID to the next process at once (the next rxnode.exe may be PID 256 again):
# the dead watcher's lock names an ID no process holds, as on a Windows laptop after a power loss.
sed -i 's/"pid":[0-9]*/"pid":65532/' $L/rx/.local/rxnode.lock
echo "dead watcher's lock: $(cat $L/rx/.local/rxnode.lock 2>/dev/null | cut -c1-120)"
# A live Git holds the tracking ref's lock open (modified a minute ago).
LK=$L/rx/.git/refs/remotes/origin/video-development.lock
mkdir -p "$(dirname $LK)"; echo "$BASE" >$LK; touch -d '-1 min' $LK
$W "$(wp $L/bin/holder.exe)" "$(wp $LK)" >$L/holder.out 2>&1 & h=$!
for _ in $(seq 1 50); do grep -q holding $L/holder.out && break; sleep 0.2; done
echo "holder: $(cat $L/holder.out)"
wrx watch --once --interval 0.2 </dev/null >$L/w2.out 2>&1; rc=$?
kill $h 2>/dev/null; wait $h 2>/dev/null; $WS -k
echo "second watch --once: exit $rc: $(tr '\n' ' ' <$L/w2.out | cut -c1-300)"
removed=$(grep -c git_lock_removed $L/rx/.local/rx_agent_ledger.jsonl 2>/dev/null)
echo "git_lock_removed in the ledger: ${removed:-0}; lock file still there: $([ -e $LK ] && echo yes || echo no)"
grep -q lock_taken_over $L/rx/.local/rx_agent_ledger.jsonl || { echo "cannot play: the dead watcher's lock was not taken over"; exit 2; }
[ "${removed:-0}" -gt 0 ] && {
  echo "broken: a Git lock file held open by a live process was removed as stale on Windows"; exit 0; }
echo held; exit 1
