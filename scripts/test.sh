#!/usr/bin/env bash
# Every test of the workspace (unit, integration, doc tests), as CI runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --workspace --locked --all-targets
cargo test --workspace --locked --doc
