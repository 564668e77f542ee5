#!/bin/bash
# o46: the operator types (or pastes from a chat or a PDF) the authorization phrase and it is refused —
# correctly — but the refusal only repeats the phrase: `expected the exact line "AUTHORIZE RF TX"`. For a line
# with a trailing space, a byte-order mark, a zero-width space or a Cyrillic А, the refusal reads exactly like
# what the operator believes they typed; nothing says what differs. The phrase must stay exact; the refusal must
# say why (as header keys spelt with look-alikes already do).
source "$(dirname "$0")/lib.sh"
newlab o46; policy
TX='{"op":"tx_tone","device":"driver=rxsim,serial=tx","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'
{ hdr PHRASE1 YES NO YES; plan "$TX"; } | post; approve
unclear=0
for l in 'AUTHORIZE RF TX ' $'\xef\xbb\xbfAUTHORIZE RF TX' $'AUTHORIZE RF\xe2\x80\x8b TX' $'\xd0\x90UTHORIZE RF TX' 'authorize rf tx'; do
  msg=$(printf '%s\n' "$l" | rxn --sim run PHRASE1 2>&1 | grep 'authorization refused')
  LC_ALL=C printf 'typed %q\n' "$l"; echo "   -> ${msg#rxnode: error: refused: }"
  echo "$msg" | grep -qiE 'spaces differ|U\+FEFF|U\+200B|U\+0410|case' || unclear=$((unclear+1))
done
echo "TX lines in the radio log: $(txlines); refusals that do not say what differs: $unclear of 5"
[ "$(txlines)" -gt 0 ] && { echo "broken: a wrong phrase keyed the transmitter"; exit 0; }
[ $unclear -gt 0 ] && { echo "broken: $unclear of 5 refused phrases are not told apart from the right one"; exit 0; }
echo held; exit 1
