#!/usr/bin/env bash
# The node's loop with rxnode.exe under Wine, against a bare origin, as the Linux
# integration tests drive it (tests/it/watch/manual.rs): the main PC writes a task
# (`task new`), the RX laptop names itself, runs `doctor` and `validate`, approves
# the task in `watch --once` (typed on stdin), gives the manual task's result
# (`mark-completed`), publishes it (`publish --push`, confirmation typed), and the
# main PC reads it (`results`). Checked: exit codes, what landed on `rx-node`, the
# ledger, and that a radio command without SoapySDR names PothosSDR; `results` once
# more over a git daemon on loopback.
#
# Windows paths throughout (drive letters, backslashes), a lab under a folder name
# with spaces, and task files with CRLF line ends. No SoapySDR is installed in the
# Wine prefix: that is the PC this checks.
#
#   scripts/windows/wine-loop.sh PATH/TO/rxnode.exe
#   scripts/windows/wine-loop.sh --unit-tests TEST.exe FILTER…   (a test executable)
# Run by scripts/check-windows.sh; the Wine prefix is cached in target/windows/.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
UNIT_TESTS=0
if [ "${1:-}" = --unit-tests ]; then
    UNIT_TESTS=1
    shift
fi
EXE_SRC="${1:?usage: wine-loop.sh [--unit-tests] PATH/TO/rxnode.exe [FILTER…]}"
shift
WORK="$ROOT/target/windows"
MINGW=x86_64-w64-mingw32
BRANCH=video-development

die() {
    echo "wine-loop: FAIL: $*" >&2
    exit 1
}
WINE=""
for w in /usr/lib/wine/wine64 "$(command -v wine64 || true)" "$(command -v wine || true)"; do
    if [ -n "$w" ] && [ -x "$w" ]; then
        WINE="$w"
        break
    fi
done
[ -n "$WINE" ] || die "wine64 is not installed (Debian: apt-get install wine wine64)"
WINESERVER=""
for w in /usr/lib/wine/wineserver64 /usr/lib/wine/wineserver "$(command -v wineserver || true)"; do
    if [ -n "$w" ] && [ -x "$w" ]; then
        WINESERVER="$w"
        break
    fi
done
[ -n "$WINESERVER" ] || die "wineserver is not installed (Debian: apt-get install wine wine64)"
command -v git >/dev/null || die "git is not installed (the lab's origin and main PC use it)"
command -v python3 >/dev/null || die "python3 is not installed (the checks read JSON with it)"

# Wine derives a file's owner and DACL from its unix owner and mode, and creates
# files with the process umask: a private umask makes a new file show what Windows
# shows for one in the operator's profile (this user alone). The trust root then
# checks them for real (docs/safety.md#windows).
umask 077
export WINEDEBUG=-all
export WINEPREFIX="$WORK/wineprefix"
# No Gecko/Mono installers: console programs only.
export WINEDLLOVERRIDES="mscoree,mshtml="
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "== creating the Wine prefix (target/windows/wineprefix, once) =="
    "$WINE" wineboot --init >/dev/null 2>&1 || true
    # wineboot returns before the wine server has written the prefix's registry
    # files: wait for the server to finish (and exit) before looking for them.
    "$WINESERVER" -w >/dev/null 2>&1 || true
    [ -f "$WINEPREFIX/system.reg" ] || die "wineboot did not create $WINEPREFIX"
fi

# One wine server for the whole run. Left to itself the server exits 3 s after its
# last client, and a client that starts while it is exiting gets "wine client
# error:0: recvmsg: Connection reset by peer" before the exe has run: the server
# stays up while this script runs (and 30 s of idle after, should the script be
# killed) and is stopped when it ends.
"$WINESERVER" -p30 >/dev/null 2>&1 || die "cannot start the wine server ($WINESERVER -p30)"
DAEMON_PID_FILE=""
cleanup() {
    if [ -n "$DAEMON_PID_FILE" ] && [ -f "$DAEMON_PID_FILE" ]; then
        kill "$(cat "$DAEMON_PID_FILE")" 2>/dev/null || true
    fi
    "$WINESERVER" -k >/dev/null 2>&1 || true
}
trap cleanup EXIT

# The lab, under a folder name with spaces.
LAB="$WORK/wine lab"
rm -rf "$LAB"
mkdir -p "$LAB/bin"
BIN="$LAB/bin"
# Wine 8 has no bcryptprimitives.dll!ProcessPrng, which Rust's std calls: a test
# shim beside the exe (scripts/windows/processprng-shim.c; never shipped).
"$MINGW-gcc" -O2 -shared -o "$BIN/bcryptprimitives.dll" scripts/windows/processprng-shim.c \
    -ladvapi32 || die "building the ProcessPrng shim failed"

