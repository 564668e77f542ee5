// rxsim's LTE scene: one FDD (or TDD) downlink's synchronisation signals in a QPSK grid.
//
// Device args: lte_freq=F (an LTE FDD downlink, 1.4 MHz: six resource blocks of random
// QPSK around the PSS and SSS of 3GPP TS 36.211 §6.11, centred at absolute RF F),
// lte_pci=N (0..503, default 0), lte_snr_db=S (its power over the rxsim noise in its
// 1.08 MHz, default 0), lte_seed=K (its data and frame timing, default 1), lte_tdd=1 (a
// TDD cell instead, frame structure type 2 of §4.2 in uplink-downlink configuration 1,
// DSUUDDSUUD, with the shortest downlink part of the special subframe (3 symbols): the
// SSS in the last symbol of subframes 0 and 5, the PSS in the third of subframes 1 and
// 6, nothing from the cell in the uplink subframes and the guard period). The cell's
// clock is exact; the radio's ppm moves its LO and its sample clock, so the cell drifts
// in frequency and in time as a real one would. sample_ppm=P (read by the device) puts
// the radio's sample clock on a crystal of its own, P ppm off (the LO keeps ppm, or
// ext_ppm when locked): the LTE cell's timing then follows P, its frequency the LO (a
// radio with two clocks; default: one crystal drives both).
//
// Built once from the device args: two radio frames (20 ms, then repeating) of a
// 1.4 MHz downlink, normal cyclic prefix, tabulated at 30.72 MS/s (the 2048-point
// grid LTE's timing is defined on) with unit mean power. Each RX block reads the
// table at the cell's true time t = sample / (rate·(1+e)) by linear interpolation
// (-56 dB at the band edge) and turns it to the baseband offset (F - fc(1+e))/(1+e).
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common.hpp"

namespace rxsim {

class LteScene {
  public:
    void parse(const SoapySDR::Kwargs &args) {
        if (args.count("lte_freq") == 0) return;
        freq_ = argDouble(args, "lte_freq", 0.0);
        if (!(freq_ >= kMinFreq && freq_ <= kMaxFreq))
            throw std::runtime_error("rxsim: device arg lte_freq=" + argString(args, "lte_freq", "") +
                                     " must be in 1 MHz..6 GHz");
        double pci = argDouble(args, "lte_pci", 0.0);
        if (!(pci >= 0.0 && pci <= 503.0 && pci == std::floor(pci)))
            throw std::runtime_error("rxsim: device arg lte_pci=" + argString(args, "lte_pci", "") +
                                     " must be an integer 0..503");
        snrDb_ = argDouble(args, "lte_snr_db", 0.0);
        if (!(snrDb_ >= -60.0 && snrDb_ <= 100.0))
            throw std::runtime_error("rxsim: device arg lte_snr_db=" + argString(args, "lte_snr_db", "") +
                                     " must be in -60..100 dB");
        double seed = argDouble(args, "lte_seed", 1.0);
        if (!(seed >= 0.0 && seed < 4294967296.0 && seed == std::floor(seed)))
            throw std::runtime_error("rxsim: device arg lte_seed=" + argString(args, "lte_seed", "") +
                                     " must be an integer 0..2^32-1");
        noisePower_ = std::pow(10.0, argDouble(args, "noise_dbfs", -60.0) / 10.0);
        const double tdd = argDouble(args, "lte_tdd", 0.0);
        if (!(tdd == 0.0 || tdd == 1.0))
            throw std::runtime_error("rxsim: device arg lte_tdd=" + argString(args, "lte_tdd", "") +
                                     " must be 0 (FDD) or 1 (TDD)");
        tdd_ = tdd == 1.0;
        pci_ = int(pci);
        build(uint64_t(seed));
    }

    bool active() const { return !table_.empty(); }

