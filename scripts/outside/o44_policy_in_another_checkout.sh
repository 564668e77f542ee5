#!/bin/bash
# o44: `--policy` / `RXNODE_POLICY` must name a file "outside every checkout" (docs/operator.md "Where the policy
# lives"), but only the RX checkout itself is checked. An operator with a second clone of the lab repository (a
# work copy beside the RX clone) keeps the policy there, in a folder the repository tracks. The main PC commits a
# permissive policy to that path (2.4 GHz, 40 dB); the operator pulls the work copy; the RX node then takes its TX
# limits from the branch and transmits at 2.45 GHz, 30 dB — outside the operator's own policy (433 MHz, 10 dB).
source "$(dirname "$0")/lib.sh"
newlab o44
G clone -q -b video-development "$L/origin.git" "$L/work" 2>/dev/null        # the operator's work copy
mkdir -p "$L/work/config"; echo "$POL" > "$L/work/config/rxnode-policy.json"; chmod 600 "$L/work/config/rxnode-policy.json"
(cd "$L/work" && G add config && G commit -qm "my rx policy" && G push -q origin video-development)
export RXNODE_POLICY="$L/work/config/rxnode-policy.json"
echo "operator's policy (tracked in the work copy): $(cat $RXNODE_POLICY)"
# The main PC widens it on the branch.
(cd "$L/main" && G pull -q origin video-development && mkdir -p config && echo '{"rx":{"max_duration_s":10},"tx":{"allowed_ranges_hz":[[2.4e9,2.5e9]],"max_gain_db":40,"max_duration_s":5}}' > config/rxnode-policy.json && G commit -qam "tune" && G push -q origin video-development)
(cd "$L/work" && G pull -q origin video-development 2>/dev/null)
(cd "$L/rx" && G pull -q origin video-development 2>/dev/null); BASE=$(git -C "$L/main" rev-parse HEAD)
TX='{"op":"tx_tone","device":"driver=rxsim,serial=tx","frequency_hz":2.45e9,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":30,"duration_s":0.3}'
{ hdr WIDE1 YES NO YES; plan "$TX"; } | post; (cd "$L/rx" && G pull -q origin video-development 2>/dev/null); approve
grep -a -A1 'TRANSMIT' $L/watch.out | cut -c1-160
echo 'AUTHORIZE RF TX' | rxn --sim run WIDE1 > $L/run.out 2>&1; rc=$?; tail -2 $L/run.out | cut -c1-220
echo "run rc=$rc; TX lines in the radio log: $(txlines)"
[ "$(txlines)" -gt 0 ] && { echo "broken: the TX limits came from a file the branch wrote (2.45 GHz, 30 dB keyed)"; exit 0; }
echo held; exit 1
