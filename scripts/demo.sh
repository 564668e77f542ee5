#!/usr/bin/env bash
# Install what is missing, build rxnode and run the whole loop on a local bare
# origin and the simulated radio (`rxnode demo`). Extra arguments go to the demo
# (e.g. --dir FOLDER to keep the repos it makes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# `cargo run` finds the binary wherever CARGO_TARGET_DIR puts it.
cargo run --release --locked --quiet --bin rxnode -- demo "$@"
