// rxsim: the streams: set-up, activation, reads (the generator, the scenes, replay and
// the CS16 conversion) and writes (see rxsim.hpp). The TX stream keys nothing real: it
// paces and counts what it is given and logs it (event_log.hpp).
#include "rxsim.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

// SSE2 (every x86-64, and 32-bit x86 built with it) for the two hot loops; other
// targets take the scalar loops, which give the same samples bit for bit.
#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define RXSIM_SSE2 1
#endif

namespace rxsim {

namespace {

// Inline rounding (half away from zero), not std::lrint: without -fno-math-errno
// lrint is a libm call per component, which made the CS16 conversion cost as much
// as generating the samples and capped SoapySDRServer's stream thread.
int16_t toI16(float v) {
    float x = std::max(-1.0f, std::min(1.0f, v)) * 32767.0f;
    return int16_t(x + std::copysign(0.5f, x)); // branch-free: noise signs are random
}

// The CS16 conversion of m floats (I, Q interleaved), eight at a time with SSE2:
// the same clamp (min, then max), scale, half away from zero and truncation as
// toI16, so the same integers; packs_epi32 saturates, a no-op after the clamp.
void toI16Block(const float *in, int16_t *out, size_t m) {
    size_t j = 0;
#ifdef RXSIM_SSE2
    const __m128 one = _mm_set1_ps(1.0f), minusOne = _mm_set1_ps(-1.0f);
    const __m128 scale = _mm_set1_ps(32767.0f), half = _mm_set1_ps(0.5f);
    const __m128 signBit = _mm_set1_ps(-0.0f);
    auto conv = [&](__m128 v) {
        __m128 x = _mm_mul_ps(_mm_max_ps(_mm_min_ps(v, one), minusOne), scale);
        x = _mm_add_ps(x, _mm_or_ps(half, _mm_and_ps(x, signBit)));
        return _mm_cvttps_epi32(x);
    };
    for (; j + 8 <= m; j += 8) {
        __m128i lo = conv(_mm_loadu_ps(in + j)), hi = conv(_mm_loadu_ps(in + j + 4));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + j), _mm_packs_epi32(lo, hi));
    }
#endif
    for (; j < m; j++) out[j] = toI16(in[j]);
}

// The converter's full scale on a CF32 stream: m floats (I, Q interleaved) clamped to
// ±1.0 in place, the same clamp (min, then max) the integer paths apply before they
// scale, so a level past full scale clips in every format alike, as a real radio's
// converter does (its CF32 is its integers scaled into ±1.0, never beyond).
void clampToFullScale(float *io, size_t m) {
    size_t j = 0;
#ifdef RXSIM_SSE2
    const __m128 one = _mm_set1_ps(1.0f), minusOne = _mm_set1_ps(-1.0f);
    for (; j + 4 <= m; j += 4)
        _mm_storeu_ps(io + j, _mm_max_ps(_mm_min_ps(_mm_loadu_ps(io + j), one), minusOne));
#endif
    for (; j < m; j++) io[j] = std::max(-1.0f, std::min(1.0f, io[j]));
}

// The 8-bit converter's own noise, in counts: triangular on (-1, 1) (two uniforms'
// difference, from the stream's dither generator), 0.41 count rms.
float ditherCounts(SimStream *s) {
    uint64_t r = s->ditherRng;
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    s->ditherRng = r;
    const float unit = 1.0f / 4294967296.0f; // 2^-32
    return float(uint32_t(r)) * unit - float(uint32_t(r >> 32)) * unit;
}

// An integer stream's m values (I, Q interleaved) from the stream's float scratch
// into `out` from value `at` on: CS16 by toI16Block, or CS8 as a HackRF delivers it:
// full scale 127, the value plus the converter's own noise (ditherCounts), clamped to
// ±127 and rounded half away from zero. Behind a real 8-bit ADC the analog noise
// reaching it is a count or so: the quantisation error is noise, never harmonics of
// a strong tone (which rounding a clean signal gives: spurs 30-40 dB under the tone
// that a capture would list as carriers).
void toNative(SimStream *s, void *out, size_t at, size_t m) {
    const float *in = reinterpret_cast<const float *>(s->scratch.data());
    if (!s->cs8) return toI16Block(in, static_cast<int16_t *>(out) + at, m);
    int8_t *o = static_cast<int8_t *>(out) + at;
    for (size_t j = 0; j < m; j++) {
        float x = std::max(-1.0f, std::min(1.0f, in[j])) * 127.0f + ditherCounts(s);
        x = std::max(-127.0f, std::min(127.0f, x));
        o[j] = int8_t(x + std::copysign(0.5f, x));
    }
}

