// rxsim's sweep scene: CW emitters and PLL settle garbage.
//
// Device args: emitters=F:P[;F:P...] (CW emitters at absolute RF Hz and dBFS at the
// reference gain kRefGainDb, heard
// wherever the radio is tuned) and settle_s=S (the first S seconds of samples after
// every retune are garbage, as while a real PLL relocks); dead_hz=A:B (fault
// injection: while tuned inside [A, B] Hz the RX stream delivers nothing, like a PLL
// that never locks).
//
// Self-contained: the device parses it from its args, tells it about every RX
// retune, and lets it add its emitters to (or overwrite with garbage) each block
// the generator made, before any format conversion.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common.hpp"

namespace rxsim {

class SweepScene {
  public:
    void parse(const SoapySDR::Kwargs &args) {
        settleS_ = argDouble(args, "settle_s", 0.0);
        if (settleS_ < 0.0 || settleS_ > 10.0)
            throw std::runtime_error("rxsim: device arg settle_s=" + std::to_string(settleS_) +
                                     " must be in 0..10 seconds");
        std::string list = argString(args, "emitters", "");
        size_t pos = 0;
        while (pos <= list.size() && !list.empty()) {
            size_t end = list.find(';', pos);
            if (end == std::string::npos) end = list.size();
            std::string item = list.substr(pos, end - pos);
            if (!item.empty()) emitters_.push_back(parseEmitter(item));
            pos = end + 1;
        }
        std::string dead = argString(args, "dead_hz", "");
        if (!dead.empty()) {
            size_t colon = dead.find(':');
            char *e1 = nullptr, *e2 = nullptr;
            std::string a = dead.substr(0, colon), b = colon == std::string::npos ? "" : dead.substr(colon + 1);
            deadLo_ = std::strtod(a.c_str(), &e1);
            deadHi_ = std::strtod(b.c_str(), &e2);
            if (colon == std::string::npos || a.empty() || b.empty() || *e1 != '\0' || *e2 != '\0' ||
                !(deadLo_ <= deadHi_))
                throw std::runtime_error("rxsim: device arg dead_hz=" + dead + " is not LOW_HZ:HIGH_HZ");
        }
        if (emitters_.size() > 64)
            throw std::runtime_error("rxsim: device arg emitters has " +
                                     std::to_string(emitters_.size()) + " entries; at most 64");
    }

    bool active() const { return settleS_ > 0.0 || !emitters_.empty(); }
    bool dead(double fc) const { return fc >= deadLo_ && fc <= deadHi_; }
    double settleS() const { return settleS_; }

    // Apply to out[0..n), whose first sample is the stream's sample number `first`.
    void apply(SimStream *s, std::complex<float> *out, size_t n, uint64_t first, const Frame &f) const {
        if (!active() || n == 0) return;
        if (s->emitterPhase.size() != emitters_.size()) s->emitterPhase.assign(emitters_.size(), 0);
        const auto &t = tables();
        const std::complex<float> *sine = t.sine.data();
        for (size_t j = 0; j < emitters_.size(); j++) {
            double fb = (emitters_[j].hz - f.fc * (1.0 + f.e)) / (1.0 + f.e);
            if (!(std::fabs(fb) < 0.5 * f.rate)) continue;
            const uint64_t st = cyclesToPhase(fb / f.rate);
            uint64_t ph = s->emitterPhase[j];
            const float a = f.gain * float(emitters_[j].amp * antiAlias(fb / f.rate));
            for (size_t k = 0; k < n; k++) {
                out[k] += a * sine[phaseIndex(ph)];
                ph += st;
            }
            s->emitterPhase[j] = ph;
        }
        if (settleS_ <= 0.0) return;
        // How many of these samples fall in the settle window of the last retune.
        size_t bad = 0;
        if (f.pace) {
            // Stream time of sample i is t0 + i / rate (paced: wall time).
            double endS = std::chrono::duration<double>(f.retuneAt - s->t0).count() + settleS_;
            double endSample = endS * f.rate;
            if (endSample > double(first)) bad = size_t(std::min(double(n), endSample - double(first)));
        } else {
            if (s->sceneGen != f.gen) {
                s->sceneGen = f.gen;
                s->garbageLeft = uint64_t(settleS_ * f.rate);
            }
            bad = size_t(std::min<uint64_t>(n, s->garbageLeft));
            s->garbageLeft -= bad;
        }
        // A relocking PLL: a strong carrier sliding across the band, over a raised floor.
        const std::complex<float> *noise = t.noise.data();
        for (size_t k = 0; k < bad; k++) {
            double i = double(first + k);
            double ph = 0.25 * std::fmod(i * i / (settleS_ * f.rate + 1.0), 4.0);
            out[k] = f.gain * (0.5f * sine[size_t(ph * double(kToneLen)) & (kToneLen - 1)] +
                               0.1f * noise[(first + k) & (kNoiseLen - 1)]);
        }
    }

  private:
    struct Emitter {
        double hz, amp;
    };
    static Emitter parseEmitter(const std::string &item) {
        size_t colon = item.find(':');
        auto bad = [&]() {
            return std::runtime_error("rxsim: device arg emitters entry \"" + item +
                                      "\" is not FREQ_HZ:DBFS (e.g. 88.5e6:-30)");
        };
        if (colon == std::string::npos) throw bad();
        std::string fs = item.substr(0, colon), ps = item.substr(colon + 1);
        char *end = nullptr;
        double hz = std::strtod(fs.c_str(), &end);
        if (fs.empty() || *end != '\0' || !std::isfinite(hz) || hz <= 0.0) throw bad();
        double dbfs = std::strtod(ps.c_str(), &end);
        if (ps.empty() || *end != '\0' || !std::isfinite(dbfs) || dbfs > 0.0 || dbfs < -200.0)
            throw bad();
        return {hz, std::pow(10.0, dbfs / 20.0)};
    }

    std::vector<Emitter> emitters_;
    double settleS_ = 0.0;
    double deadLo_ = 1.0, deadHi_ = 0.0; // empty unless dead_hz is given
};

} // namespace rxsim
