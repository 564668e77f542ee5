"""GNU Radio as an outside client of rxnode's recordings (tests/it/recording/gnuradio.rs).

    gr_check.py read PATH RATE            GNU Radio's file source reads PATH (a FIFO,
                                          /dev/stdin, a file) as gr_complex into a
                                          vector sink; prints the sample count and
                                          the strongest tone's offset (Hz) as JSON
    gr_check.py write PATH RATE OFFSET N  GNU Radio writes N samples of a complex
                                          tone at OFFSET Hz (amplitude 0.5) over
                                          Gaussian noise at -60 dBFS with its file
                                          sink (a .cfile), prints {"written": N}
    gr_check.py meta PATH RATE OFFSET N ITEM DETACHED FREQ
                                          the same tone and noise through GNU Radio's
                                          File Meta Sink: ITEM `float` (gr_complex) or
                                          `short` (interleaved int16 pairs, full scale
                                          32767), segments of 100 000 items, the
                                          header attached before each (DETACHED 0) or
                                          in PATH.hdr (1), `rx_freq` FREQ in its extras

The flowgraphs are GNU Radio's own blocks (blocks.file_source, blocks.file_sink,
analog.sig_source_c, analog.noise_source_c, blocks.add_cc, blocks.head); numpy only finds the tone in what GNU Radio read.
"""
import json
import sys

import numpy as np
from gnuradio import analog, blocks, gr


def read(path, rate):
    tb = gr.top_block()
    src = blocks.file_source(gr.sizeof_gr_complex, path, False)
    sink = blocks.vector_sink_c()
    tb.connect(src, sink)
    tb.run()
    x = np.asarray(sink.data(), dtype=np.complex64)
    n = len(x)
    nfft = 1 << 14
    if n < nfft:
        print(json.dumps({"samples": n, "tone_hz": None, "version": gr.version()}))
        return
    spec = np.zeros(nfft)
    w = np.hanning(nfft)
    for k in range(0, n - nfft + 1, nfft):
        spec += np.abs(np.fft.fft(x[k : k + nfft] * w)) ** 2
    i = int(np.argmax(spec))
    f = np.fft.fftfreq(nfft, 1.0 / rate)[i]
    print(json.dumps({"samples": n, "tone_hz": float(f), "version": gr.version()}))


def write(path, rate, offset, n):
    tb = gr.top_block()
    src = analog.sig_source_c(rate, analog.GR_COS_WAVE, offset, 0.5, 0)
    # A receiver's noise (a noiseless tone has no noise floor to measure).
    noise = analog.noise_source_c(analog.GR_GAUSSIAN, 1e-3, 7)
    add = blocks.add_cc()
    head = blocks.head(gr.sizeof_gr_complex, n)
    sink = blocks.file_sink(gr.sizeof_gr_complex, path, False)
    sink.set_unbuffered(False)
    tb.connect(src, (add, 0))
    tb.connect(noise, (add, 1))
    tb.connect(add, head, sink)
    tb.run()
    sink.close()
    print(json.dumps({"written": n, "version": gr.version()}))


def meta(path, rate, offset, n, item, detached, freq):
    import pmt

    tb = gr.top_block()
    src = analog.sig_source_c(rate, analog.GR_COS_WAVE, offset, 0.5, 0)
    noise = analog.noise_source_c(analog.GR_GAUSSIAN, 1e-3, 7)
    add = blocks.add_cc()
    head = blocks.head(gr.sizeof_gr_complex, n)
    extra = pmt.dict_add(pmt.make_dict(), pmt.intern("rx_freq"), pmt.from_double(freq))
    if item == "short":
        conv = blocks.complex_to_interleaved_short(True, 32767.0)
        sink = blocks.file_meta_sink(4, path, rate, 1, blocks.GR_FILE_SHORT, True, 100000, extra, detached)
        tb.connect(src, (add, 0))
        tb.connect(noise, (add, 1))
        tb.connect(add, head, conv, sink)
    else:
        sink = blocks.file_meta_sink(gr.sizeof_gr_complex, path, rate, 1, blocks.GR_FILE_FLOAT, True, 100000, extra, detached)
        tb.connect(src, (add, 0))
        tb.connect(noise, (add, 1))
        tb.connect(add, head, sink)
    tb.run()
    sink.close()
    print(json.dumps({"written": n, "version": gr.version()}))


if __name__ == "__main__":
    if sys.argv[1] == "read":
        read(sys.argv[2], float(sys.argv[3]))
    elif sys.argv[1] == "write":
        write(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1] == "meta":
        a = sys.argv
        meta(a[2], float(a[3]), float(a[4]), int(a[5]), a[6], a[7] == "1", float(a[8]))
    else:
        sys.exit(f"unknown mode {sys.argv[1]!r}")
