#!/bin/bash
# o324: on Windows the node key is made private with an owner-only DACL, and every later use checks that
# no other user may open it. Where that DACL is not kept although the call said it was set (Wine keeps the
# unix mode, here umask 002; a share or file system that ignores DACLs does the same), rxnode made the key,
# said nothing, and then refused its own new key at once and at every command as if someone had tampered
# with it ("readable or writable by other users … fix: move it aside and re-approve"), advice that only
# makes another such key. It must say at creation that the DACL did not hold, and leave no key behind.
# RXN here is a Windows build (rxnode.exe, scripts/check-windows.sh --build), run under Wine 8 (wine64).
# Exit 2: cannot play here.
source "$(dirname "$0")/lib.sh"
umask 002; newlab o324
wine_lab || exit 2
wp() { printf 'Z:%s' "${1//\//\\}"; }
wrx() { $W "$(wp $L/bin/rxnode.exe)" --repo "$(wp $L/rx)" "$@"; }
wrx node set-name LABW >$L/n1.out 2>&1; rc1=$?
mkdir -p $L/aside; mv $L/rx/.git/rxnode/key $L/aside/ 2>/dev/null
wrx node set-name LABW >$L/n2.out 2>&1; rc2=$?; $WS -k
show() { sed "s#Z:[^ ]*rx[\\/]#<rx>/#g" "$1" | tr '\n' ' ' | cut -c1-260; }
echo "node set-name: exit $rc1: $(show $L/n1.out)"
echo "after moving the key aside as told, again: exit $rc2: $(show $L/n2.out)"
echo "key file left: $([ -e $L/rx/.git/rxnode/key ] && ls -l $L/rx/.git/rxnode/key | cut -d' ' -f1,5 || echo none)"
[ $rc2 = 0 ] && { echo "cannot play: the key was accepted (this Wine keeps DACLs)"; exit 2; }
[ -e $L/rx/.git/rxnode/key ] && grep -q 'move it aside' $L/n2.out && {
  echo "broken: a key whose owner-only DACL did not hold was made and then refused as tampered, again after moving it aside"; exit 0; }
grep -q 'did not hold' $L/n2.out && { echo held; exit 1; }
echo "broken: the refusal does not say the owner-only DACL did not hold"; exit 0
