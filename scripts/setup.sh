#!/usr/bin/env bash
# Install what a fresh Debian/Ubuntu machine lacks to build and run rxnode.
# Idempotent: installs only missing packages. Needs root (or sudo) for apt-get.
set -euo pipefail
#
#   scripts/setup.sh          what building and running rxnode (and its demo) needs
#   scripts/setup.sh --tests  also what the tests need: SoapyRemote's server and client
#                             module, avahi-daemon and dbus (tests/it/remote.rs serves
#                             rxsim with a real SoapySDRServer), iproute2 (the test
#                             sandbox), faketime (a wall-clock step during a run, for
#                             the rxnode process only: tests/it/run/red.rs), systemd
#                             (systemd-analyze verifies the unit of `rxnode service`:
#                             tests/it/health/unattended.rs), openssh-client
#                             (ssh-keygen makes and signs with the test keys, and git
#                             signs commits with it: tests/it/signed.rs), chromium
#                             and tidy (the fleet page is opened in a real headless
#                             browser and checked as HTML: tests/it/mainpc/report.rs),
#                             gnuradio (GNU Radio 3.10 reads what `capture` streams
#                             and writes what `analyze` reads:
#                             tests/it/recording/gnuradio.rs; 146 packages, 117 MB
#                             fetched, 669 MB on disk, 37 s to install on the
#                             development machine), openssl (a loopback TLS server
#                             for the HTTPS remote tests: tests/it/watch/tls.rs),
#                             python3-soapysdr (Debian's /usr/bin/python3 as another
#                             SoapySDR client of rxsim: hw/tests/sim_rx.rs), and
#                             the Python outside checks (below)
tests=""
[ "${1:-}" = "--tests" ] && tests=1
PKGS=(libsoapysdr-dev soapysdr-tools pkg-config g++ libssl-dev zlib1g-dev git ca-certificates)
if [ -n "$tests" ]; then
    PKGS+=(soapyremote-server soapysdr0.8-module-remote avahi-daemon dbus iproute2 python3 python3-pip faketime systemd openssh-client chromium tidy gnuradio openssl python3-soapysdr)
fi
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    echo "installing: ${missing[*]}"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
# The Python packages the tests use as independent outside clients, from PyPI (never
# part of the product): `sigmf` validates the SigMF recordings and annotations
# (tests/it/sweep.rs, tests/it/remote.rs), `numpy` finds the tone in a ci16 recording,
# `jsonschema` checks the JSON Schemas (tests/it/mainpc.rs). System-wide for the python3
# the tests run. Debian's gnuradio (above) is built for Debian's /usr/bin/python3 and
# brings its numpy and jsonschema, which pip then keeps (it upgrades nothing already
# installed). On a Debian whose python is "externally managed" (PEP 668) pip needs
# --break-system-packages (CI runs as root on a throw-away machine; on a workstation
# prefer a venv and put its bin/ first on PATH before `cargo test`).
if [ -n "$tests" ] && ! python3 -c "import sigmf, numpy, jsonschema" 2>/dev/null; then
    echo "installing from PyPI: sigmf numpy jsonschema"
    python3 -m pip install --quiet sigmf numpy jsonschema 2>/dev/null ||
        python3 -m pip install --quiet --break-system-packages sigmf numpy jsonschema
fi
if ! command -v cargo >/dev/null; then
    echo "cargo not found: install Rust (rustup; Rust >= 1.89 — rxnode uses std file locks) first" >&2
    exit 1
fi
