#!/bin/bash
# o27: unclear error, careless main PC: a task saved by Windows Notepad as "Unicode" (UTF-16 with its byte order mark)
# is refused as "binary content (NUL byte) in task file" — the person sees text in the editor and no NUL. Expected:
# the encoding named (UTF-16 …) and the fix (save it as UTF-8). A policy saved so is "stream did not contain valid
# UTF-8" (`validate --policy`) or "not UTF-8" (every other command). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o27.XXXXXX); cd "$L"
printf 'TASK_ID = T27\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\nEXPECTED_HEAD = 0123456789abcdef0123456789abcdef01234567\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = NO\nRF_RX = NO\nRF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\n# t\n' > u8.md
iconv -f utf-8 -t utf-16 u8.md > NEXT_RX_TASK.md
"$RXN" validate u8.md > a.txt 2>&1; echo "as UTF-8: rc=$? $(head -1 a.txt)"
"$RXN" validate NEXT_RX_TASK.md > o.txt 2>&1; rc=$?; echo "as UTF-16 ($(head -c 2 NEXT_RX_TASK.md | od -An -tx1)): rc=$rc $(head -1 o.txt)"
panics o.txt && { echo "broken: panic"; exit 0; }
grep -q 'UTF-16' o.txt && grep -q 'UTF-8' o.txt || { echo "broken: a UTF-16 task is refused as binary content without naming its encoding"; exit 0; }
echo '{"rx":{"max_duration_s":10}}' | iconv -f utf-8 -t utf-16 > policy.json; chmod 600 policy.json
"$RXN" --policy "$L/policy.json" validate u8.md > p.txt 2>&1; echo "validate --policy UTF-16: rc=$? $(head -1 p.txt)"
grep -q 'UTF-16' p.txt || { echo "broken: a UTF-16 policy is refused without naming its encoding"; exit 0; }
echo held; exit 1
