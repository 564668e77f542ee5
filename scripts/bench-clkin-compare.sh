#!/usr/bin/env bash
# CLKIN by comparison, measured through the real binary on two rxsim radios over
# several noise seeds (seed=N per radio): for each acceptance case the worst and the
# median error of `rxnode clkin compare` against the truth, the largest stated σ, the
# worst |error|/σ and the verdicts. 1 s at 1 MS/s, tone at −30 dBFS over noise at
# −60 dBFS (30 dB SNR in the band). See docs/benchmarks.md#clkin-by-comparison.
# usage: scripts/bench-clkin-compare.sh [SEEDS] [RXNODE]   (10 seeds; target/debug/rxnode)
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS="${1:-10}"
BIN="$(realpath "${2:-${CARGO_TARGET_DIR:-target}/debug/rxnode}")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binary $BIN"
TONE="tone_hz=100.2e6,tone_dbfs=-30,noise_dbfs=-60"
# name | truth ppb | master args | slave args | extra flags
CASES=(
  "one reference (ext_ppm 0.3 both)|0|ext_ref=1,ext_ppm=0.3|ext_ref=1,ext_ppm=0.3|--clock-sources external,external"
  "own crystal +0.05 ppm|50|ppm=0|ppm=0.05|"
  "own crystal +5 ppm|5000|ppm=0|ppm=5|"
)
for c in "${CASES[@]}"; do
  IFS='|' read -r name truth margs sargs extra <<<"$c"
  out="$WORK/case.jsonl"
  : >"$out"
  for s in $(seq 1 "$SEEDS"); do
    # shellcheck disable=SC2086
    "$BIN" --sim clkin compare --json \
      -d "driver=rxsim,serial=bm$s,seed=$((2 * s)),$margs,$TONE" \
      -d "driver=rxsim,serial=bs$s,seed=$((2 * s + 1)),$sargs,$TONE" \
      -f 100M -r 1M --tone-hz 100.2M -t 1 $extra 2>/dev/null | tr -d '\n' >>"$out" || true
    echo >>"$out"
  done
  python3 - "$name" "$truth" "$out" <<'PY'
import json, statistics, sys
name, truth, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
rows = [json.loads(l) for l in open(path) if l.strip()]
k = [r["clkin_compare"] for r in rows]
err = [abs(x["relative_ppb"] - truth) for x in k if x["relative_ppb"] is not None]
sig = [x["uncertainty_ppb"] for x in k if x["uncertainty_ppb"] is not None]
z = [abs(x["relative_ppb"] - truth) / x["uncertainty_ppb"] for x in k if x["uncertainty_ppb"]]
verdicts = {}
for x in k:
    verdicts[x["verdict"]] = verdicts.get(x["verdict"], 0) + 1
print(f"{name:34} truth {truth:+.1f} ppb, {len(rows)} seeds: |error| worst {max(err):.5f} median {statistics.median(err):.5f} ppb; "
      f"σ worst {max(sig):.5f} ppb; |error|/σ worst {max(z):.2f}; verdicts {verdicts}")
PY
done
