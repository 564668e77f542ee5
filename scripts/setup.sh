#!/usr/bin/env bash
# Install what a fresh Debian/Ubuntu machine lacks to build and run rxnode.
# Idempotent: installs only missing packages. Needs root (or sudo) for apt-get.
set -euo pipefail
PKGS=(libsoapysdr-dev soapysdr-tools pkg-config g++ libssl-dev zlib1g-dev git ca-certificates python3 python3-pip)
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
# pip step: the Python `sigmf` package (from PyPI) validates the SigMF annotations
# in tests/sweep.rs. System-wide for the python3 the tests run; on a Debian whose
# python is "externally managed" (PEP 668) pip needs --break-system-packages
# (CI runs as root in a throw-away container; on a workstation prefer a venv and
# put its bin/ first on PATH before `cargo test`).
if ! python3 -c "import sigmf" 2>/dev/null; then
    echo "installing the Python sigmf package (pip)"
    python3 -m pip install --quiet sigmf 2>/dev/null ||
        python3 -m pip install --quiet --break-system-packages sigmf
fi
if ! command -v cargo >/dev/null; then
    echo "cargo not found: install Rust (rustup; Rust >= 1.89 — rxnode uses std file locks) first" >&2
    exit 1
fi
# tests/mainpc.rs checks the JSON Schemas with an independent validator: Python's `jsonschema`.
if ! python3 -c 'import jsonschema' 2>/dev/null; then
    echo "installing the Python package jsonschema (for tests/mainpc.rs)"
    if ! command -v pip3 >/dev/null && ! python3 -m pip --version >/dev/null 2>&1; then
        SUDO=""
        if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
        $SUDO apt-get update -q
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends python3-pip
    fi
    # Debian 12 marks the system Python "externally managed" (PEP 668): user/root installs
    # need --break-system-packages there; older pips do not know the flag.
    python3 -m pip install --quiet jsonschema 2>/dev/null \
        || python3 -m pip install --quiet --break-system-packages jsonschema
fi