if [ "$UNIT_TESTS" = 1 ]; then
    cp "$EXE_SRC" "$BIN/unit-tests.exe"
    echo "== unit tests under Wine: $* =="
    for filter in "$@"; do
        # Their temp folders are made in the prefix's %TEMP%, with this umask.
        out="$("$WINE" "$BIN/unit-tests.exe" "$filter" --test-threads 1 2>&1)" || {
            printf '%s\n' "$out"
            die "unit tests $filter failed under Wine"
        }
        printf '%s\n' "$out"
        # A filter that matches no test (a test compiled out) is a failure, not a pass.
        grep -q '^running [1-9]' <<<"$out" || die "unit tests $filter: no test ran under Wine"
    done
    exit 0
fi

cp "$EXE_SRC" "$BIN/rxnode.exe"
# Z: is Wine's view of /: a Linux path as Windows sees it (Z:\…\wine lab\…).
winpath() { printf 'Z:%s' "${1//\//\\}"; }
W_EXE="$(winpath "$BIN/rxnode.exe")"

ORIGIN="$LAB/origin.git"
MAIN="$LAB/main pc"
RX="$LAB/rx laptop"
git init -q --bare "$ORIGIN"
git clone -q "$ORIGIN" "$MAIN" 2>/dev/null
git -C "$MAIN" config core.autocrlf false
git -C "$MAIN" config user.name "main pc"
git -C "$MAIN" config user.email "main@lab.invalid"
git -C "$MAIN" checkout -q -b "$BRANCH"
echo "lab repo" >"$MAIN/README.md"
git -C "$MAIN" add README.md
git -C "$MAIN" commit -q -m start
git -C "$MAIN" push -q origin "$BRANCH"
git clone -q -b "$BRANCH" "$ORIGIN" "$RX"
# Both clones fetch from the origin by its Windows path.
git -C "$MAIN" remote set-url origin "$(winpath "$ORIGIN")"
git -C "$RX" remote set-url origin "$(winpath "$ORIGIN")"
W_MAIN="$(winpath "$MAIN")"
W_RX="$(winpath "$RX")"

OUT="$LAB/out"
mkdir -p "$OUT"
n=0
# rx EXPECTED_EXIT STDIN ARGS… — rxnode.exe under Wine; stdout/stderr kept in $OUT.
rx() {
    local want="$1" input="$2"
    shift 2
    n=$((n + 1))
    local got=0
    printf '%s' "$input" | "$WINE" "$W_EXE" "$@" >"$OUT/$n.out" 2>"$OUT/$n.err" || got=$?
    # Wine's own client failing to reach its server says nothing of rxnode, and
    # the exe has not run when that is all there is; nor has it when a failure
    # printed nothing at all (rxnode names every failure; seen once under Wine 8
    # after many runs): said, and tried once more.
    if [ ! -s "$OUT/$n.out" ] && { { grep -q '^wine client error' "$OUT/$n.err" &&
        ! grep -qv '^wine client error' "$OUT/$n.err"; } ||
        { [ "$got" != 0 ] && [ ! -s "$OUT/$n.err" ]; }; }; then
        echo "  (wine: $(cat "$OUT/$n.err"); exit $got with nothing printed: the exe did not run; once more)"
        "$WINESERVER" -p30 >/dev/null 2>&1 || true
        got=0
        printf '%s' "$input" | "$WINE" "$W_EXE" "$@" >"$OUT/$n.out" 2>"$OUT/$n.err" || got=$?
    fi
    echo "  rxnode.exe $* -> exit $got"
    if [ "$got" != "$want" ]; then
        echo "--- stdout" >&2
        cat "$OUT/$n.out" >&2
        echo "--- stderr" >&2
        cat "$OUT/$n.err" >&2
        die "rxnode.exe $* exited $got, expected $want"
    fi
}
last_out() { cat "$OUT/$n.out"; }
last_err() { cat "$OUT/$n.err"; }
expect_in() { # expect_in TEXT WHAT — TEXT must contain WHAT
    grep -qF -- "$2" <<<"$1" || die "expected \"$2\" in: $1"
}

echo "== the node's loop under Wine ($("$WINE" --version 2>/dev/null || echo wine)) =="
rx 0 "" --version
expect_in "$(last_out)" "rxnode"

# The main PC writes the task (EXPECTED_HEAD = the branch's head, read by rxnode)
# and posts it with CRLF line ends, as a Windows editor saves it.
rx 0 "" --repo "$W_MAIN" task new --id T_WIN --title "Check the lab clock from Windows" \
    --out "$W_MAIN\\docs\\handoff\\NEXT_RX_TASK.md"
