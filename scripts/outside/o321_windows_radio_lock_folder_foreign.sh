#!/bin/bash
# o321: the radio lock folder (`%LOCALAPPDATA%\rxnode\radio-locks`, docs/operator.md#one-process-per-radio) was
# checked for its owner on unix only: on Windows one owned by another user (and writable by everyone) was used as
# it was, its lock files taken as this user's, while the docs said "another user's is refused". Nor was a new
# folder made private there (unix: 0700). A radio command must refuse it (exit 3) before any radio is locked.
# RXN here is a Windows build (rxnode.exe, scripts/check-windows.sh --build), run under Wine 8 (wine64), which
# shows a file of another unix user as owned by S-1-5-7; chown needs root. Exit 2: cannot play here.
source "$(dirname "$0")/lib.sh"
# Wine derives a file's DACL from its unix mode: a private umask, as in the operator's profile on Windows.
umask 077; newlab o321
[ "$(id -u)" = 0 ] || { echo "cannot play: chown needs root"; exit 2; }
wine_lab || exit 2
wrx() { $W "Z:${L//\//\\}\\bin\\rxnode.exe" --repo "Z:${L//\//\\}\\rx" "$@"; }
wrx --sim capture -d driver=rxsim -f 100M -r 1M -t 0.1 >/dev/null 2>&1 # makes the folder (then stops: no SoapySDR.dll)
LOCKS="$WINEPREFIX/drive_c/users/$(id -un)/AppData/Local/rxnode/radio-locks"
[ -d "$LOCKS" ] || { echo "cannot play: no radio lock folder at $LOCKS"; $WS -k; exit 2; }
rm -f "$LOCKS"/driver_rxsim-*; chown nobody "$LOCKS"; chmod 777 "$LOCKS"
echo "folder: $(stat -c '%U %a' "$LOCKS") (Wine: owner S-1-5-7, everyone may write)"
wrx --sim capture -d driver=rxsim -f 100M -r 1M -t 0.1 >$L/c.out 2>&1; rc=$?
echo "capture: exit $rc: $(tr '\n' ' ' <$L/c.out | cut -c1-230)"
made=$(ls "$LOCKS" | grep -c '^driver_rxsim-'); echo "lock files made in the other user's folder: $made"
chown "$(id -u)" "$LOCKS"; chmod 700 "$LOCKS"; $WS -k
[ "$rc" != 3 ] && [ "$made" -gt 0 ] && {
  echo "broken: a radio lock folder owned by another user was used on Windows (its lock taken there, exit $rc)"; exit 0; }
echo held; exit 1