    // PSS d_u(n), n = 0..61 (TS 36.211 §6.11.1.1), roots 25/29/34 for N_ID_2 = 0/1/2.
    static std::complex<double> pss(int nid2, int n) {
        static const int roots[3] = {25, 29, 34};
        const long u = roots[nid2];
        const long m = n < 31 ? long(n) * (n + 1) : long(n + 1) * (n + 2);
        const double turns = double((m * u) % 126) / 63.0; // exp(-j*pi*u*m/63), reduced
        return std::polar(1.0, -3.141592653589793 * turns);
    }

    // SSS d(n), n = 0..61 (TS 36.211 §6.11.2.1) for N_ID_1, N_ID_2, subframe 0 or 5.
    static int sss(int nid1, int nid2, bool subframe5, int n) {
        auto mseq = [](int a, int b, int c, int d) { // x(i+5) = sum of x(i+taps) mod 2
            int x[31] = {0, 0, 0, 0, 1};
            for (int i = 0; i < 26; i++) {
                int v = x[i + a];
                if (b >= 0) v += x[i + b];
                if (c >= 0) v += x[i + c];
                if (d >= 0) v += x[i + d];
                x[i + 5] = v % 2;
            }
            std::vector<int> out(31);
            for (int i = 0; i < 31; i++) out[i] = 1 - 2 * x[i];
            return out;
        };
        static const std::vector<int> st = mseq(2, 0, -1, -1), ct = mseq(3, 0, -1, -1), zt = mseq(4, 2, 1, 0);
        const int q1 = nid1 / 30, q = (nid1 + q1 * (q1 + 1) / 2) / 30, mp = nid1 + q * (q + 1) / 2;
        const int m0 = mp % 31, m1 = (m0 + mp / 31 + 1) % 31;
        const int k = n / 2;
        const int s0 = st[(k + m0) % 31], s1 = st[(k + m1) % 31];
        const int c0 = ct[(k + nid2) % 31], c1 = ct[(k + nid2 + 3) % 31];
        const int z0 = zt[(k + m0 % 8) % 31], z1 = zt[(k + m1 % 8) % 31];
        if (n % 2 == 0) return subframe5 ? s1 * c0 : s0 * c0;
        return subframe5 ? s0 * c1 * z1 : s1 * c1 * z0;
    }

    // Add the cell to out[0..n), whose first sample is the stream's sample `first`.
    void apply(SimStream *s, std::complex<float> *out, size_t n, uint64_t first, const Frame &f) const {
        if (!active() || n == 0) return;
        // Hz at RF over the true sample rate: the LO sets the first, the sample clock the
        // second (one crystal: both e).
        const double fb = (freq_ - f.fc * (1.0 + f.e)) / (1.0 + f.es);
        if (!(std::fabs(fb) < 0.5 * f.rate + kHalfWidthHz)) return; // not in the band at all
        // Power over the noise in the cell's 1.08 MHz (all of the band if narrower).
        const double inBand = std::min(1.0, 2.0 * kHalfWidthHz / f.rate);
        // The anti-alias filter's gain at the cell's centre (the whole cell at it).
        const float amp = f.gain * float(antiAlias(fb / f.rate) *
                                         std::sqrt(noisePower_ * inBand * std::pow(10.0, snrDb_ / 10.0)));
        const double len = double(table_.size());
        const double step = 30.72e6 / (f.rate * (1.0 + f.es)); // table samples per radio sample
        double pos = std::fmod(double(first) * step + offset_, len);
        const uint64_t st = cyclesToPhase(fb / f.rate);
        uint64_t ph = s->ltePhase;
        const std::complex<float> *sine = tables().sine.data();
        const std::complex<float> *tab = table_.data();
        const size_t last = table_.size() - 1;
        for (size_t k = 0; k < n; k++) {
            const size_t i = size_t(pos);
            const float fr = float(pos - double(i));
            const std::complex<float> a = tab[i], b = tab[i == last ? 0 : i + 1];
            out[k] += amp * (a + fr * (b - a)) * sine[phaseIndex(ph)];
            ph += st;
            pos += step;
            if (pos >= len) pos -= len;
        }
        s->ltePhase = ph;
    }

