#!/bin/bash
# o311: a task title holding characters that show as nothing but are neither control nor format characters (the
# braille blank U+2800, the Hangul filler U+3164) and a letter under a stack of 40 accents (U+0300-U+036F, which
# draws over the prompt's lines above and below), the same in the body. The interlock lets them through (they are not
# format characters) and the prompt printed them raw: the title can hide a gap or a second text. Witness: the raw
# characters in what `watch --once` prints.
. "$(dirname "$0")/lib.sh"
newlab fillers; policy; rxn node set-name LAB1 >/dev/null
F=$(python3 -c 'print("\u2800" * 30 + "\u3164" * 30, end="")')
Z=$(python3 -c 'print("Z" + "".join(chr(0x300 + i) for i in range(40)), end="")')
{ hdr PF1 NO NO NO | sed "s/^TASK_TITLE = .*/TASK_TITLE = Read the clock$F(approved earlier) $Z/"
  printf '\n# task\n\nstep one%s done %s\n' "$F" "$Z"; } | post
echo D | rxn watch --once --interval 0.2 >$L/watch.out 2>&1; rc=$?
grep -a 'Title:' $L/watch.out | cut -c1-200
raw() { python3 -c "import sys; t=open(sys.argv[1], encoding='utf-8', errors='replace').read(); print(sum(t.count(c) for c in '\u2800\u3164'), max([len(r) for r in __import__('re').findall('[\u0300-\u036f]+', t)] or [0]))" "$1"; }
read fill stack < <(raw $L/watch.out)
echo "watch --once: rc=$rc; raw blank fillers printed: $fill; longest raw stack of combining marks: $stack"
panics $L/watch.out && { echo "broken: a panic"; exit 0; }
grep -aq 'PF1' $L/watch.out || { echo "broken: the task was not shown at all (rc=$rc)"; exit 0; }
[ "$fill" -gt 0 ] && { echo "broken: $fill characters that show as nothing reached the prompt raw"; exit 0; }
[ "$stack" -gt 2 ] && { echo "broken: a stack of $stack combining marks reached the prompt raw"; exit 0; }
echo held; exit 1
