#!/usr/bin/env bash
# Socket-buffer caps for SoapyRemote's UDP streams, on this host.
#
# SoapyRemote's UDP endpoints ask the kernel for a 42 MiB socket buffer (remote:window)
# and size their flow-control window from what they get; Linux caps the request at
# net.core.rmem_max / wmem_max (4 MiB or 208 KiB by default). SoapyRemote's own
# SoapySDRServer.sysctl raises both caps to 104857600 at install; this script does the
# same where that was not done: only a cap that is lower is raised, none is ever
# lowered, and the result is verified by reading the value back from /proc (sysctl's
# exit status is not trusted: inside a network namespace the write can be refused
# while sysctl -q still exits 0).
#
# Run it on the host, before entering a network namespace: a new namespace starts
# with the host's caps and, on current kernels, cannot raise its own.
#
#   scripts/socket-caps.sh          raise where lower (root), then verify
#   scripts/socket-caps.sh --check  only verify
# Exit status 0 when both caps are at least the value, 1 otherwise (with the fix).
set -uo pipefail
want=104857600
check_only=""
[ "${1:-}" = "--check" ] && check_only=1
read_cap() { cat "/proc/sys/net/core/$1" 2>/dev/null || echo 0; }
status=0
for key in rmem_max wmem_max; do
    have=$(read_cap "$key")
    if [ "$have" -ge "$want" ]; then continue; fi
    if [ -z "$check_only" ]; then
        if [ "$(id -u)" = 0 ]; then
            echo "$want" > "/proc/sys/net/core/$key" 2>/dev/null
        elif command -v sudo >/dev/null; then
            sudo -n sysctl -q -w "net.core.$key=$want" >/dev/null 2>&1
        fi
        now=$(read_cap "$key")
        if [ "$now" -ge "$want" ]; then
            echo "socket-caps: raised net.core.$key on this host from $have to $now" \
                 "(SoapyRemote's UDP streams ask for 42 MiB socket buffers; its" \
                 "SoapySDRServer.sysctl sets the same value; undo: sysctl -w net.core.$key=$have)"
            continue
        fi
        have=$now
    fi
    echo "socket-caps: net.core.$key is $have (< $want): SoapyRemote's UDP streams get a" \
         "window of at most that and drop datagrams at high rates; fix, as root on this host:" \
         "sysctl -w net.core.rmem_max=$want net.core.wmem_max=$want" >&2
    status=1
done
exit $status
