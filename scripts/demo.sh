#!/usr/bin/env bash
# Install what is missing, build rxnode and run the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked
./target/release/rxnode validate fixtures/watcher_test_task.md
