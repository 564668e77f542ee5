#!/usr/bin/env bash
# keenerd's heatmap.py on an interval sweep with a failed hop: `rxnode sweep -i 1 -e 5.5
# --csv -` over 88–108 MHz in 10 kHz bins on rxsim with three emitters and a dead PLL
# range (dead_hz=98e6:100e6, so the hop 95.5–103 MHz fails in every pass), rendered by
# the real heatmap.py, then the PNG checked: one column per bin (2000, the frequency
# axis continuous through the failed hop), one row per pass under heatmap.py's 25-row
# tape, and the failed hop drawn as one uniform band in every pass row
# (docs/operator.md#failed-hops-in-the-csv).
#
# usage: RTL_SDR_MISC=DIR scripts/heatmap-check.sh
#   RTL_SDR_MISC  a checkout of keenerd/rtl-sdr-misc (heatmap/heatmap.py and Vera.ttf,
#                 copied to a temp folder; nothing is written there). No package
#                 registry ships heatmap.py, so it is not installed by scripts/setup.sh
#                 and CI runs its parsing only (tests/it/sweep/pipe.rs).
#   KEEP=1        keep the temp folder (the CSV, the PNG, heatmap.py's output)
#
# Installs Pillow < 10 from PyPI into a venv at ${XDG_CACHE_HOME:-~/.cache}/rxnode/heatmap-venv
# (heatmap.py calls FreeTypeFont.getsize, gone in Pillow 10). Needs a debug build.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${RTL_SDR_MISC:?set RTL_SDR_MISC to a checkout of keenerd/rtl-sdr-misc}"
for f in heatmap/heatmap.py heatmap/Vera.ttf; do
    [ -f "$RTL_SDR_MISC/$f" ] || { echo "no $RTL_SDR_MISC/$f" >&2; exit 2; }
done
RXNODE="${CARGO_TARGET_DIR:-target}/debug/rxnode"
[ -x "$RXNODE" ] || cargo build --locked
WORK="$(mktemp -d)"
if [ "${KEEP:-0}" = 1 ]; then trap 'echo "# kept $WORK"' EXIT; else trap 'rm -rf "$WORK"' EXIT; fi
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/rxnode/heatmap-venv"
if ! "$VENV/bin/python" -c 'import PIL' 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "pillow<10"
fi
cp "$RTL_SDR_MISC/heatmap/heatmap.py" "$RTL_SDR_MISC/heatmap/Vera.ttf" "$WORK/"

DEV="driver=rxsim,serial=HEAT1,emitters=88.5e6:-30;101.1e6:-25;104.3e6:-45,settle_s=0.002,noise_dbfs=-60,dead_hz=98e6:100e6"
set +e
"$RXNODE" --sim sweep --device "$DEV" --start-hz 88e6 --stop-hz 108e6 --bin-hz 10e3 \
    --sample-rate-hz 10e6 --dwell-s 0.005 --settle-s 0.002 -i 1 -e 5.5 --csv - \
    >"$WORK/sweep.csv" 2>"$WORK/sweep.err"
code=$?
set -e
[ "$code" = 1 ] || { echo "sweep exit $code, expected 1 (PARTIAL: a hop failed)" >&2; cat "$WORK/sweep.err" >&2; exit 1; }
(cd "$WORK" && "$VENV/bin/python" heatmap.py sweep.csv sweep.png) >"$WORK/heatmap.log" 2>&1 ||
    { echo "heatmap.py failed:" >&2; cat "$WORK/heatmap.log" >&2; exit 1; }
"$VENV/bin/python" - "$WORK/sweep.csv" "$WORK/sweep.png" "$WORK/heatmap.log" <<'PY'
import sys
from PIL import Image

csv, png, log = sys.argv[1:]
rows = [l.split(",") for l in open(csv)]
passes = len({(r[0], r[1]) for r in rows})
failed = [r for r in rows if int(r[5]) == 0]
lo, hi = int(failed[0][2]), int(failed[0][3])
im = Image.open(png).convert("RGB")
w, h = im.size
tape = 25
x0, x1 = (lo - 88_000_000) // 10_000, (hi - 88_000_000) // 10_000 - 1
problems = []
if w != 2000:
    problems.append(f"width {w}, expected 2000 columns (88-108 MHz in 10 kHz bins)")
if h != tape + passes + 1:
    problems.append(f"height {h}, expected {tape + passes + 1} ({passes} passes under the tape)")
bands = set()
for y in range(tape + 1, h):
    gap = {im.getpixel((x, y)) for x in range(x0, x1 + 1)}
    edge = (im.getpixel((x0 - 1, y)), im.getpixel((x1 + 1, y)))
    if len(gap) != 1 or gap & set(edge):
        problems.append(f"row {y}: the failed hop's columns {x0}-{x1} are not one band")
    bands |= gap
zline = [l for l in open(log) if l.startswith("x:")]
print(f"heatmap.py: {w}x{h} PNG, {passes} passes, {len(rows)} CSV lines ({len(failed)} of the failed hop)")
print(f"  failed hop {lo / 1e6:.3f}-{hi / 1e6:.3f} MHz: columns {x0}-{x1}, colour {sorted(bands)} in every pass row")
print(f"  {zline[0].strip() if zline else 'no scale line'} (heatmap.py reads nan as 0 dB: the band takes the palette's top)")
if problems:
    print("FAIL: " + "; ".join(problems))
    sys.exit(1)
print("OK")
PY
