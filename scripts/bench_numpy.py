#!/usr/bin/env python3
"""The typical numpy Welch code a lab engineer writes, timed on the same file as
`rxnode analyze` (numpy only, no scipy).

usage: bench_numpy.py FILE.cf32 [--rate HZ] [--fft-size N] [--overlap F] [--gen N]
  --gen N   write N samples of tone + noise to FILE first (and do nothing else)
"""
import argparse
import sys
import time

import numpy as np


def generate(path, n, rate):
    rng = np.random.default_rng(1)
    chunk = 1 << 22
    with open(path, "wb") as f:
        for start in range(0, n, chunk):
            k = min(chunk, n - start)
            t = (np.arange(start, start + k) / rate)
            x = 0.1 * np.exp(2j * np.pi * 100e3 * t)
            x += 0.01 * (rng.standard_normal(k) + 1j * rng.standard_normal(k)) / np.sqrt(2)
            x.astype(np.complex64).tofile(f)


def welch(path, rate, nfft, overlap):
    x = np.fromfile(path, dtype=np.complex64)
    win = np.hanning(nfft + 1)[:-1].astype(np.float32)
    hop = max(1, int(round(nfft * (1 - overlap))))
    acc = np.zeros(nfft)
    count = 0
    for i in range(0, len(x) - nfft + 1, hop):
        seg = x[i:i + nfft] * win
        acc += np.abs(np.fft.fft(seg)) ** 2
        count += 1
    psd = np.fft.fftshift(acc / (count * win.sum() ** 2))
    psd_db = 10 * np.log10(psd + 1e-30)
    freqs = np.fft.fftshift(np.fft.fftfreq(nfft, 1 / rate))
    floor = np.median(psd_db)
    peak = int(np.argmax(psd_db))
    mean_power = 10 * np.log10(np.mean(np.abs(x) ** 2))
    return len(x), count, freqs[peak], psd_db[peak], floor, mean_power


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--rate", type=float, default=2e6)
    ap.add_argument("--fft-size", type=int, default=2048)
    ap.add_argument("--overlap", type=float, default=0.5)
    ap.add_argument("--gen", type=int)
    a = ap.parse_args()
    if a.gen:
        generate(a.file, a.gen, a.rate)
        return 0
    t0 = time.perf_counter()
    n, count, f, p, floor, mp = welch(a.file, a.rate, a.fft_size, a.overlap)
    dt = time.perf_counter() - t0
    print(f"numpy welch: {n} samples, {count} segments, peak {f:.1f} Hz {p:.2f} dB, "
          f"floor {floor:.2f} dB, mean {mp:.2f} dBFS: {dt:.3f} s, {n / dt / 1e6:.1f} MS/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