// A read that gets nothing (a stalled radio, a single play that ended, a dead band): it
// waits out its timeout, or until another thread deactivates the stream, without holding
// the stream lock (the condition variable releases it), then times out — as a driver
// whose sample queue stays empty does, so a deactivate or close is never held up.
int nothingArrives(SimStream *s, std::unique_lock<std::mutex> &lk, Clock::time_point deadline) {
    while (s->active && Clock::now() < deadline) s->cv.wait_until(lk, deadline);
    return SOAPY_SDR_TIMEOUT;
}

// SOAPY_SDR_END_BURST when a read has handed out a burst's last sample, else 0.
int burstDone(const SimStream *s) {
    return s->burstEnd > 0 && s->produced >= s->burstEnd ? SOAPY_SDR_END_BURST : 0;
}

uint64_t nextRand(SimStream *s) {
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return s->rng;
}

} // namespace

// What setupStream accepts in that direction, and nothing more: a client that picks a
// format from this list (SoapySDRUtil --probe, GNU Radio, SoapyRemote) must be able to
// open it. CS8 is RX only (a HackRF's receive format).
std::vector<std::string> RxSim::getStreamFormats(const int direction, const size_t) const {
    if (direction == SOAPY_SDR_TX) return {SOAPY_SDR_CF32, SOAPY_SDR_CS16};
    return {SOAPY_SDR_CF32, SOAPY_SDR_CS16, SOAPY_SDR_CS8};
}

std::string RxSim::getNativeStreamFormat(const int, const size_t, double &fullScale) const {
    fullScale = 32767.0;
    return SOAPY_SDR_CS16;
}

SoapySDR::Stream *RxSim::setupStream(const int direction, const std::string &format,
                              const std::vector<size_t> &channels,
                              const SoapySDR::Kwargs &streamArgs) {
    const char *dir = direction == SOAPY_SDR_TX ? "TX" : "RX";
    if (direction == SOAPY_SDR_TX && txDeny_)
        throw std::runtime_error("rxsim: TX denied by device args tx=deny (serial=" + serial_ + ")");
    const auto offered = getStreamFormats(direction, 0);
    if (std::find(offered.begin(), offered.end(), format) == offered.end())
        throw std::runtime_error("rxsim: unsupported " + std::string(dir) + " stream format " + format);
    // One channel per direction: a stream is channel 0 (none named: channel 0, as SoapySDR
    // defines it). Channel 0 twice would be two buffers of which a read fills one.
    for (size_t c : channels)
        if (c != 0) throw std::runtime_error("rxsim: no channel " + std::to_string(c));
    if (channels.size() > 1)
        throw std::runtime_error("rxsim: one channel per stream (channel 0), " + std::to_string(channels.size()) +
                                 " given");
    auto *s = new SimStream();
    s->direction = direction;
    s->cs16 = format == SOAPY_SDR_CS16 || format == SOAPY_SDR_CS8;
    s->cs8 = format == SOAPY_SDR_CS8;
    s->scratch.resize(kBlock);
    if (seed_ != kLegacySeed) {
        s->rng = seed_ | 1;
        s->ditherRng = (seed_ ^ 0xD1B54A32D192ED03ull) | 1;
    }
    logEvent("setupStream", dir, serial_);
    // The stream args a client gave (SoapyRemote's own remote:* ones are not ours).
    for (const auto &kv : streamArgs)
        if (kv.first.rfind("remote:", 0) != 0) logEvent("streamArg " + kv.first + "=" + kv.second, dir, serial_);
    return reinterpret_cast<SoapySDR::Stream *>(s);
}

void RxSim::closeStream(SoapySDR::Stream *stream) {
    auto *s = reinterpret_cast<SimStream *>(stream);
    stopTxWitness(s->witness);
    logEvent("closeStream", s->direction == SOAPY_SDR_TX ? "TX" : "RX", serial_);
    delete s;
}

size_t RxSim::getStreamMTU(SoapySDR::Stream *) const { return kMtu; }

