#!/bin/bash
# o330: `--sim` with a relative XDG_CACHE_HOME (`.cache`, a shell profile's slip), run from the RX checkout.
# docs/hardware.md: the bundled module is written to `$XDG_CACHE_HOME/rxnode/` (else `~/.cache/rxnode/`); the XDG
# rules say a relative path is invalid and is ignored. rxnode wrote the 3.5 MB module into the folder it was started
# from (`.cache/rxnode/librxsim-<hash>.so` in the checkout's work tree, where `git status` shows it) and loaded the
# simulated radio from there. Expected: the relative value counts as unset: the module lands in ~/.cache/rxnode/,
# nothing new in the work tree, and the capture still works. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o330; cd "$L/rx"
XDG_CACHE_HOME=.cache "$RXN" --sim capture -d driver=rxsim,serial=o330 -f 100e6 -r 1e6 -t 0.1 > $L/cap.out 2>&1; rc=$?
echo "capture: rc=$rc $(grep -m1 '^status' $L/cap.out)"
echo "work tree: $(git status --porcelain --untracked-files=all | tr '\n' ' ')"
echo "home cache: $(ls $HOME/.cache/rxnode 2>/dev/null | tr '\n' ' ')"
panics $L/cap.out && { echo "broken: panic"; exit 0; }
[ -n "$(find "$L/rx" -name 'librxsim-*' -print -quit)" ] && { echo "broken: the simulated radio's module was written into the checkout's work tree (relative XDG_CACHE_HOME)"; exit 0; }
[ "$rc" = 0 ] && ls $HOME/.cache/rxnode/librxsim-* >/dev/null 2>&1 || { echo "broken: the capture did not run from ~/.cache/rxnode (rc=$rc)"; exit 0; }
echo held; exit 1