TASK="$MAIN/docs/handoff/NEXT_RX_TASK.md"
[ -f "$TASK" ] || die "task new wrote no $TASK"
grep -q "^TASK_ID = T_WIN" "$TASK" || die "task new wrote: $(cat "$TASK")"
sed -i 's/\r*$/\r/' "$TASK"
grep -q $'\r$' "$TASK" || die "the task file has no CRLF line ends"
git -C "$MAIN" add docs/handoff/NEXT_RX_TASK.md
git -C "$MAIN" commit -q -m "post T_WIN"
git -C "$MAIN" push -q "$ORIGIN" "$BRANCH" # Linux git: the origin by its Linux path

# The RX laptop.
rx 0 "" --repo "$W_RX" node set-name LAB-WIN1
# No SoapySDR on this PC: doctor says what is missing, naming PothosSDR; the
# exe starts and every other check runs.
rx 1 "" --repo "$W_RX" doctor
expect_in "$(last_out)$(last_err)" "PothosSDR"
# The watcher as a scheduled task: the exact schtasks line, with this checkout.
rx 0 "" --repo "$W_RX" service install
expect_in "$(last_out)" "schtasks /Create /F /TN \"rxnode watcher\" /SC ONLOGON"
expect_in "$(last_out)" "--repo \\\"$W_RX\\\" "
rx 0 "" --repo "$W_RX" validate "$W_MAIN\\docs\\handoff\\NEXT_RX_TASK.md"
# Approve in the watcher, typed on stdin.
rx 0 $'A\n' --repo "$W_RX" watch --once --interval 0.2
python3 - "$RX" <<'EOF' || die "T_WIN is not approved in the state file"
import json, sys
s = json.load(open(sys.argv[1] + "/.local/rx_agent_state.json"))
assert s["tasks"]["T_WIN"]["status"] == "approved", s
EOF
rx 0 "" --repo "$W_RX" mark-completed T_WIN --status PASS --note "clock checked on the Windows laptop"
rx 0 "" --repo "$W_RX" validate-result T_WIN
rx 0 $'PUBLISH T_WIN\n' --repo "$W_RX" publish T_WIN --push
# What landed on rx-node in the origin.
landed="$(git --git-dir="$ORIGIN" ls-tree -r --name-only rx-node)" ||
    die "no rx-node branch in the origin after publish --push"
expect_in "$landed" "T_WIN"
expect_in "$landed" "RX_RESULT.json"
python3 - "$RX" <<'EOF' || die "the ledger does not show the loop"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1] + "/.local/rx_agent_ledger.jsonl", encoding="utf-8")]
mine = [e["event"] for e in events if e.get("task_id") == "T_WIN"]
s = json.load(open(sys.argv[1] + "/.local/rx_agent_state.json"))
assert s["tasks"]["T_WIN"]["status"] == "completed", s["tasks"]["T_WIN"]
assert len(mine) >= 3, mine
print("  ledger for T_WIN:", ", ".join(mine))
EOF
# The checkout is untouched by rxnode (its files stay under .local/, ignored).
[ -z "$(git -C "$RX" status --porcelain --ignored=no)" ] ||
    die "the RX checkout is not clean: $(git -C "$RX" status --porcelain)"

# The trust root on Windows, as far as Wine shows it: a key other users may read
# and a ledger with a second name are refused (exit 3), then pass again.
KEY="$RX/.git/rxnode/key"
[ -f "$KEY" ] || die "no node key at $KEY after the approval"
rx 0 "" --repo "$W_RX" status
chmod o+r "$KEY"
rx 3 "" --repo "$W_RX" status
expect_in "$(last_err)" "readable or writable by other users"
chmod o-r "$KEY"
ln "$RX/.local/rx_agent_ledger.jsonl" "$LAB/ledger second name"
rx 3 "" --repo "$W_RX" status
expect_in "$(last_err)" "2 hard links"
rm "$LAB/ledger second name"
chmod o+w "$RX/.local/rx_agent_state.json"
rx 3 "" --repo "$W_RX" status
expect_in "$(last_err)" "writable by other users"
chmod o-w "$RX/.local/rx_agent_state.json"
rx 0 "" --repo "$W_RX" status

# One watcher at a time: a watcher running in the background holds .local\rxnode.lock,
# and a second one is refused naming it (exit 3), its lock left alone; once the first
# has ended, its lock is stale and the next watcher takes it over (a Windows process
# is looked up by its ID: `tasklist`, a stub that prints nothing under Wine, had every
# live holder taken for dead).
"$WINE" "$W_EXE" --repo "$W_RX" watch --interval 30 </dev/null >"$OUT/bg-watch.out" 2>&1 &
BG_WATCH=$!
for _ in $(seq 1 100); do
    [ -f "$RX/.local/rxnode.lock" ] && break
    sleep 0.2