// A timed start (SOAPY_SDR_HAS_TIME) is kept, as a radio with a time counter (a USRP)
// keeps it: the stream's sample 0 is at device time timeNs, nothing before it is
// delivered (paced reads wait, then time out) and the first read is stamped timeNs. A
// time already past is a late command, one more than a day ahead too early to process:
// SOAPY_SDR_TIME_ERROR, the stream stays inactive.
//
// An RX burst (SOAPY_SDR_END_BURST with numElems > 0) is kept as a USRP keeps it
// (SoapyUHD's STREAM_MODE_NUM_SAMPS_AND_DONE): numElems samples, the read that hands
// out the last of them flagged SOAPY_SDR_END_BURST, then nothing (reads time out)
// until the stream is activated again. numElems 0 is a continuous stream, whatever
// the flags. What rxsim does not model is refused with SOAPY_SDR_NOT_SUPPORTED, the
// stream left inactive, never streamed as something else: numElems > 0 without
// SOAPY_SDR_END_BURST (a burst another command would continue) and any flag but
// SOAPY_SDR_HAS_TIME and SOAPY_SDR_END_BURST.
int RxSim::activateStream(SoapySDR::Stream *stream, const int flags, const long long timeNs,
                          const size_t numElems) {
    auto *s = reinterpret_cast<SimStream *>(stream);
    uint64_t burst = 0;
    if (s->direction == SOAPY_SDR_RX) {
        if ((flags & ~(SOAPY_SDR_HAS_TIME | SOAPY_SDR_END_BURST)) != 0) return SOAPY_SDR_NOT_SUPPORTED;
        if (numElems > 0 && (flags & SOAPY_SDR_END_BURST) == 0) return SOAPY_SDR_NOT_SUPPORTED;
        burst = numElems;
    }
    double rate;
    long long base;
    Clock::time_point wallNow;
    {
        std::lock_guard<std::mutex> g(mu_);
        rate = s->direction == SOAPY_SDR_TX ? txRate_ : rxRate_;
        base = hwNowNs();
        wallNow = Clock::now();
    }
    long long startInNs = 0;
    if ((flags & SOAPY_SDR_HAS_TIME) != 0) {
        if (timeNs < base || timeNs - base > kMaxStartAheadNs) return SOAPY_SDR_TIME_ERROR;
        startInNs = timeNs - base;
        base = timeNs;
    }
    {
        std::lock_guard<std::mutex> g(s->mu);
        s->rate = rate;
        s->timeBaseNs = base;
        s->t0 = wallNow + std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(startInNs));
        s->produced = 0;
        s->burstEnd = burst;
        s->stalled = false;
        s->phase = 0;
        s->active = true;
        s->replayStart = replayPos_.load();
    }
    if (s->direction == SOAPY_SDR_RX) {
        std::lock_guard<std::mutex> g(mu_);
        if (!rxStreamed_) {
            rxStreamed_ = true;
            rxFirstActive_ = Clock::now();
        }
    }
    s->cv.notify_all();
    logEvent("activateStream", s->direction == SOAPY_SDR_TX ? "TX" : "RX", serial_);
    if (s->direction == SOAPY_SDR_TX) {
        stopTxWitness(s->witness);
        s->witness = startTxWitness(serial_);
    }
    return 0;
}

// A timed stop (SOAPY_SDR_HAS_TIME) of an RX stream is kept as a USRP keeps it (SoapyUHD's
// STOP_CONTINUOUS at a time): the samples before timeNs still arrive, the read that hands
// out the last of them flagged SOAPY_SDR_END_BURST, then reads time out until the stream
// is activated again (an earlier burst end stays). A time already reached stops it now.
// Any other flag on RX is refused with SOAPY_SDR_NOT_SUPPORTED, the stream left as it was.
int RxSim::deactivateStream(SoapySDR::Stream *stream, const int flags, const long long timeNs) {
    auto *s = reinterpret_cast<SimStream *>(stream);
    if (s->direction == SOAPY_SDR_RX) {
        if ((flags & ~SOAPY_SDR_HAS_TIME) != 0) return SOAPY_SDR_NOT_SUPPORTED;
        if ((flags & SOAPY_SDR_HAS_TIME) != 0) {
            bool later;
            {
                std::lock_guard<std::mutex> g(s->mu);
                // The samples stamped before timeNs: sample k is at timeBaseNs + k / rate.
                const double before = double(timeNs - s->timeBaseNs) * 1e-9 * s->rate;
                later = s->active && before > double(s->produced);
                if (later) {
                    const uint64_t end = before >= 1.8e19 ? UINT64_MAX : uint64_t(std::ceil(before));
                    if (s->burstEnd == 0 || end < s->burstEnd) s->burstEnd = end;
                }
            }
            if (later) {
                logEvent("deactivateStream at " + std::to_string(timeNs), "RX", serial_);
                return 0;
            }
        }
    }
    {
        std::lock_guard<std::mutex> g(s->mu);
        if (s->active && s->direction == SOAPY_SDR_RX) replayPos_.store(s->replayStart + s->produced);
        s->active = false;
    }
    s->cv.notify_all();
    logEvent("deactivateStream", s->direction == SOAPY_SDR_TX ? "TX" : "RX", serial_);
    stopTxWitness(s->witness);
    return 0;
}

