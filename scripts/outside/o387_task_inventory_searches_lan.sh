#!/usr/bin/env bash
# A hostile branch posts a task whose plan is one `inventory` step. Before: the step enumerated
# every SoapySDR module with no args, so SoapyRemote searched the LAN (SSDP M-SEARCH to
# 239.255.255.250:1900 and ff02::c, mDNS through avahi) and connected to whatever server
# answered — an attacker on the LAN learns the node is there and is asked for its radios.
# Held: the step lists this node's radios and sends nothing to the LAN.
source "$(dirname "$0")/lib.sh"
newlab invlan
command -v strace >/dev/null || { echo "cannot play: strace is not installed"; exit 2; }
SoapySDRUtil --info 2>/dev/null | grep -q remoteSupport || { echo "cannot play: SoapyRemote (libremoteSupport) is not installed"; exit 2; }
policy
{ hdr INV_1 YES NO NO; plan '{"op":"inventory"}'; } | post
approve
timeout 60 strace -f -qq -e trace=sendto,sendmsg,connect -o "$L/strace.txt" "$RXN" --repo "$L/rx" run INV_1 > "$L/run.out" 2>&1; rc=$?
echo "--- run INV_1: exit $rc"; grep -aE 'step 1' "$L/run.out" | head -2
ssdp=$(grep -cE 'M-SEARCH|htons\(1900\)' "$L/strace.txt")
mdns=$(grep -cE 'system_bus_socket|htons\(5353\)' "$L/strace.txt")
echo "--- SSDP packets sent to the LAN: $ssdp; mDNS (avahi over D-Bus) attempts: $mdns"
grep -E 'M-SEARCH|avahi|5353' "$L/strace.txt" | cut -c1-160 | head -3
panics "$L/run.out" && { echo "broken: a panic"; exit 0; }
[ $((ssdp + mdns)) -gt 0 ] && { echo "broken: a task's inventory step made the node search the LAN for SoapyRemote servers ($ssdp SSDP packet(s), $mdns mDNS attempt(s))"; exit 0; }
grep -aq 'PASS.*step 1: inventory' "$L/run.out" || { echo "broken: the inventory step did not PASS: $(head -c 300 "$L/run.out")"; exit 0; }
echo held; exit 1