done
[ -f "$RX/.local/rxnode.lock" ] || die "the background watcher took no lock: $(cat "$OUT/bg-watch.out")"
held_by="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$RX/.local/rxnode.lock")"
rx 3 "" --repo "$W_RX" watch --once --interval 0.2
expect_in "$(last_err)" "another rxnode holds"
expect_in "$(last_err)" "PID $held_by "
rx 0 "" --repo "$W_RX" status
expect_in "$(last_out)" "watcher:    running"
grep -q lock_taken_over "$RX/.local/rx_agent_ledger.jsonl" &&
    die "a live watcher's lock was taken over: $(grep lock_taken_over "$RX/.local/rx_agent_ledger.jsonl")"
kill "$BG_WATCH" 2>/dev/null || true
wait "$BG_WATCH" 2>/dev/null || true
for _ in $(seq 1 50); do
    "$WINE" "$W_EXE" --repo "$W_RX" status 2>/dev/null | grep -q "watcher:    running" || break
    sleep 0.2
done
rx 0 "" --repo "$W_RX" watch --once --interval 0.2
expect_in "$(last_err)" "taking over stale lock"
expect_in "$(last_err)" "PID $held_by "

# The main PC reads the result.
rx 0 "" --repo "$W_MAIN" results
expect_in "$(last_out)" "T_WIN"
expect_in "$(last_out)" "PASS"

# The same over the network: a git daemon on loopback, read through Wine's sockets.
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
git daemon --export-all --base-path="$LAB" --listen=127.0.0.1 --port="$PORT" --reuseaddr \
    --detach --pid-file="$LAB/git-daemon.pid" || die "git daemon did not start"
DAEMON_PID_FILE="$LAB/git-daemon.pid"
for _ in 1 2 3 4 5 6 7 8 9 10; do
    git ls-remote "git://127.0.0.1:$PORT/origin.git" >/dev/null 2>&1 && break
    sleep 0.5
done
git -C "$MAIN" remote add lab-daemon "git://127.0.0.1:$PORT/origin.git"
rx 0 "" --repo "$W_MAIN" --remote lab-daemon results
expect_in "$(last_out)" "T_WIN"

# A clone deeper than Git opens on Windows (260 characters with its .git files): said
# as such, with the fix, never "not a Git checkout" (for the RX laptop and the main PC).
DEEP="$LAB/deep"
for i in 01 02 03 04 05 06 07 08 09 10; do DEEP="$DEEP/folder_${i}_abcdefghijklmnopqrst"; done
mkdir -p "$DEEP"
git clone -q -b "$BRANCH" "$ORIGIN" "$DEEP/rx"
rx 1 "" --repo "$(winpath "$DEEP/rx")" status
expect_in "$(last_err)" "260 characters (MAX_PATH)"
expect_in "$(last_err)" "move the clone to a shorter folder"
rx 1 "" --repo "$(winpath "$DEEP/rx")" results
expect_in "$(last_err)" "260 characters (MAX_PATH)"

# A radio command on a PC without SoapySDR: refused with the fix, no crash.
rx 1 "" --repo "$W_RX" inventory
expect_in "$(last_err)" "PothosSDR"
expect_in "$(last_err)" "SoapySDR.dll"
rx 1 "" --repo "$W_RX" --sim capture -d driver=rxsim -f 100M -r 1M -t 0.1
expect_in "$(last_err)" "PothosSDR"

# The radio lock folder (%LOCALAPPDATA%\rxnode\radio-locks, made by the capture above)
# owned by another user is refused before any radio is locked or opened, as on unix
# (Wine shows a file of another unix user as owned by S-1-5-7; chown needs root).
LOCKS="$WINEPREFIX/drive_c/users/$(id -un)/AppData/Local/rxnode/radio-locks"
[ -d "$LOCKS" ] || die "no radio lock folder at $LOCKS after a capture"
if [ "$(id -u)" = 0 ]; then
    chown nobody "$LOCKS"
    rx 3 "" --repo "$W_RX" --sim capture -d driver=rxsim -f 100M -r 1M -t 0.1
    expect_in "$(last_err)" "radio lock folder"
    expect_in "$(last_err)" "not by this user"
    chown "$(id -u)" "$LOCKS"
    rx 1 "" --repo "$W_RX" --sim capture -d driver=rxsim -f 100M -r 1M -t 0.1
    expect_in "$(last_err)" "PothosSDR"
else
    echo "  (not checked without root: a radio lock folder of another owner)"
fi

echo "wine-loop: ok ($n rxnode.exe runs)"
