// rxsim's GSM scene: a BCCH carrier with FCCH bursts.
//
// Device args: gsm_freq=F,gsm_snr_db=S puts a GSM BCCH carrier at absolute RF F Hz:
// GMSK (BT 0.3, approximated by a one-pole smoothing of the ±Rb/4 frequency steps) at
// 270.833 kbit/s with random bits, except the FCCH bursts — 148 zero bits, a pure tone
// at +Rb/4 = +67.708 kHz — in timeslot 0 of frames 0, 10, 20, 30 and 40 of every
// 51-frame multiframe (a frame is 1250 bits = 4.615 ms; frame 0 starts with the
// stream's sample 0). S (default 20) is the carrier's power over the rxsim noise in a
// 200 kHz channel. Timing and frequency run on true time, so the radio's ppm moves the
// LO and the sample clock alike, as for the tone.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "../common.hpp"

namespace rxsim {

class GsmScene {
  public:
    static constexpr double kBitRate = 1625000.0 / 6.0; // 270.833 kbit/s
    static constexpr double kFrameBits = 1250.0;        // 8 slots of 156.25 bits
    static constexpr double kSlotBits = 156.25;
    static constexpr double kFcchBits = 148.0;

    void parse(const SoapySDR::Kwargs &args) {
        active_ = args.count("gsm_freq") != 0;
        freq_ = argDouble(args, "gsm_freq", 0.0);
        snrDb_ = argDouble(args, "gsm_snr_db", 20.0);
        if (active_ && !(freq_ > 0.0))
            throw std::runtime_error("rxsim: device arg gsm_freq=" + argString(args, "gsm_freq", "") +
                                     " must be a positive frequency in Hz");
        if (snrDb_ < -50.0 || snrDb_ > 100.0)
            throw std::runtime_error("rxsim: device arg gsm_snr_db=" + std::to_string(snrDb_) +
                                     " must be in -50..100 dB");
    }

    // Is bit number `bit` of the 51-multiframe (0 <= bit < 51 * 1250) an FCCH bit?
    static bool fcchBit(double bit) {
        const int frame = int(bit / kFrameBits);
        const double inFrame = bit - frame * kFrameBits;
        return frame % 10 == 0 && frame <= 40 && inFrame < kFcchBits; // slot 0, first 148 bits
    }

    // Add the carrier to out[0..n), whose first sample is the stream's sample `first`.
    void apply(SimStream *s, std::complex<float> *out, size_t n, uint64_t first, const Frame &f,
               float noiseAmp) const {
        if (!active_ || n == 0) return;
        const double e = f.e;
        const double dt = 1.0 / (f.rate * (1.0 + e)); // true seconds per sample
        const double fb = freq_ - f.fc * (1.0 + e);   // the carrier at baseband, true Hz
        if (std::fabs(fb / (1.0 + e)) > 0.5 * f.rate + 200e3) return;
        const double noiseP = double(noiseAmp) * double(noiseAmp);
        // The anti-alias filter's gain at the carrier (the whole carrier at it).
        const double amp = antiAlias(fb / (1.0 + e) / f.rate) *
                           std::sqrt(noiseP * 200e3 / f.rate * std::pow(10.0, snrDb_ / 10.0));
        const double bitsPerSample = kBitRate * dt;
        const double k = 1.0 - std::exp(-6.283185307179586 * 0.3 * kBitRate * dt);
        const double multiframe = 51.0 * kFrameBits;
        double ph = s->gsmPhase, pulse = s->gsmPulse, sym = s->gsmSymbol;
        long long at = s->gsmSymbolAt;
        for (size_t i = 0; i < n; i++) {
            const double bits = double(first + i) * bitsPerSample;
            const long long idx = (long long)std::floor(bits);
            if (idx != at) {
                at = idx;
                const double inMf = std::fmod(double(idx), multiframe);
                if (fcchBit(inMf)) {
                    sym = 1.0;
                } else {
                    uint64_t &r = s->gsmRng;
                    r ^= r << 13;
                    r ^= r >> 7;
                    r ^= r << 17;
                    sym = (r >> 33) & 1 ? 1.0 : -1.0;
                }
            }
            // The FCCH is exactly +Rb/4; elsewhere the smoothed data.
            pulse = fcchBit(std::fmod(bits, multiframe)) ? 1.0 : pulse + k * (sym - pulse);
            ph += (fb + pulse * kBitRate / 4.0) * dt;
            ph -= std::floor(ph);
            const double a = 6.283185307179586 * ph;
            out[i] += std::complex<float>(float(amp * std::cos(a)), float(amp * std::sin(a)));
        }
        s->gsmPhase = ph;
        s->gsmPulse = pulse;
        s->gsmSymbol = sym;
        s->gsmSymbolAt = at;
    }

  private:
    bool active_ = false;
    double freq_ = 0.0, snrDb_ = 20.0;
};

} // namespace rxsim
