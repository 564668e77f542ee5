#!/usr/bin/env bash
# Runs inside `unshare --net --mount` (scripts/test.sh, as root): a network namespace whose
# only interface is loopback, and a mount namespace in which /run/dbus and
# /run/avahi-daemon are private, so the system D-Bus and avahi-daemon that SoapySDRServer
# needs are our own and see only loopback. Everything here ends with the namespace.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${RXNODE_TEST_SANDBOX:-}" ] || { echo "test-sandbox.sh: run scripts/test.sh instead" >&2; exit 2; }
ip link set lo up
mkdir -p /run/dbus /run/avahi-daemon
mount -t tmpfs -o mode=0755 tmpfs /run/dbus
mount -t tmpfs -o mode=0755 tmpfs /run/avahi-daemon
bash scripts/remote-services.sh
stop_services() {
    avahi-daemon -k 2>/dev/null || true
    [ -f /run/dbus/pid ] && kill "$(cat /run/dbus/pid)" 2>/dev/null || true
}
trap stop_services EXIT
echo "test-sandbox: network interfaces: $(ip -br link | awk '{print $1}' | tr '\n' ' ')"
CARGO_NET_OFFLINE=true cargo test --workspace --locked --no-fail-fast "$@"
