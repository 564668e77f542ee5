#!/usr/bin/env bash
# Every test of the workspace — unit, integration and doc tests — as CI runs it.
# (Benchmarks are built by clippy --all-targets and run with `cargo bench`.)
#
# As root (CI), the tests run in a network namespace of their own that has only the
# loopback interface, with a private system D-Bus and avahi-daemon for SoapySDRServer
# (scripts/test-sandbox.sh): nothing a test starts — git daemon, SoapySDRServer's SSDP
# and mDNS announcements, the remote module's discovery — can reach any other host.
# Without root, the tests run here and need dbus and avahi-daemon already running
# (scripts/remote-services.sh says what is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests
# Build everything (and fetch every crate) first, outside the sandbox that has no network.
cargo test --workspace --locked --no-run
# SoapyRemote's UDP streams need the host's socket-buffer caps raised; a new network
# namespace starts with the host's caps and cannot raise its own, so this happens
# here, on the host, before the sandbox (it says what it changed; never lowers a cap).
bash scripts/socket-caps.sh || true
if [ "$(id -u)" = 0 ] && [ -z "${RXNODE_TEST_SANDBOX:-}" ] && unshare --net --mount true 2>/dev/null; then
    exec unshare --net --mount --propagation private env RXNODE_TEST_SANDBOX=1 \
        bash scripts/test-sandbox.sh "$@"
fi
echo "test.sh: not root: running without the loopback-only sandbox" >&2
bash scripts/remote-services.sh
cargo test --workspace --locked --no-fail-fast "$@"
