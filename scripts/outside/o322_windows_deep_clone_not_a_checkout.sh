#!/bin/bash
# o322: a clone whose path is longer than Git (libgit2) opens on Windows — 260 characters (MAX_PATH), counting the
# files inside .git — was called "not a Git checkout (path too long: …) — fix: run rxnode inside the RX clone or
# pass it with --repo DIR; make one with `git clone URL DIR`": the operator was told the clone they ran in was
# none and to make another, in the same deep folder. The error must say the path is too long and to move the clone.
# RXN here is a Windows build (rxnode.exe, scripts/check-windows.sh --build), run under Wine 8 (wine64).
# Exit 2: cannot play here.
source "$(dirname "$0")/lib.sh"
umask 077; newlab o322
wine_lab || exit 2
D=$L/deep; for i in 01 02 03 04 05 06 07 08 09 10; do D=$D/folder_${i}_abcdefghijklmnopqrst; done
mkdir -p $D; G clone -q -b video-development $L/origin.git $D/rx 2>/dev/null
WD="Z:${D//\//\\}\\rx"; echo "clone: ${#WD} characters as Windows names it"
$W "Z:${L//\//\\}\\bin\\rxnode.exe" --repo "$WD" status >$L/s.out 2>&1; rc=$?; $WS -k
echo "status: exit $rc: $(sed "s#$(printf '%s' "$WD" | sed 's/[\\.]/\\&/g')#<clone>#g" $L/s.out | tr '\n' ' ' | cut -c1-300)"
grep -q 'is not a Git checkout' $L/s.out && ! grep -q 'MAX_PATH' $L/s.out && {
  echo "broken: a Git clone too deep for Git on Windows is called 'not a Git checkout', and the fix says to make one"; exit 0; }
echo held; exit 1
