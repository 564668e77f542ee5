#!/bin/bash
# o336: a new user writes a plan step with a value of the wrong type — `"duration_s": true`, `"fft_size": 2048.5`,
# `"record_iq": "yes"`. `validate` named the VALUE as the field (`task.md:14: true: … invalid type: boolean `true``,
# `"field": "2048.5"` under --json) or no field at all (`"field": null` for the string). Expected: each error names
# the field it is about (duration_s, fft_size, record_iq).
. "$(dirname "$0")/lib.sh"
newlab o336
bad=""
for pair in 'duration_s:true' 'fft_size:2048.5' 'record_iq:"yes"'; do
  f=${pair%%:*}; v=${pair#*:}
  { hdr T1 YES YES NO; plan "{\"op\":\"rx_capture\",\"device\":\"driver=rxsim\",\"frequency_hz\":100e6,\"sample_rate_hz\":2e6,\"gain_db\":20,\"duration_s\":1,\"$f\":$v}"; } \
    | sed 's/"duration_s":1,"duration_s"/"duration_s"/' > $L/task.md
  "$RXN" --json validate $L/task.md > $L/v.json 2>&1; rc=$?
  got=$(python3 -c "import json,sys; d=json.load(open('$L/v.json')); print([i.get('field') for i in d.get('errors', d.get('issues', []))])" 2>/dev/null)
  echo "$f = $v: rc=$rc fields=$got :: $(grep -ao 'invalid type[^"]*' $L/v.json | head -1)"
  panics $L/v.json && { echo "broken: a panic"; exit 0; }
  [ "$rc" = 2 ] || { echo "cannot play: validate exited $rc"; exit 2; }
  [[ "$got" == *"'$f'"* ]] || bad="$bad $f = $v is not named by its field ($got);"
done
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
