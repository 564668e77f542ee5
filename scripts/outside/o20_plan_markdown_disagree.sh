#!/bin/bash
# o20: the plan the node runs is not the plan a Markdown reader sees: docs/protocol.md §2 defines the plan as a fenced block
# (``` or ~~~) with info string rx-plan, and cares for Markdown's rules (a fence inside a longer fence is text). But
# (a) a "```rx-plan" indented by 4 spaces is, to CommonMark, an indented code block showing the fence as text — rxnode
# runs it; (b) an rx-plan fence inside an HTML comment <!-- … --> is invisible on GitHub/GitLab and in any CommonMark
# renderer — rxnode runs it. Someone reviewing the task commit rendered on the main PC sees "manual task"; the node runs a
# capture (the operator's prompt does list the step, and RF_RX/RF_TX still bound the risk). markdown-it-py (CommonMark)
# is the witness here: it finds no rx-plan fence. Expected: the node's plan = CommonMark's fenced rx-plan block, or such a
# block refused by name. Exit 0 = defect present. Needs python3 -m pip install markdown-it-py.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o20.XXXXXX); cd "$L"
H='TASK_ID = T1\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\nEXPECTED_HEAD = 0123456789abcdef0123456789abcdef01234567\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = YES\nRF_RX = YES\nRF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\n# Manual check, no radio work\n\n'
P='{"steps":[{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.1}]}'
printf "$H"'    ```rx-plan\n    %s\n    ```\n' "$P" > indented.md
printf "$H"'<!--\n```rx-plan\n%s\n```\n-->\n' "$P" > comment.md
bad=0
for f in indented comment; do
  node=$("$RXN" validate $f.md 2>&1 | grep 'plan:' | sed 's/  */ /g')
  cm=$(python3 -c "
from markdown_it import MarkdownIt
body=open('$f.md').read().split('\n\n',1)[1]
print(sum(1 for t in MarkdownIt('commonmark').parse(body) if t.type=='fence' and t.info.strip().startswith('rx-plan')))")
  echo "$f: rxnode validate:$node | CommonMark (markdown-it-py) rx-plan fences: $cm"
  echo "$node" | grep -q '1 step' && [ "$cm" = 0 ] && bad=$((bad+1))
done
[ $bad -gt 0 ] && { echo "broken: $bad task(s) whose plan CommonMark does not show are run by the node"; exit 0; }; echo held; exit 1