  private:
    static constexpr double kHalfWidthHz = 0.54e6; // 36 subcarriers of 15 kHz
    static constexpr int kN = 2048;                  // FFT size at 30.72 MS/s

    void build(uint64_t seed) {
        const int nid1 = pci_ / 3, nid2 = pci_ % 3;
        uint64_t r = (seed + 1) * 0x9E3779B97F4A7C15ull;
        auto bit = [&r]() {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            return (r >> 33) & 1;
        };
        const double twoPi = 6.283185307179586;
        table_.reserve(2 * 307200);
        std::vector<std::complex<double>> twiddle(kN);
        for (int m = 0; m < kN; m++) twiddle[size_t(m)] = std::polar(1.0, twoPi * double(m) / kN);
        std::vector<std::complex<double>> grid(73); // subcarriers -36..36 (index k + 36)
        for (int slot = 0; slot < 40; slot++) {
            for (int l = 0; l < 7; l++) {
                // TDD: the uplink subframes (2, 3, 7, 8) and the special subframes (1, 6)
                // past their three downlink symbols carry nothing from the cell.
                const int sf = (slot / 2) % 10;
                const bool silent = tdd_ && (sf == 2 || sf == 3 || sf == 7 || sf == 8 ||
                                             ((sf == 1 || sf == 6) && (slot % 2 == 1 || l >= 3)));
                for (int k = -36; k <= 36; k++) {
                    const double re = bit() ? 1.0 : -1.0, im = bit() ? 1.0 : -1.0;
                    grid[k + 36] = k == 0 || silent ? 0.0 : std::complex<double>(re, im) / std::sqrt(2.0);
                }
                // FDD: PSS in the last symbol, SSS in the one before, of slots 0 and 10 of
                // each frame. TDD: SSS in the last symbol of slots 1 and 11, PSS in the
                // third of slots 2 and 12. The five subcarriers either side are left empty.
                const bool sssHere = tdd_ ? (slot % 10 == 1 && l == 6) : (slot % 10 == 0 && l == 5);
                const bool pssHere = tdd_ ? (slot % 10 == 2 && l == 2) : (slot % 10 == 0 && l == 6);
                if (sssHere || pssHere) {
                    for (int k = 32; k <= 36; k++) grid[36 + k] = grid[36 - k] = 0.0;
                    for (int n = 0; n < 62; n++) {
                        const int k = n < 31 ? n - 31 : n - 30;
                        grid[k + 36] = pssHere ? pss(nid2, n) : std::complex<double>(sss(nid1, nid2, slot % 20 >= 10, n), 0.0);
                    }
                }
                // The symbol: cyclic prefix (160 or 144 samples), then 2048 useful.
                const int cp = l == 0 ? 160 : 144;
                for (int i = -cp; i < kN; i++) {
                    std::complex<double> v = 0.0;
                    for (int k = -36; k <= 36; k++)
                        v += grid[k + 36] * twiddle[size_t((k * i) & (kN - 1))]; // exp(j2πki/N)
                    table_.push_back(std::complex<float>(v));
                }
            }
        }
        double p = 0.0;
        for (const auto &v : table_) p += std::norm(v);
        const float g = float(1.0 / std::sqrt(p / double(table_.size())));
        for (auto &v : table_) v *= g;
        // Where in its two frames the cell is at the first sample: on the 1.92 MS/s grid
        // (a multiple of 16 table samples), so a radio at 1.92 MS/s with no clock error
        // samples it exactly.
        offset_ = double(16 * ((r >> 11) % 38400));
    }

    double freq_ = 0.0, snrDb_ = 0.0, noisePower_ = 1e-6, offset_ = 0.0;
    int pci_ = 0;
    bool tdd_ = false;
    std::vector<std::complex<float>> table_;
};

} // namespace rxsim
