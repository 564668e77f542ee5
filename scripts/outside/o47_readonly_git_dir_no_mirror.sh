#!/bin/bash
# o47: the ledger's mirror in the Git directory (`.git/rxnode/ledger.jsonl`, docs/safety.md §8: the evidence no
# pull can remove) was best effort. With the Git directory read-only (here a read-only bind mount; also another
# owner, a full disk) an authorized RED run transmitted with only a warning per line, and none of `authorized`,
# `run_started`, `tx_keyed`, `run_finished` reached the mirror. Once `.local/` was lost (deleted, or the two-commit
# attack) `state rebuild` reported the task `approved`, 0 completed: the node's own record said a task that
# transmitted never ran. A run must refuse before any radio step when `run_started` cannot reach the mirror.
# Needs root (mount).
source "$(dirname "$0")/lib.sh"
newlab o47; policy
TX='{"op":"tx_tone","device":"driver=rxsim,serial=tx","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'
{ hdr RO1 YES NO YES; plan "$TX"; } | post; approve
{ mount --bind "$L/rx/.git" "$L/rx/.git" && mount -o remount,ro,bind "$L/rx/.git"; } 2>/dev/null || { echo "cannot play: a read-only bind mount needs root"; exit 2; }
echo 'AUTHORIZE RF TX' | rxn --sim run RO1 > $L/run.out 2>&1; rc=$?; umount "$L/rx/.git"
grep -a 'refused' $L/run.out | cut -c1-200
echo "run rc=$rc, $(grep -c 'cannot append to the ledger mirror' $L/run.out) mirror warning(s); TX activations: $(grep -c ' activateStream TX' $RXSIM_EVENT_LOG)"
echo "mirror's lines for RO1: $(grep -o '"event":"[a-z_]*","task_id":"RO1"' $L/rx/.git/rxnode/ledger.jsonl | cut -d'"' -f4 | tr '\n' ' ')"
rm -rf $L/rx/.local/rx_agent_state.json $L/rx/.local/rx_agent_ledger.jsonl $L/rx/.local/rx_agent_outbox
rxn state rebuild 2>&1 | tail -1 | cut -c1-200
st=$(rxn status 2>&1 | awk '/^completed:/{print $2}')
[ "$(grep -c ' activateStream TX' $RXSIM_EVENT_LOG)" -gt 0 ] && [ "$st" != RO1 ] && {
  echo "broken: a RED run transmitted with no record in the ledger's mirror; after .local/ was lost the node says RO1 never ran"; exit 0; }
echo held; exit 1
