#!/usr/bin/env bash
# A short, bounded fuzz run of every target (default 20 s each) on the seed
# corpus: a smoke test that the targets build and nothing crashes quickly.
# Long runs: `RXNODE_FUZZ_SECONDS=600 scripts/fuzz-smoke.sh` (see docs/reliability.md).
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). On a stable toolchain the
# nightly-only flags cargo-fuzz passes are enabled with RUSTC_BOOTSTRAP=1.
# fuzz/ is its own workspace: this never touches the main build.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${RXNODE_FUZZ_SECONDS:-20}"
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="${RXNODE_FUZZ_TARGET_DIR:-$PWD/target}"
targets=(header plan result_json iq_reader)
if [ "$#" -gt 0 ]; then targets=("$@"); fi
for t in "${targets[@]}"; do
    echo "== fuzz $t (${secs} s) =="
    # A scratch copy of the seed corpus, so a smoke run does not grow fuzz/corpus.
    work="$(mktemp -d)"
    cp -r "corpus/$t/." "$work/"
    log="$work.log"
    st=0
    cargo fuzz run -s none "$t" "$work" -- \
        -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 >"$log" 2>&1 || st=$?
    grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec|INFO: seed corpus)|ERROR|panicked|SUMMARY" "$log" || true
    if [ "$st" -ne 0 ]; then tail -40 "$log" >&2; fi
    rm -f "$log"
    rm -rf "$work"
    if [ "$st" -ne 0 ]; then
        echo "fuzz target $t failed (exit $st); the crash input is in fuzz/artifacts/$t/" >&2
        exit 1
    fi
done
