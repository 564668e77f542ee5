#!/bin/bash
# o380: a node's honest result of a manual task with a 200-character title and a 1000-character note, each one
# word (a pasted hash list, a path, a URL without spaces), and a peer's line of 20 000 characters without a space
# in a second result's Markdown. `results report --html` wrote the words as they were: the result pages were
# as wide as the longest word (the heading and the checks table ran off a 1000-pixel window, the page scrolled
# sideways for metres). Expected: every text wraps inside the page; nothing paints in its right margin.
# Needs chromium (scripts/setup.sh --tests).
. "$(dirname "$0")/lib.sh"
command -v chromium >/dev/null || { echo "cannot play: no chromium"; exit 2; }
newlab o380; policy; rxn node set-name LAB1 >/dev/null
T=$(printf 'T%.0s' $(seq 200)); N=$(printf 'N%.0s' $(seq 1000))
{ hdr M1 NO NO NO | sed "s/^TASK_TITLE = t/TASK_TITLE = $T/"; printf '\n# manual\n\nread the clock\n'; } | post; approve
rxn mark-completed M1 --status PASS --note "$N" >/dev/null 2>&1
echo "PUBLISH M1" | rxn publish M1 --push >/dev/null 2>&1
G clone -q -b rx-node "$L/origin.git" "$L/peer" 2>/dev/null
(cd "$L/peer" && mkdir -p rx-results/M2/LAB1 && cp rx-results/M1/LAB1/* rx-results/M2/LAB1/ &&
  python3 -c "print('\n' + 'W' * 20000)" >> rx-results/M2/LAB1/RX_RESULT.md && G add -A && G commit -qm peer && G push -q origin HEAD:rx-node)
"$RXN" --repo "$L/main" results report --html "$L/site" > $L/rep.out 2>&1; rc=$?
echo "results report --html: rc=$rc; $(head -c 300 $L/rep.out)"
panics $L/rep.out && { echo "broken: a panic"; exit 0; }
[ "$rc" = 0 ] || { echo "broken: report --html exited $rc"; exit 0; }
bad=""
for p in "$L"/site/r*.html; do
  timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --user-data-dir="$L/prof" \
    --window-size=1000,1200 --screenshot="$p.png" "file://$p" >/dev/null 2>&1
  [ -s "$p.png" ] || { echo "cannot play: no screenshot of $p"; exit 2; }
  # Dark pixels in the page's right margin (the last 12 of the 1000 pixels, inside the body's 16-pixel padding).
  dark=$(python3 - "$p.png" <<'PY'
import struct, sys, zlib
b = open(sys.argv[1], 'rb').read(); pos = 8; idat = b''; w = h = 0
while pos < len(b):
    n, t = struct.unpack('>I4s', b[pos:pos + 8]); d = b[pos + 8:pos + 8 + n]; pos += 12 + n
    if t == b'IHDR': w, h, depth, ct = struct.unpack('>IIBB', d[:10]); bpp = {2: 3, 6: 4}[ct]
    elif t == b'IDAT': idat += d
raw = zlib.decompress(idat); stride = w * bpp; prev = bytearray(stride); dark = 0; i = 0
for y in range(h):
    f = raw[i]; line = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0; up = prev[x]; c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + up) & 255
        elif f == 3: line[x] = (line[x] + (a + up) // 2) & 255
        elif f == 4:
            p = a + up - c; pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
    prev = line
    dark += sum(1 for x in range(w - 12, w) if max(line[x * bpp:x * bpp + 3]) < 100)
print(dark)
PY
)
  echo "$(basename "$p"): $(wc -c < "$p") bytes, dark pixels in the right margin of a 1000-pixel window: $dark"
  [ "$dark" = 0 ] || bad="$bad $(basename "$p") is wider than the window ($dark dark pixels in its right margin);"
  grep -q "$N" <(sed 's/<wbr>//g' "$p") || [ "$(basename "$p" | cut -c7-8)" = M2 ] || bad="$bad $(basename "$p") lost the note;"
done
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
