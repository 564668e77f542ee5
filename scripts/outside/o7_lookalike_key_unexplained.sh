#!/bin/bash
# o7: unclear error: a header key with a Unicode lookalike (RF_TX spelled with the Cyrillic Т, U+0422) is reported as
# `RF_TX: missing required field RF_TX` plus `unknown field "RF_ТX"`: on screen the "unknown" key is the very key said to
# be missing; nothing says which character is not ASCII. (A zero-width space in a value is named: U+200B.) Expected: the
# non-ASCII character named, e.g. `unknown field "RF_\u{422}X" (U+0422 CYRILLIC CAPITAL LETTER TE is not ASCII)`.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o7.XXXXXX); cd "$L"
printf 'TASK_ID = T1\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\nEXPECTED_HEAD = 0123456789abcdef0123456789abcdef01234567\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = NO\nRF_RX = NO\nRF_\xd0\xa2X = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\n# manual\n' > task.md
"$RXN" validate task.md > out.txt 2>&1; echo "validate rc=$?"; cat out.txt
"$RXN" --json validate task.md 2>/dev/null | python3 -c "import json,sys; [print('json:', e['field'], '|', e['message']) for e in json.load(sys.stdin)['errors']]"
grep 'unknown field' out.txt | grep -q $'\xd0\xa2' && ! grep -qi 'U+0422\|u{422}\|not ASCII' out.txt && { echo "broken: the lookalike key is shown as-is; the message reads 'RF_TX missing' and 'RF_TX unknown'"; exit 0; }; echo held; exit 1
