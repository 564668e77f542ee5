#!/usr/bin/env bash
# Install what a fresh Debian/Ubuntu machine lacks to build and run rxnode.
# Idempotent: installs only missing packages. Needs root (or sudo) for apt-get.
set -euo pipefail
# soapyremote-server, soapysdr0.8-module-remote, avahi-daemon, dbus: the SoapyRemote
# tests (tests/remote.rs) serve rxsim with a real SoapySDRServer (issue 16); python3-pip
# for the sigmf/numpy checks of the recordings.
PKGS=(libsoapysdr-dev soapysdr-tools pkg-config g++ libssl-dev zlib1g-dev git ca-certificates
      soapyremote-server soapysdr0.8-module-remote avahi-daemon dbus python3 python3-pip)
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
if ! command -v cargo >/dev/null; then
    echo "cargo not found: install Rust (rustup; Rust >= 1.89 — rxnode uses std file locks) first" >&2
    exit 1
fi
# The sigmf and numpy Python packages (tests/remote.rs validates the ci16 SigMF
# recording with them), from PyPI.
if ! python3 -c "import sigmf, numpy" 2>/dev/null; then
    echo "installing from PyPI: sigmf numpy"
    python3 -m pip install -q sigmf numpy 2>/dev/null \
        || python3 -m pip install -q --break-system-packages sigmf numpy
fi
