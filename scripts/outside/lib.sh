# Outside checks: shared lab set-up (a bare origin, a main-PC clone, an RX clone, rxsim).
# usage: RXN=/path/to/target/release/rxnode bash scripts/outside/oN_what.sh
# Each script builds its lab under /tmp, plays one attack or one odd input through the real binary,
# prints its evidence and ends with one verdict line: `held` (exit 1) or `broken: …` (exit 0).
RXN=${RXN:?set RXN to the rxnode release binary}
export GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 NO_COLOR=1
G() { git -c user.name=MainPC -c user.email=m@x.invalid -c init.defaultBranch=main "$@"; }
newlab() { # bare origin, main-PC clone, RX clone; sets L BASE RXSIM_EVENT_LOG
  L=$(mktemp -d /tmp/o1.$1.XXXXXX); export HOME=$L/home; mkdir -p $HOME
  G init --bare -q "$L/origin.git"; G clone -q "$L/origin.git" "$L/main" 2>/dev/null
  (cd "$L/main" && G checkout -q -b video-development && echo lab > README.md && G add -A && G commit -qm start && G push -q origin video-development)
  G clone -q -b video-development "$L/origin.git" "$L/rx" 2>/dev/null; mkdir -p "$L/rx/.local"
  export RXSIM_EVENT_LOG="$L/events.log"; : > "$RXSIM_EVENT_LOG"; BASE=$(git -C "$L/main" rev-parse HEAD)
}
post() { mkdir -p "$L/main/docs/handoff"; cat > "$L/main/docs/handoff/NEXT_RX_TASK.md"; (cd "$L/main" && G add -A && G commit -qm post && G push -q origin video-development); }
rxn() { "$RXN" --repo "$L/rx" "$@"; }
hdr() { printf 'TASK_ID = %s\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\nEXPECTED_HEAD = %s\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = %s\nRF_RX = %s\nRF_TX = %s\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n' "$1" "$BASE" "$2" "$3" "$4"; }
plan() { printf '\n# task\n\n```rx-plan\n{"steps":[%s]}\n```\n' "$1"; }
POL='{"rx":{"max_duration_s":10,"max_gain_db":50},"tx":{"allowed_ranges_hz":[[433.05e6,434.79e6]],"max_gain_db":10,"max_duration_s":2}}'
policy() { echo "${1:-$POL}" > "$L/rx/.local/rxnode-policy.json"; chmod 600 "$L/rx/.local/rxnode-policy.json"; }
approve() { echo A | rxn watch --once --interval 0.2 >"$L/watch.out" 2>&1; }
txlines() { grep -c ' TX ' "$RXSIM_EVENT_LOG" || true; }
panics() { grep -aE 'panicked at|internal error|RUST_BACKTRACE' "$@"; }
published() { # published ID: a lab with one real rxsim capture of task ID, run and published to rx-node by node LAB1
  policy; rxn node set-name LAB1 >/dev/null
  { hdr "$1" YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post; approve
  rxn --sim run "$1" >/dev/null 2>&1; echo "PUBLISH $1" | rxn publish "$1" --push >/dev/null 2>&1
  G clone -q -b rx-node "$L/origin.git" "$L/peer" 2>/dev/null
}
peer_edit() { # peer_edit ID PYTHON: a hostile peer rewrites rx-results/ID/LAB1/RX_RESULT.json (d = the JSON) and pushes rx-node
  (cd "$L/peer" && python3 -c "
import json
f='rx-results/$1/LAB1/RX_RESULT.json'; d=json.load(open(f))
$2
open(f,'w').write(json.dumps(d))" && G commit -qam peer && G push -qf origin HEAD:rx-node)
}
published_tone() { # published_tone ID: a lab with one authorized RED rxsim tone of task ID, run and published by node LAB1
  policy; rxn node set-name LAB1 >/dev/null
  { hdr "$1" YES NO YES; plan '{"op":"tx_tone","device":"driver=rxsim,serial=tx","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'; } | post; approve
  echo 'AUTHORIZE RF TX' | rxn --sim run "$1" >/dev/null 2>&1; echo "PUBLISH $1" | rxn publish "$1" --push >/dev/null 2>&1
  G clone -q -b rx-node "$L/origin.git" "$L/peer" 2>/dev/null
}
peer_copy() { # peer_copy FROM NEW JSON_EDIT MD_EDIT: a peer copies LAB1's result of FROM as task NEW, edits the JSON
  # (d) and the Markdown (md), makes the Markdown's JSON hash and LOG_META agree, and pushes the three files as a plain commit
  (cd "$L/peer" && python3 - "rx-results/$1/LAB1" "rx-results/$2/LAB1" "$2" "$3" "$4" <<'PY'
import hashlib, json, os, re, sys
src, dst, new, json_edit, md_edit = sys.argv[1:6]
d = json.load(open(src + '/RX_RESULT.json')); old = d['task_id']; d['task_id'] = new
exec(json_edit)
js = json.dumps(d, indent=2, sort_keys=True) + '\n'
md = open(src + '/RX_RESULT.md').read().replace(old, new)
exec(md_edit)
md = re.sub(r'json_sha256=[0-9a-f]+', 'json_sha256=' + hashlib.sha256(js.encode()).hexdigest(), md)
m = json.load(open(src + '/LOG_META.json')); m['task_id'] = new
for e in m['files']:
    body = md if e['name'] == 'RX_RESULT.md' else js
    e['bytes'] = len(body.encode()); e['sha256'] = hashlib.sha256(body.encode()).hexdigest()
os.makedirs(dst)
open(dst + '/RX_RESULT.json', 'w').write(js); open(dst + '/RX_RESULT.md', 'w').write(md)
open(dst + '/LOG_META.json', 'w').write(json.dumps(m, indent=2, sort_keys=True) + '\n')
PY
  G add -A && G commit -qm "rx-results: $2 (PASS) from LAB1

Task: $2
Node-Name: LAB1" && G push -q origin HEAD:rx-node)
}
bomb_commit() { # bomb_commit GITDIR BRANCH: a loose commit on BRANCH's tip whose message is 300 MiB of 'A' (300 KiB on disk); prints its id
  local p t; p=$(git -C "$1" rev-parse "$2"); t=$(git -C "$1" rev-parse "$2^{tree}")
  python3 - "$1" "$p" "$t" $((300<<20)) <<'PY'
import hashlib, os, sys, zlib
gitdir, parent, tree, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
head = (f"tree {tree}\nparent {parent}\nauthor M <m@x.invalid> 1700000000 +0000\n"
        f"committer M <m@x.invalid> 1700000000 +0000\n\n").encode()
hdr = f"commit {len(head) + n}\0".encode()
h = hashlib.sha1(); z = zlib.compressobj(9); out = bytearray()
for b in (hdr, head): h.update(b); out += z.compress(b)
chunk = b"A" * (1 << 20); left = n
while left:
    c = chunk[:min(left, len(chunk))]; h.update(c); out += z.compress(c); left -= len(c)
out += z.flush(); oid = h.hexdigest()
d = os.path.join(gitdir, "objects", oid[:2]); os.makedirs(d, exist_ok=True)
open(os.path.join(d, oid[2:]), "wb").write(out); print(oid)
PY
}
wine_lab() { # after newlab: RXN (rxnode.exe) in $L/bin with the ProcessPrng shim, a Wine prefix started; sets W WS.
  # Says why and returns 1 when it cannot play here (the caller exits 2).
  [ "$(head -c2 "$RXN")" = MZ ] || { echo "cannot play: RXN must be rxnode.exe, a Windows build (scripts/check-windows.sh --build)"; return 1; }
  W=/usr/lib/wine/wine64; [ -x $W ] || W=$(command -v wine64 || command -v wine)
  WS=/usr/lib/wine/wineserver64; [ -x $WS ] || WS=$(command -v wineserver)
  [ -n "$W" ] && [ -n "$WS" ] || { echo "cannot play: Wine (wine64) is not installed"; return 1; }
  export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" WINEPREFIX=${WINEPREFIX:-$L/wineprefix}
  mkdir -p $L/bin; cp "$RXN" $L/bin/rxnode.exe
  x86_64-w64-mingw32-gcc -O2 -shared -o $L/bin/bcryptprimitives.dll "$(dirname "${BASH_SOURCE[0]}")/../windows/processprng-shim.c" -ladvapi32 ||
    { echo "cannot play: mingw-w64 is not installed"; return 1; }
  [ -f "$WINEPREFIX/system.reg" ] || { $W wineboot --init >/dev/null 2>&1; $WS -w; }
  $WS -p30
}
pty_interrupt() { # pty_interrupt TEXT ARG…: run ARG… on a pty, press Ctrl-C (SIGINT) 0.2 s after TEXT appears; prints the screen, then "EXIT N" or "EXIT signal N"
  python3 - "$@" <<'PY'
import os, pty, select, signal, sys, time
text, argv = sys.argv[1].encode(), sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
out, t0, sent = b"", time.time(), False
while time.time() - t0 < 30:
    r, _, _ = select.select([fd], [], [], 0.05)
    if r:
        try: d = os.read(fd, 65536)
        except OSError: break
        if not d: break
        out += d
    if not sent and text in out:
        time.sleep(0.2); os.kill(pid, signal.SIGINT); sent = True
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
print("\nEXIT", os.WEXITSTATUS(st) if os.WIFEXITED(st) else "signal %d" % os.WTERMSIG(st))
PY
}
soapy_server() { # after newlab: a SoapySDRServer on loopback serving rxnode's rxsim module; sets SERVER (tcp://…) and SP.
  # Says why and returns 1 when it cannot play here (the caller exits 2). Needs avahi-daemon (scripts/remote-services.sh; root).
  command -v SoapySDRServer >/dev/null || { echo "cannot play: SoapySDRServer is not installed"; return 1; }
  bash "$(dirname "${BASH_SOURCE[0]}")/../remote-services.sh" >/dev/null 2>&1 || { echo "cannot play: avahi-daemon is not running (scripts/remote-services.sh)"; return 1; }
  "$RXN" --sim inventory --dry-run --json > $L/inv.txt 2>&1
  local mod; mod=$(ls $HOME/.cache/rxnode/librxsim-*.so 2>/dev/null | head -1)
  [ -n "$mod" ] || { echo "cannot play: rxnode --sim installed no rxsim module: $(head -c 200 $L/inv.txt)"; return 1; }
  local port; port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  SERVER=tcp://127.0.0.1:$port
  ( SOAPY_SDR_PLUGIN_PATH=$mod exec setsid SoapySDRServer --bind=127.0.0.1:$port > $L/server.out 2>&1 ) & SP=$!
  trap 'kill $SP 2>/dev/null' EXIT
  for _ in $(seq 100); do grep -q 'Server bound' $L/server.out && break; sleep 0.05; done
}
push_big_versions() { # push_big_versions NV SZ: the main PC pushes NV commits to the watched branch, each rewriting data/big.txt
  # (SZ bytes of random text) by a few bytes: a small pack whose deltas rebuild NV × SZ bytes when indexed
  (cd $L/main && python3 - "$1" "$2" $BASE <<'PY' | G fast-import --quiet && G reset -q --hard video-development && G push -q origin video-development)
import random, sys
nv, sz, base = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
random.seed(1); rnd = random.randbytes(sz // 2 + 1).hex().encode()[:sz]
out = sys.stdout.buffer
for v in range(nv):
    body = f"{v:08d}\n".encode() + rnd[9:]
    out.write(b"commit refs/heads/video-development\n")
    out.write(f"committer M <m@x.invalid> {1700000000 + v} +0000\ndata 4\nbig\n".encode())
    if v == 0: out.write(f"from {base}\n".encode())
    out.write(f"M 100644 inline data/big.txt\ndata {len(body)}\n".encode() + body + b"\n")
PY
  echo "pushed: $(du -sk $L/origin.git/objects | cut -f1) KiB of objects on origin for $1 versions of a $2-byte file"
}