int RxSim::readStream(SoapySDR::Stream *stream, void *const *buffs, const size_t numElems, int &flags,
               long long &timeNs, const long timeoutUs) {
    auto *s = reinterpret_cast<SimStream *>(stream);
    flags = 0;
    if (s->direction != SOAPY_SDR_RX) return SOAPY_SDR_NOT_SUPPORTED;
    // Clamped to an hour: a client passing LONG_MAX must not overflow the clock.
    // long long: `long` is 32 bits on Windows (LLP64), too small for an hour in µs.
    const long long waitUs =
        std::min(std::max(0LL, (long long)timeoutUs), 3600LL * 1000000LL);
    const auto deadline = Clock::now() + std::chrono::microseconds(waitUs);
    std::unique_lock<std::mutex> lk(s->mu);
    // Not (yet, or no longer) active: no samples arrive, so wait for activation
    // until the timeout, like a driver whose sample queue stays empty.
    while (!s->active) {
        if (s->cv.wait_until(lk, deadline) == std::cv_status::timeout && !s->active)
            return SOAPY_SDR_TIMEOUT;
    }
    if (numElems == 0) return 0;
    if (rxStalled()) {
        // Fault injection (rx_stall_after_s): nothing arrives any more. Wait out the
        // timeout (a deactivate from another thread ends the wait) and time out.
        return nothingArrives(s, lk, deadline);
    }
    if (replay_.ended(s->replayStart + s->produced)) {
        // A single play has ended: nothing arrives any more (no overflow either).
        if (!replayEnded_.exchange(true)) logEvent("replayEnd", "RX", serial_);
        return nothingArrives(s, lk, deadline);
    }
    // A burst hands out what is left of it, then nothing: reads time out, as a
    // radio's do after its stream command is done.
    size_t want = numElems;
    if (s->burstEnd > 0) {
        if (s->produced >= s->burstEnd) return nothingArrives(s, lk, deadline);
        want = size_t(std::min<uint64_t>(want, s->burstEnd - s->produced));
    }
    size_t n = want;
    const Tuning tu = tuning();
    const Frame &frame = tu.frame;
    // Fault injection (dead_hz): tuned inside the dead band, nothing arrives.
    if (scene_.dead(frame.fc)) return nothingArrives(s, lk, deadline);
    if (pace_) {
        const double capacity =
            bufferSamples_ > 0 ? bufferSamples_ : std::max(double(1 << 21), 0.1 * s->rate);
        for (;;) {
            // Deactivated (or re-activated) while this read waited.
            if (!s->active) return SOAPY_SDR_TIMEOUT;
            double elapsed = std::chrono::duration<double>(Clock::now() - s->t0).count();
            double avail = elapsed * s->rate - double(s->produced);
            if (avail > capacity) {
                // The reader fell behind more than the buffer holds: the oldest
                // samples are lost (half a buffer, like a ring restarting). Skip them (the tone keeps its phase in real
                // time) and report the overflow once.
                uint64_t lost = uint64_t(avail - 0.5 * capacity);
                s->produced += lost;
                s->phase += lost * tu.step; // mod 2^64: exactly (phase + lost * step) mod 1
                s->noiseIdx = nextRand(s) % kNoiseLen;
                flags |= SOAPY_SDR_END_ABRUPT;
                return SOAPY_SDR_OVERFLOW;
            }
            if (avail >= double(std::min(want, kMtu))) {
                n = std::min(want, size_t(avail));
                break;
            }
            auto now = Clock::now();
            if (now >= deadline) {
                if (avail >= 1.0) {
                    n = size_t(avail);
                    break;
                }
                return SOAPY_SDR_TIMEOUT;
            }
            double need = (double(std::min(want, kMtu)) - avail) / s->rate;
            auto wait = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(need));
            auto until = std::min(deadline, now + wait);
            // Sleeps without holding the stream lock, so activate/deactivate and
            // close from another thread are never held up by a waiting read.
            s->cv.wait_until(lk, until);
        }
    }
    // The hardware time of this read's first sample: the sample clock, counted from
    // the device time at activation (what HackRF/USRP report), so it is monotonic.
    timeNs = s->timeBaseNs + (long long)std::llround(double(s->produced) / s->rate * 1e9);
    if (replay_.active()) {
        // The recording's samples, nothing generated.
        const uint64_t pos = s->replayStart + s->produced;
        n = replay_.clip(n, pos); // a single play's last read stops at its end
        bool more;
        if (s->cs16) {
            size_t done = 0;
            more = true;
            while (done < n && more) {
                size_t k = std::min(n - done, kBlock);
                more = replay_.fill(s->scratch.data(), k, pos + done);
                toNative(s, buffs[0], 2 * done, 2 * k);
                done += k;
            }
        } else {
            more = replay_.fill(static_cast<std::complex<float> *>(buffs[0]), n, pos);
            clampToFullScale(static_cast<float *>(buffs[0]), 2 * n);
        }
        if (!more) {
            // A single play has ended: nothing arrives any more.
            if (!replayEnded_.exchange(true)) logEvent("replayEnd", "RX", serial_);
            return nothingArrives(s, lk, deadline);
        }
        s->produced += n;
        flags |= SOAPY_SDR_HAS_TIME | burstDone(s);
        return int(std::min<size_t>(n, size_t(1) << 30));
    }
    if (s->cs16) {
        size_t done = 0;
        while (done < n) {
            size_t k = std::min(n - done, kBlock);
            generate(s, s->scratch.data(), k, tu);
            scene_.apply(s, s->scratch.data(), k, s->produced + done, frame);
            lte_.apply(s, s->scratch.data(), k, s->produced + done, frame);
            gsm_.apply(s, s->scratch.data(), k, s->produced + done, frame, tu.namp);
            toNative(s, buffs[0], 2 * done, 2 * k);
            done += k;
        }
    } else {
        generate(s, static_cast<std::complex<float> *>(buffs[0]), n, tu);
        scene_.apply(s, static_cast<std::complex<float> *>(buffs[0]), n, s->produced, frame);
        lte_.apply(s, static_cast<std::complex<float> *>(buffs[0]), n, s->produced, frame);
        gsm_.apply(s, static_cast<std::complex<float> *>(buffs[0]), n, s->produced, frame, tu.namp);
        clampToFullScale(static_cast<float *>(buffs[0]), 2 * n);
    }
    s->produced += n;
    flags |= SOAPY_SDR_HAS_TIME | burstDone(s);
    return int(std::min<size_t>(n, size_t(1) << 30));
}

