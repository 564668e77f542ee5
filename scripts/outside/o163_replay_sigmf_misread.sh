#!/bin/bash
# o163: one SigMF recording read two ways. rxsim's `replay=` streamed the data file from its first byte as one channel,
# whatever the meta said: a 2-channel cf32 recording (channel 0 a tone at +200 kHz, channel 1 one at -500 kHz), which
# `rxnode analyze` reads as 100.2 MHz on channel 0 and 99.5 MHz on channel 1, came out as one stream of both
# interleaved: 4 phantom carriers at 99.1/99.75/100.1/100.75 MHz, `capture` PASS; a 4096-byte vendor header
# (`core:header_bytes`) was replayed as samples: a 334 kHz "emission" around the tone and a -43.7 dBFS "carrier at the
# centre" that `analyze` does not see. Expected: a meta the replay would misread refused, naming the key, when the
# device is made.
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o163.XXXXXX); cd "$L"; export HOME=$L/home; mkdir -p "$HOME"
python3 - <<'PY'
import numpy as np, json
fs=2e6; n=1<<19; t=np.arange(n)/fs; rng=np.random.default_rng(3)
nz=lambda: 0.001*(rng.normal(size=n)+1j*rng.normal(size=n))
a=0.3*np.exp(2j*np.pi*200e3*t)+nz(); b=0.3*np.exp(-2j*np.pi*500e3*t)+nz()
x=np.empty(2*n,np.complex64); x[0::2]=a; x[1::2]=b; x.tofile('two.sigmf-data')
g={"core:datatype":"cf32_le","core:sample_rate":fs,"core:version":"1.2.0"}
json.dump({"global":dict(g,**{"core:num_channels":2}),"captures":[{"core:sample_start":0,"core:frequency":100e6}],"annotations":[]},open('two.sigmf-meta','w'))
open('hdr.sigmf-data','wb').write(b'A'*4096+a.astype(np.complex64).tobytes())
json.dump({"global":g,"captures":[{"core:sample_start":0,"core:frequency":100e6,"core:header_bytes":4096}],"annotations":[]},open('hdr.sigmf-meta','w'))
PY
bad=""
for r in two hdr; do
  "$RXN" analyze $r.sigmf-meta > a.$r 2>&1; echo "analyze $r.sigmf-meta: $(grep -E '^peaks' a.$r | tr -s ' ')"
  "$RXN" --sim capture -d "driver=rxsim,replay=$L/$r.sigmf-meta" -f 100M -r 2M -t 0.2 > c.$r 2>&1; rc=$?
  echo "capture replay=$r.sigmf-meta: rc=$rc $(grep -E 'peaks|^ {17}[0-9]|clipped|status|rxsim: replay' c.$r | tr -s ' ' | tr '\n' ' ' | cut -c1-330)"
  panics c.$r && bad="$bad panic"
  [ $rc -ne 0 ] && grep -q 'core:num_channels\|core:header_bytes' c.$r || bad="$bad $r-replayed-as-read-otherwise"
done
[ -n "$bad" ] && { echo "broken: a SigMF recording replayed otherwise than analyze reads it:$bad"; exit 0; }; echo held; exit 1
