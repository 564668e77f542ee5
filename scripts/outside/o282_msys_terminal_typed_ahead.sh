#!/bin/bash
# o282: on Windows, an MSYS/Cygwin terminal (mintty, Git Bash) hands a native program a pipe named
# `msys-…-pty…`, which Rust and rxnode call a terminal. The prompt's discard of typed-ahead input was
# `FlushConsoleInputBuffer`, which fails on a pipe: rxnode warned and read on, so an `a` typed before the
# watcher's prompt was drawn approved the task, and the buffered read kept later lines for later prompts.
# Here a small harness (built with mingw) plays mintty: it makes such a pipe, types `a` into it, starts
# `rxnode.exe watch --dry-run` on it, and types `d` only 8 s later, well after the prompt is on the screen.
# RXN is a Windows build (rxnode.exe, scripts/check-windows.sh --build), run under Wine 8 (wine64).
# Exit 2: cannot play here.
source "$(dirname "$0")/lib.sh"
umask 077; newlab o282
wine_lab || exit 2
cat >$L/msys.c <<'C'
#include <windows.h>
#include <stdio.h>
#include <string.h>
/* msys.exe AHEAD LATER DELAY_MS CMDLINE: run CMDLINE with stdin a pipe named as an MSYS terminal's;
   AHEAD is typed before it starts, LATER after DELAY_MS; then the pipe is closed. Exit: the child's. */
static void put(HANDLE h, const char *s) { DWORD n; WriteFile(h, s, (DWORD)strlen(s), &n, NULL); }
int main(int argc, char **argv) {
  if (argc < 5) return 2;
  char name[128]; snprintf(name, sizeof name, "\\\\.\\pipe\\msys-1888ae32e00d56aa-pty%lu-from-master", GetCurrentProcessId());
  HANDLE srv = CreateNamedPipeA(name, PIPE_ACCESS_OUTBOUND, PIPE_TYPE_BYTE | PIPE_WAIT, 1, 4096, 4096, 0, NULL);
  SECURITY_ATTRIBUTES sa = { sizeof sa, NULL, TRUE };
  HANDLE cli = CreateFileA(name, GENERIC_READ, 0, &sa, OPEN_EXISTING, 0, NULL);
  if (srv == INVALID_HANDLE_VALUE || cli == INVALID_HANDLE_VALUE) { fprintf(stderr, "pipe: %lu\n", GetLastError()); return 2; }
  put(srv, argv[1]);
  STARTUPINFOA si; memset(&si, 0, sizeof si); si.cb = sizeof si; si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = cli; si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE); si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
  PROCESS_INFORMATION pi;
  if (!CreateProcessA(NULL, argv[4], NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) { fprintf(stderr, "spawn: %lu\n", GetLastError()); return 2; }
  CloseHandle(cli);
  Sleep((DWORD)atoi(argv[3]));
  put(srv, argv[2]);
  CloseHandle(srv);
  WaitForSingleObject(pi.hProcess, 60000);
  DWORD rc = 2; GetExitCodeProcess(pi.hProcess, &rc); return (int)rc;
}
C
x86_64-w64-mingw32-gcc -O2 -o $L/bin/msys.exe $L/msys.c || { echo "cannot play: mingw-w64 is not installed"; exit 2; }
cat >$L/T.md <<T
TASK_ID = T_MSYS
TASK_TITLE = typed ahead on a Git Bash terminal
SOURCE_BRANCH = video-development
EXPECTED_HEAD = $BASE
REQUIRES_APPROVAL = YES
HARDWARE_ACCESS = NO
RF_RX = NO
RF_TX = NO
ALLOW_COMMIT = NO
ALLOW_PUSH = NO

A manual task.
T
wl() { printf 'Z:%s' "${1//\//\\}"; }
$W "$(wl $L/bin/msys.exe)" $'a\n' $'d\n' 8000 "\"$(wl $L/bin/rxnode.exe)\" --repo \"$(wl $L/rx)\" watch --dry-run --task-file \"$(wl $L/T.md)\"" >$L/out 2>&1; rc=$?
$WS -k
echo "watch --dry-run on the msys pipe: exit $rc"; grep -E '^approved T_MSYS|deferred T_MSYS|discard|cannot' $L/out | cut -c1-200
grep -q '^approved T_MSYS' $L/out && {
  echo "broken: 'a' typed before the prompt was drawn approved the task on an MSYS terminal"; exit 0; }
grep -q 'deferred T_MSYS' $L/out || { echo "cannot play: neither answer was taken ($(tail -c 300 $L/out | tr '\n' ' '))"; exit 2; }
echo held; exit 1