int RxSim::writeStream(SoapySDR::Stream *stream, const void *const *, const size_t numElems, int &flags,
                const long long, const long timeoutUs) {
    auto *s = reinterpret_cast<SimStream *>(stream);
    (void)flags;
    if (s->direction != SOAPY_SDR_TX) return SOAPY_SDR_NOT_SUPPORTED;
    std::unique_lock<std::mutex> lk(s->mu);
    if (!s->active) return SOAPY_SDR_STREAM_ERROR;
    size_t n = std::min(numElems, kMtu);
    // Fault injection: the "device" drops off the bus after tx_fail_after samples.
    if (txFailAfter_ >= 0.0 && double(s->produced + n) > txFailAfter_) return SOAPY_SDR_STREAM_ERROR;
    // Fault injection: a write that hangs (ignores its timeout) until the stall
    // ends or another thread deactivates the stream.
    if (txStallAfter_ >= 0.0 && !s->stalled &&
        std::chrono::duration<double>(Clock::now() - s->t0).count() >= txStallAfter_) {
        s->stalled = true;
        logEvent("stallWrite", "TX", serial_);
        const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(std::min(txStallFor_, 3600.0)));
        while (s->active && Clock::now() < until) s->cv.wait_until(lk, until);
        if (!s->active) return SOAPY_SDR_TIMEOUT;
    }
    if (pace_) {
        // The "DAC" drains at the sample rate; at most 50 ms may be queued ahead.
        const double ahead = 0.05 * s->rate;
        double elapsed = std::chrono::duration<double>(Clock::now() - s->t0).count();
        double queued = double(s->produced + n) - elapsed * s->rate;
        if (queued > ahead) {
            double wait = (queued - ahead) / s->rate;
            double maxWait = double(std::max(0L, timeoutUs)) / 1e6;
            // Waits without holding the stream lock (a deactivate from another
            // thread, e.g. SoapySDRServer's handler, is never held up).
            auto dur = [](double secs) {
                return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs));
            };
            if (wait > maxWait) {
                if (maxWait <= 0.0) return SOAPY_SDR_TIMEOUT;
                s->cv.wait_for(lk, dur(maxWait));
                return SOAPY_SDR_TIMEOUT;
            }
            const auto until = Clock::now() + dur(wait);
            while (s->active && Clock::now() < until) s->cv.wait_until(lk, until);
            if (!s->active) return SOAPY_SDR_TIMEOUT;
        }
    }
    s->produced += n;
    return int(n);
}

