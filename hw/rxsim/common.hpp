// rxsim: what every part of the module shares: the device's limits, the device-arg
// readers, the sample tables and their NCO, the stream state and the tuning a scene
// sees. See rxsim.hpp for the module as a whole.
#pragma once

#include <SoapySDR/Device.hpp>
#include <SoapySDR/Formats.hpp>

#include <chrono>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "event_log.hpp"

namespace rxsim {

constexpr double kMinFreq = 1e6;
constexpr double kMaxFreq = 6e9;
constexpr double kMinRate = 0.1e6;
// X310-class: 200 MS/s live analysis is a supported use (docs/hardware.md#rxsim).
constexpr double kMaxRate = 250e6;
// The default bandwidth is 0.75 x rate, so the range starts at 0.75 x the lowest rate.
constexpr double kMinBw = 0.75 * kMinRate;
constexpr double kMaxGain = 60.0;
constexpr double kLnaMax = 40.0;
constexpr double kLnaStep = 8.0;
// The RX gain (LNA + VGA, dB) at which tone_dbfs, noise_dbfs, emitters and the scenes'
// levels hold, and the RX gain a device has until a client sets one (LNA 16, VGA 4).
// Every dB of gain above it raises the analog signal (the signals and the receiver's
// own noise, referred to its input) at the converter by a dB; the converter's own
// floor and full scale stay where they are.
constexpr double kRefGainDb = 20.0;
constexpr double kRefLnaDb = 16.0;
constexpr size_t kMtu = 16384;
// A timed stream start at most this far ahead of the device time (a day, in ns).
constexpr long long kMaxStartAheadNs = 86400LL * 1000000000LL;
// CS16 reads are generated in CF32 blocks of this many samples (8 KiB: stays in L1)
// and converted block by block.
constexpr size_t kBlock = 1024;
constexpr unsigned kToneBits = 16;
constexpr size_t kToneLen = size_t(1) << kToneBits;
constexpr size_t kNoiseLen = size_t(1) << 18;
constexpr const char *kDefaultSerial = "rxsim0";

// A device arg as a number (def when absent or empty); anything else throws, naming it.
double argDouble(const SoapySDR::Kwargs &args, const char *key, double def);
// A device arg as given (def when absent).
std::string argString(const SoapySDR::Kwargs &args, const char *key, const std::string &def);

// The receive anti-alias filter's amplitude gain at x = f / fs (baseband frequency over the
// sample rate): 1 (0 dB) for |x| <= 0.4, a cos^2 roll-off from there, 0.5 (-6.02 dB) at
// |x| = 0.45, 0 at |x| >= 0.5. Its power gain averaged over the band is 0.875 (-0.58 dB).
constexpr double kAafPass = 0.4;
inline double antiAlias(double x) {
    const double a = std::fabs(x);
    if (a <= kAafPass) return 1.0;
    if (a >= 0.5) return 0.0;
    const double c = std::cos(1.5707963267948966 * (a - kAafPass) / (0.5 - kAafPass));
    return c * c;
}

// Shared tables: a unit-circle NCO table and complex Gaussian noise of unit power density
// (white noise of power 1 over the band), shaped by the anti-alias filter (antiAlias), so its
// power is 0.875.
struct Tables {
    std::vector<std::complex<float>> sine;
    std::vector<std::complex<float>> noise;
    Tables();
};

const Tables &tables();

// The seed of the shared table above.
constexpr uint64_t kLegacySeed = 0x9E3779B97F4A7C15ull;

// A noise table as the shared one (unit power density, filtered) for one seed (the legacy
// seed: the shared table), made once per seed and kept for the life of the process.
std::shared_ptr<const std::vector<std::complex<float>>> noiseTable(uint64_t seed);

// The device's noise seed: seed=N, else from the serial (FNV-1a); the default
// serial without a seed keeps the legacy table.
uint64_t deviceSeed(const SoapySDR::Kwargs &args, const std::string &serial);

// A table NCO's phase is a fraction of a cycle in units of 2^-64: the accumulator
// wraps exactly (no rounding drift, no compare and branch in the hot loop, so the
// compiler can pipeline it), and the table index is its top kToneBits bits.
inline uint64_t cyclesToPhase(double cycles) {
    const double twoTo64 = 18446744073709551616.0;
    const double v = (cycles - std::floor(cycles)) * twoTo64; // in [0, 2^64]
    return v >= twoTo64 ? 0 : uint64_t(v);
}
inline size_t phaseIndex(uint64_t phase) { return size_t(phase >> (64 - kToneBits)); }

using Clock = std::chrono::steady_clock;

// One stream. A conforming driver is called from several threads: SoapySDRServer
// reads (or writes) on a worker thread that starts right after setupStream, while its
// client-handler thread calls activateStream/deactivateStream/closeStream. So every
// field is guarded by `mu`, and a read on an inactive stream waits (up to its timeout)
// for activation and returns SOAPY_SDR_TIMEOUT, as hardware drivers do, instead of an
// error the server would forward to the client as STREAM_ERROR.
struct SimStream {
    std::mutex mu;
    std::condition_variable cv; // notified on activate/deactivate
    int direction = SOAPY_SDR_RX;
    bool cs16 = false;
    bool cs8 = false; // RX only: CS16's integer path, converted by toNative
    bool active = false;
    Clock::time_point t0;
    double rate = 1e6;     // samples per second of wall time (pacing)
    uint64_t produced = 0; // samples handed out (RX) or accepted (TX) since activation
    // RX burst (activateStream with SOAPY_SDR_END_BURST and numElems > 0): the stream
    // ends after sample burstEnd (counted as `produced`); 0 = continuous.
    uint64_t burstEnd = 0;
    bool stalled = false;  // the tx_stall_after_s stall happened in this activation
    long long timeBaseNs = 0; // the device's hardware time at activation (sample 0)
    uint64_t phase = 0;    // tone NCO phase (cyclesToPhase)
    size_t noiseIdx = 0;
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    uint64_t ditherRng = 0x9FB21C651E98DF25ull; // CS8: the converter's own noise (toNative)
    std::vector<std::complex<float>> scratch;
    TxWitness witness; // TX only: logs the holder's death while active (POSIX)
    // Sweep scene state (class SweepScene): emitter phases, the retune seen last, and
    // (unpaced) how many settle-garbage samples are still due.
    std::vector<uint64_t> emitterPhase;
    uint64_t sceneGen = 0;
    uint64_t garbageLeft = 0;
    // LTE scene (class LteScene): the cell's carrier NCO phase.
    uint64_t ltePhase = 0;
    // GSM scene state (class GsmScene): carrier phase (cycles), GMSK smoother,
    // the current symbol and its index, the data bits' generator.
    double gsmPhase = 0.0;
    double gsmPulse = 1.0;
    double gsmSymbol = 1.0;
    long long gsmSymbolAt = -1;
    uint64_t gsmRng = 0x853C49E6748FEA9Bull;
    // Replay: the recording's sample at this activation's sample 0.
    uint64_t replayStart = 0;
};

// What a scene sees of the radio's tuning for one read.
struct Frame {
    double fc = 0.0, rate = 1.0, e = 0.0;
    // The sample clock's error: e, unless the radio has a second crystal (sample_ppm).
    double es = 0.0;
    Clock::time_point retuneAt;
    uint64_t gen = 0;
    bool pace = true;
    // The RX gain relative to kRefGainDb as an amplitude factor: what every signal a
    // scene adds is multiplied by before the converter.
    float gain = 1.0f;
};

} // namespace rxsim
