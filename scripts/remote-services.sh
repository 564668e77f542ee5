#!/usr/bin/env bash
# Start what SoapySDRServer needs, idempotently: the system D-Bus and avahi-daemon,
# and socket buffer caps large enough for SoapyRemote's UDP streams (below).
# (SoapySDRServer exits at start-up — "avahi_client_new() failed: Daemon not running" —
# without a running avahi-daemon, which needs the system bus.) Needs root, as in CI;
# on a lab machine with systemd both already run and this script only checks them.
# Exit status 0 when both are running afterwards, 1 with the reason otherwise.
set -euo pipefail

bus_socket=/run/dbus/system_bus_socket

bus_up() { [ -S "$bus_socket" ] && dbus-send --system --print-reply --dest=org.freedesktop.DBus \
    /org/freedesktop/DBus org.freedesktop.DBus.GetId >/dev/null 2>&1; }
avahi_up() { avahi-daemon --check 2>/dev/null; }

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo -n"; fi

if ! bus_up; then
    command -v dbus-daemon >/dev/null || { echo "remote-services: dbus-daemon not installed (apt-get install dbus)" >&2; exit 1; }
    $SUDO mkdir -p /run/dbus
    # A pid file left by a dead bus would make dbus-daemon refuse to start.
    if [ -f /run/dbus/pid ] && ! kill -0 "$(cat /run/dbus/pid 2>/dev/null)" 2>/dev/null; then
        $SUDO rm -f /run/dbus/pid
    fi
    if [ -S "$bus_socket" ] && [ ! -f /run/dbus/pid ]; then $SUDO rm -f "$bus_socket"; fi
    $SUDO dbus-daemon --system --fork || true
    for _ in $(seq 50); do bus_up && break; sleep 0.1; done
    bus_up || { echo "remote-services: the system D-Bus did not start ($bus_socket)" >&2; exit 1; }
fi

if ! avahi_up; then
    command -v avahi-daemon >/dev/null || { echo "remote-services: avahi-daemon not installed (apt-get install avahi-daemon)" >&2; exit 1; }
    # -D daemonizes; a concurrent start by another test loses the race harmlessly
    # ("daemon already running"), so only the final check counts.
    $SUDO avahi-daemon -D >/dev/null 2>&1 || true
    for _ in $(seq 50); do avahi_up && break; sleep 0.1; done
    avahi_up || { echo "remote-services: avahi-daemon did not start (see: avahi-daemon --debug)" >&2; exit 1; }
fi
# Socket buffers for SoapyRemote's UDP streams (scripts/socket-caps.sh): raised where
# lower and verified by reading them back. Inside a network namespace they can only be
# verified (scripts/test.sh raises them on the host before entering one); a cap still
# too low is reported with its fix, and the tests that need the window say so too.
bash "$(dirname "$0")/socket-caps.sh" || true
echo "remote-services: system D-Bus and avahi-daemon running"
