#!/usr/bin/env bash
# Every test of the workspace — unit, integration and doc tests — as CI runs it.
# (Benchmarks are built by clippy --all-targets and run with `cargo bench`.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# SoapySDRServer (tests/remote.rs) needs avahi-daemon on the system D-Bus.
bash scripts/remote-services.sh
cargo test --workspace --locked --no-fail-fast
