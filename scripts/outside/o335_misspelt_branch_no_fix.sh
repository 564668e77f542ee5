#!/bin/bash
# o335: a new user types the watched branch with a typo, `rxnode --branch video-devlopment watch --once`. rxnode
# said `fetch origin video-devlopment: the remote has no branch "video-devlopment" (deleted or renamed?)` and nothing
# more (`"fix": null` under --json): no word of the branches there are or of how to name the right one. Expected: the
# message lists the remote's branches this checkout has fetched and names the fix (`--branch NAME`).
. "$(dirname "$0")/lib.sh"
newlab o335; policy
rxn --branch video-devlopment watch --once --interval 0.2 > $L/w.out 2>&1; rw=$?
rxn --json --branch video-devlopment watch --once --interval 0.2 > $L/j.out 2>&1
echo "watch: rc=$rw: $(cat $L/w.out)"
echo "--json: $(cat $L/j.out)"
panics $L/w.out && { echo "broken: a panic"; exit 0; }
grep -aq 'has no branch "video-devlopment"' $L/w.out || { echo "cannot play: the fetch did not fail as expected"; exit 2; }
bad=""
grep -aq 'video-development' $L/w.out || bad="$bad the message does not name the branch there is (video-development);"
grep -aq 'fix: .*--branch NAME' $L/w.out || bad="$bad the message names no fix;"
grep -aq '"fix":null' $L/j.out && bad="$bad --json says \"fix\": null;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