RxSim::Tuning RxSim::tuning() const {
    std::lock_guard<std::mutex> g(mu_);
    Tuning t;
    double ppm = (clock_ == "external" && extRef_) ? extPpm_ : ppm_;
    double e = ppm * 1e-6;
    double fb = (toneHz_ - rxFreq_ * (1.0 + e)) / (1.0 + e);
    bool inBand = hasTone_ && std::fabs(fb) < 0.5 * rxRate_;
    t.step = cyclesToPhase(fb / rxRate_);
    // The RX gain as the driver reports it (LNA + VGA, getGain), relative to the level
    // reference: the tone and the receiver noise are amplified alike, before the converter.
    const float gain = float(std::pow(10.0, (rxGain_[0] + rxGain_[1] - kRefGainDb) / 20.0));
    t.amp = inBand ? gain * toneAmp_ * float(antiAlias(fb / rxRate_)) : 0.0f;
    t.namp = gain * noiseAmp_;
    t.frame.gain = gain;
    t.noise = noise_->data();
    t.frame.e = e;
    t.frame.es = hasSamplePpm_ ? samplePpm_ * 1e-6 : e;
    t.frame.fc = rxFreq_;
    t.frame.rate = rxRate_;
    t.frame.retuneAt = retuneAt_;
    t.frame.gen = retuneGen_;
    t.frame.pace = pace_;
    return t;
}

// Whether the rx_stall_after_s fault has begun (logged once).
bool RxSim::rxStalled() {
    if (rxStallAfter_ < 0.0) return false;
    std::lock_guard<std::mutex> g(mu_);
    if (!rxStreamed_) return false;
    if (std::chrono::duration<double>(Clock::now() - rxFirstActive_).count() < rxStallAfter_) return false;
    if (!rxStallLogged_) {
        rxStallLogged_ = true;
        logEvent("stallRead", "RX", serial_);
    }
    return true;
}

// The hot loop: table NCO (64-bit phase accumulator) plus the noise table.
void RxSim::generate(SimStream *s, std::complex<float> *out, size_t n, const Tuning &tu) {
    const auto &t = tables();
    const std::complex<float> *sine = t.sine.data();
    const std::complex<float> *noise = tu.noise;
    const float a = tu.amp, na = tu.namp;
    const uint64_t step = tu.step;
    uint64_t phase = s->phase;
    size_t ni = s->noiseIdx;
    size_t i = 0;
    while (i < n) {
        const size_t run = std::min(n - i, kNoiseLen - ni);
        const std::complex<float> *nz = noise + ni;
        std::complex<float> *o = out + i;
        if (a == 0.0f) {
            // No tone in band: a * sine adds exactly +-0, so this is the same signal.
            for (size_t k = 0; k < run; k++) o[k] = na * nz[k];
            phase += run * step;
        } else {
            for (size_t k = 0; k < run; k++) {
                o[k] = a * sine[phaseIndex(phase)] + na * nz[k];
                phase += step;
            }
        }
        i += run;
        ni += run;
        if (ni >= kNoiseLen) ni = nextRand(s) % (kNoiseLen / 2);
    }
    s->phase = phase;
    s->noiseIdx = ni;
}

} // namespace rxsim
