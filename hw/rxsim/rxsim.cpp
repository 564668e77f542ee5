// rxsim: a simulated radio as a real SoapySDR module (driver "rxsim").
//
// One RX and one TX channel, CF32/CS16/CS8 (CS8 as a HackRF streams it), 1 MHz..6 GHz, 0.1..250 MS/s, gain 0..60 dB,
// clock sources internal/external with a `ref_locked` sensor. The RX stream carries a
// CW tone plus noise, paced to the sample rate (pace=1) with honest overflow reporting,
// or as fast as possible (pace=0) from precomputed tables.
//
// Device args: serial, seed, ppm, ext_ref, ext_ppm, tone_hz, tone_dbfs, noise_dbfs, pace,
// buffer_samples, tx=deny, tx_fail_after (fault injection: TX writes fail after N
// samples), tx_stall_after_s / tx_stall_s (fault injection: S seconds after activation a
// TX write blocks, ignoring its timeout, for tx_stall_s seconds (default an hour) or
// until the stream is deactivated from another thread, like a hung USB transfer; the
// stall is logged once as `stallWrite TX`), and the sweep scene (class Scene below): emitters=F:P[;F:P...] (CW
// emitters at absolute RF Hz and dBFS, heard wherever the radio is tuned) and
// settle_s=S (the first S seconds of samples after every retune are garbage, as while
// a real PLL relocks); dead_hz=A:B (fault injection: while tuned inside [A, B] Hz
// the RX stream delivers nothing, like a PLL that never locks); rx_stall_after_s=S (fault
// injection: S seconds after this device's first RX activation every RX read times out,
// until the device is closed, like a radio whose USB transfers stopped; logged once as
// `stallRead RX`) and fail_open=1 (fault injection: making the device throws, like a
// radio that is unplugged or held by another program). A reference error e shifts both the LO and the sample
// clock, so a tone at RF f appears at baseband (f - fc(1+e))/(1+e).
//
// Each device has its own noise: seed=N (an unsigned integer) picks it, else it is
// derived from the serial (the default serial keeps the original noise), so two
// devices with different serials are two radios whose noise is independent. Two
// radios "on one reference" are both set to the external clock source with the same
// ext_ref=1,ext_ppm=P.
//
// The LTE scene (class LteScene below): lte_freq=F (an LTE FDD downlink, 1.4 MHz: six
// resource blocks of random QPSK around the PSS and SSS of 3GPP TS 36.211 §6.11, centred
// at absolute RF F), lte_pci=N (0..503, default 0), lte_snr_db=S (its power over the
// rxsim noise in its 1.08 MHz, default 0), lte_seed=K (its data and frame timing,
// default 1), lte_tdd=1 (a TDD cell instead, frame structure type 2 of §4.2 in
// uplink-downlink configuration 1, DSUUDDSUUD, with the shortest downlink part of the
// special subframe (3 symbols): the SSS in the last symbol of subframes 0 and 5, the
// PSS in the third of subframes 1 and 6, nothing from the cell in the uplink subframes
// and the guard period). The cell's clock is exact; the radio's ppm moves its LO and its
// sample clock, so the cell drifts in frequency and in time as a real one would.
// sample_ppm=P puts the radio's sample clock on a crystal of its own, P ppm off (the LO
// keeps ppm, or ext_ppm when locked): the LTE cell's timing then follows P, its
// frequency the LO (a radio with two clocks; default: one crystal drives both).
//
// The GSM scene (class GsmScene below): gsm_freq=F,gsm_snr_db=S puts a GSM BCCH carrier
// at absolute RF F Hz: GMSK (BT 0.3, approximated by a one-pole smoothing of the ±Rb/4
// frequency steps) at 270.833 kbit/s with random bits, except the FCCH bursts — 148
// zero bits, a pure tone at +Rb/4 = +67.708 kHz — in timeslot 0 of frames 0, 10, 20,
// 30 and 40 of every 51-frame multiframe (a frame is 1250 bits = 4.615 ms; frame 0
// starts with the stream's sample 0). S (default 20) is the carrier's power over the
// rxsim noise in a 200 kHz channel. Timing and frequency run on true time, so the
// radio's ppm moves the LO and the sample clock alike, as for the tone.
//
// Replay (class Replay below): replay=FILE streams a recording (SigMF, or raw with
// replay_format and replay_rate) instead of generated samples; see the class.
//
// RXSIM_EVENT_LOG=path appends one line per make/unmake and per stream call:
//   <unix seconds, 6 decimals> pid=<pid> <event> [RX|TX] serial=<serial>
// A TX stream is keyed from `activateStream TX` to `deactivateStream TX` (or
// `closeStream TX`), or to the end of the process that holds it: on POSIX each
// activation starts a witness (a forked child in its own process group holding
// only the read end of a pipe) that logs `exitWhileActive TX` with the time the
// holder died, whatever killed it (SIGKILL included), unless the stream was
// deactivated or closed first.
//
// Portable C++17 plus getpid (POSIX) / _getpid (Windows).
#include <SoapySDR/Device.hpp>
#include <SoapySDR/Formats.hpp>
#include <SoapySDR/Registry.hpp>
#include <SoapySDR/Version.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// SSE2 (every x86-64, and 32-bit x86 built with it) for the two hot loops; other
// targets take the scalar loops, which give the same samples bit for bit.
#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define RXSIM_SSE2 1
#endif

#ifdef _WIN32
#include <process.h>
#define RXSIM_GETPID _getpid
#else
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#define RXSIM_GETPID getpid
#endif

namespace {

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
constexpr size_t kMtu = 16384;
// CS16 reads are generated in CF32 blocks of this many samples (8 KiB: stays in L1)
// and converted block by block.
constexpr size_t kBlock = 1024;
constexpr unsigned kToneBits = 16;
constexpr size_t kToneLen = size_t(1) << kToneBits;
constexpr size_t kNoiseLen = size_t(1) << 18;
const char *kDefaultSerial = "rxsim0";
const char *kConfigKeys[] = {"ppm",        "ext_ref", "ext_ppm", "tone_hz", "tone_dbfs",
                             "noise_dbfs", "pace",    "tx",      "buffer_samples", "tx_fail_after",
                             "tx_stall_after_s", "tx_stall_s", "emitters",   "settle_s", "dead_hz",
                             "seed", "rx_stall_after_s", "fail_open",
                             "lte_freq", "lte_pci", "lte_snr_db", "lte_seed", "lte_tdd", "sample_ppm",
                             "gsm_freq", "gsm_snr_db",
                             "replay", "replay_format", "replay_rate", "replay_freq", "replay_loop"};

double argDouble(const SoapySDR::Kwargs &args, const char *key, double def) {
    auto it = args.find(key);
    if (it == args.end() || it->second.empty()) return def;
    char *end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0' || !std::isfinite(v))
        throw std::runtime_error(std::string("rxsim: device arg ") + key + "=" + it->second +
                                 " is not a number");
    return v;
}

std::string argString(const SoapySDR::Kwargs &args, const char *key, const std::string &def) {
    auto it = args.find(key);
    return it == args.end() ? def : it->second;
}

void logEvent(const std::string &event, const char *dir, const std::string &serial) {
    const char *path = std::getenv("RXSIM_EVENT_LOG");
    if (path == nullptr || *path == '\0') return;
    auto now = std::chrono::system_clock::now().time_since_epoch();
    double secs = std::chrono::duration_cast<std::chrono::microseconds>(now).count() / 1e6;
    char line[256];
    if (dir != nullptr)
        std::snprintf(line, sizeof line, "%.6f pid=%ld %s %s serial=%s\n", secs,
                      long(RXSIM_GETPID()), event.c_str(), dir, serial.c_str());
    else
        std::snprintf(line, sizeof line, "%.6f pid=%ld %s serial=%s\n", secs,
                      long(RXSIM_GETPID()), event.c_str(), serial.c_str());
    // One fwrite of one line to a file opened in append mode: lines from several
    // processes do not interleave.
    if (FILE *f = std::fopen(path, "ab")) {
        std::fwrite(line, 1, std::strlen(line), f);
        std::fclose(f);
    }
}

#ifndef _WIN32
// The death witness of an active TX stream (see the header): fork a child that waits
// for the end of the pipe; a byte means the stream was deactivated (nothing logged),
// end of file without one means the holder died with the stream active: the child
// logs `exitWhileActive TX` then. The child does async-signal-safe calls only.
struct TxWitness {
    int fd = -1;
    pid_t child = -1;
};

size_t putUnsigned(char *out, unsigned long long v, int minDigits) {
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = char('0' + v % 10);
        v /= 10;
    } while (v != 0 || int(n) < minDigits);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

size_t putText(char *out, const char *s, size_t room) {
    size_t n = 0;
    while (s[n] != '\0' && n < room) {
        out[n] = s[n];
        n++;
    }
    return n;
}

TxWitness startTxWitness(const std::string &serial) {
    TxWitness w;
    const char *path = std::getenv("RXSIM_EVENT_LOG");
    if (path == nullptr || *path == '\0') return w;
    int fds[2];
    if (pipe(fds) != 0) return w;
    // Everything the child writes is prepared before the fork.
    std::string pathCopy(path);
    char head[64];
    std::snprintf(head, sizeof head, " pid=%ld exitWhileActive TX serial=", long(RXSIM_GETPID()));
    std::string tail = std::string(head) + serial + "\n";
    long maxFd = sysconf(_SC_OPEN_MAX);
    if (maxFd < 0 || maxFd > 65536) maxFd = 65536;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return w;
    }
    if (pid == 0) {
        // Out of the terminal's process group: a Ctrl-C for the holder is not ours.
        setpgid(0, 0);
        signal(SIGINT, SIG_IGN);
        signal(SIGQUIT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        signal(SIGTSTP, SIG_IGN);
        for (long fd = 0; fd < maxFd; fd++)
            if (fd != fds[0]) close(int(fd));
        char b;
        ssize_t r;
        do {
            r = read(fds[0], &b, 1);
        } while (r < 0 && errno == EINTR);
        if (r == 1) _exit(0);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        char line[512];
        size_t n = putUnsigned(line, (unsigned long long)ts.tv_sec, 1);
        line[n++] = '.';
        n += putUnsigned(line + n, (unsigned long long)(ts.tv_nsec / 1000), 6);
        n += putText(line + n, tail.c_str(), sizeof line - n);
        int f = open(pathCopy.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (f >= 0) {
            ssize_t ignored = write(f, line, n);
            (void)ignored;
            close(f);
        }
        _exit(0);
    }
    close(fds[0]);
    // Not inherited by anything the holder starts later.
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    w.fd = fds[1];
    w.child = pid;
    return w;
}

// The stream was deactivated or closed: the witness ends without a word.
void stopTxWitness(TxWitness &w) {
    if (w.fd < 0) return;
    char d = 'd';
    ssize_t ignored = write(w.fd, &d, 1);
    (void)ignored;
    close(w.fd);
    w.fd = -1;
    if (w.child > 0) waitpid(w.child, nullptr, 0);
    w.child = -1;
}
#else
struct TxWitness {};
TxWitness startTxWitness(const std::string &) { return {}; }
void stopTxWitness(TxWitness &) {}
#endif

// Shared tables: a unit-circle NCO table and complex Gaussian noise of unit power.
struct Tables {
    std::vector<std::complex<float>> sine;
    std::vector<std::complex<float>> noise;
    Tables() : sine(kToneLen), noise(kNoiseLen) {
        const double twoPi = 6.283185307179586;
        for (size_t i = 0; i < kToneLen; i++) {
            double a = twoPi * double(i) / double(kToneLen);
            sine[i] = {float(std::cos(a)), float(std::sin(a))};
        }
        uint64_t s = 0x9E3779B97F4A7C15ull;
        auto next = [&s]() {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            return (double((s >> 11) & ((1ull << 53) - 1)) + 0.5) / double(1ull << 53);
        };
        for (size_t i = 0; i < kNoiseLen; i++) {
            // Box-Muller: each component variance 1/2, total power 1.
            double r = std::sqrt(-std::log(next()));
            double a = twoPi * next();
            noise[i] = {float(r * std::cos(a)), float(r * std::sin(a))};
        }
    }
};

const Tables &tables() {
    static const Tables t;
    return t;
}

// The seed of the shared table above.
constexpr uint64_t kLegacySeed = 0x9E3779B97F4A7C15ull;

// A noise table of unit power for one seed (the legacy seed: the shared table), made
// once per seed and kept for the life of the process.
std::shared_ptr<const std::vector<std::complex<float>>> noiseTable(uint64_t seed) {
    static std::mutex mu;
    static std::vector<std::pair<uint64_t, std::shared_ptr<const std::vector<std::complex<float>>>>> made;
    if (seed == kLegacySeed)
        return std::shared_ptr<const std::vector<std::complex<float>>>(&tables().noise,
                                                                        [](const void *) {});
    std::lock_guard<std::mutex> g(mu);
    for (auto &m : made)
        if (m.first == seed) return m.second;
    auto v = std::make_shared<std::vector<std::complex<float>>>(kNoiseLen);
    uint64_t s = seed ? seed : 1;
    auto next = [&s]() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return (double((s >> 11) & ((1ull << 53) - 1)) + 0.5) / double(1ull << 53);
    };
    const double twoPi = 6.283185307179586;
    for (size_t i = 0; i < kNoiseLen; i++) {
        double r = std::sqrt(-std::log(next()));
        double a = twoPi * next();
        (*v)[i] = {float(r * std::cos(a)), float(r * std::sin(a))};
    }
    made.emplace_back(seed, v);
    return v;
}

// splitmix64: spreads a small seed (1, 2, 3 ...) over all 64 bits.
uint64_t mixSeed(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// The device's noise seed: seed=N, else from the serial (FNV-1a); the default
// serial without a seed keeps the legacy table.
uint64_t deviceSeed(const SoapySDR::Kwargs &args, const std::string &serial) {
    auto it = args.find("seed");
    if (it != args.end() && !it->second.empty()) {
        char *end = nullptr;
        errno = 0;
        unsigned long long v = std::strtoull(it->second.c_str(), &end, 10);
        if (end == it->second.c_str() || *end != '\0' || errno != 0 || it->second[0] == '-')
            throw std::runtime_error("rxsim: device arg seed=" + it->second +
                                     " is not an unsigned integer");
        return mixSeed(uint64_t(v));
    }
    if (serial == kDefaultSerial) return kLegacySeed;
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : serial) h = (h ^ c) * 0x100000001b3ull;
    return mixSeed(h);
}

// A table NCO's phase is a fraction of a cycle in units of 2^-64: the accumulator
// wraps exactly (no rounding drift, no compare and branch in the hot loop, so the
// compiler can pipeline it), and the table index is its top kToneBits bits.
uint64_t cyclesToPhase(double cycles) {
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
    bool stalled = false;  // the tx_stall_after_s stall happened in this activation
    long long timeBaseNs = 0; // the device's hardware time at activation (sample 0)
    uint64_t phase = 0;    // tone NCO phase (cyclesToPhase)
    size_t noiseIdx = 0;
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    std::vector<std::complex<float>> scratch;
    TxWitness witness; // TX only: logs the holder's death while active (POSIX)
    // Sweep scene state (class Scene): emitter phases, the retune seen last, and
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


// ---- the sweep scene: CW emitters and PLL settle garbage ----
//
// Self-contained: the device parses it from its args, tells it about every RX
// retune, and lets it add its emitters to (or overwrite with garbage) each block
// the generator made, before any format conversion.
class Scene {
  public:
    struct Frame {
        double fc = 0.0, rate = 1.0, e = 0.0;
        // The sample clock's error: e, unless the radio has a second crystal (sample_ppm).
        double es = 0.0;
        Clock::time_point retuneAt;
        uint64_t gen = 0;
        bool pace = true;
    };

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
            const float a = float(emitters_[j].amp);
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
            out[k] = 0.5f * sine[size_t(ph * double(kToneLen)) & (kToneLen - 1)] +
                     0.1f * noise[(first + k) & (kNoiseLen - 1)];
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

// ---- the LTE scene: one FDD downlink's synchronisation signals in a QPSK grid ----
//
// Built once from the device args: two radio frames (20 ms, then repeating) of a
// 1.4 MHz downlink, normal cyclic prefix, tabulated at 30.72 MS/s (the 2048-point
// grid LTE's timing is defined on) with unit mean power. Each RX block reads the
// table at the cell's true time t = sample / (rate·(1+e)) by linear interpolation
// (-56 dB at the band edge) and turns it to the baseband offset (F - fc(1+e))/(1+e).
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
    void apply(SimStream *s, std::complex<float> *out, size_t n, uint64_t first, const Scene::Frame &f) const {
        if (!active() || n == 0) return;
        // Hz at RF over the true sample rate: the LO sets the first, the sample clock the
        // second (one crystal: both e).
        const double fb = (freq_ - f.fc * (1.0 + f.e)) / (1.0 + f.es);
        if (!(std::fabs(fb) < 0.5 * f.rate + kHalfWidthHz)) return; // not in the band at all
        // Power over the noise in the cell's 1.08 MHz (all of the band if narrower).
        const double inBand = std::min(1.0, 2.0 * kHalfWidthHz / f.rate);
        const float amp = float(std::sqrt(noisePower_ * inBand * std::pow(10.0, snrDb_ / 10.0)));
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

// ---- the GSM scene: a BCCH carrier with FCCH bursts (see the header comment) ----
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
    void apply(SimStream *s, std::complex<float> *out, size_t n, uint64_t first, const Scene::Frame &f,
               float noiseAmp) const {
        if (!active_ || n == 0) return;
        const double e = f.e;
        const double dt = 1.0 / (f.rate * (1.0 + e)); // true seconds per sample
        const double fb = freq_ - f.fc * (1.0 + e);   // the carrier at baseband, true Hz
        if (std::fabs(fb / (1.0 + e)) > 0.5 * f.rate + 200e3) return;
        const double noiseP = double(noiseAmp) * double(noiseAmp);
        const double amp = std::sqrt(noiseP * 200e3 / f.rate * std::pow(10.0, snrDb_ / 10.0));
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

// ---- replay: a recording streamed as the radio's samples ----
//
// replay=FILE (a SigMF .sigmf-meta or .sigmf-data, the other file beside it; or a raw
// file with replay_format=cf32|cf32_le|ci16|ci16_le|cs16|ci8|cs8|cu8 and
// replay_rate=R, optionally replay_freq=F) makes the RX stream carry the file's
// samples, paced at its rate like any rxsim stream, instead of the generated tone,
// noise and scenes. replay_loop=1 (the default) starts over at the end; replay_loop=0
// plays it once, then every read times out (logged once as `replayEnd RX`), like a
// radio that stopped delivering. The radio offers only the file's rate and tunes
// to its centre at start (a client may tune elsewhere; the samples do not move).
// At most kReplayMax samples are loaded.
constexpr size_t kReplayMax = size_t(1) << 26;

class Replay {
  public:
    void parse(const SoapySDR::Kwargs &args) {
        auto it = args.find("replay");
        if (it == args.end() || it->second.empty()) return;
        path_ = it->second;
        loop_ = argDouble(args, "replay_loop", 1.0) != 0.0;
        std::string data = path_, format;
        const std::string meta_ext = ".sigmf-meta", data_ext = ".sigmf-data";
        auto ends = [](const std::string &a, const std::string &b) {
            return a.size() >= b.size() && a.compare(a.size() - b.size(), b.size(), b) == 0;
        };
        if (ends(path_, meta_ext) || ends(path_, data_ext)) {
            std::string stem = path_.substr(0, path_.size() - meta_ext.size());
            data = stem + data_ext;
            std::string meta = readAll(stem + meta_ext);
            format = jsonString(meta, "core:datatype");
            rate_ = jsonNumber(meta, "core:sample_rate", 0.0);
            freq_ = jsonNumber(meta, "core:frequency", 100e6);
            if (format.empty() || !(rate_ > 0.0))
                throw std::runtime_error("rxsim: replay " + stem + meta_ext +
                                         " has no core:datatype or core:sample_rate");
        } else {
            format = argString(args, "replay_format", "");
            rate_ = argDouble(args, "replay_rate", 0.0);
            freq_ = argDouble(args, "replay_freq", 100e6);
            if (format.empty() || !(rate_ > 0.0))
                throw std::runtime_error("rxsim: replay of the raw file " + path_ +
                                         " needs replay_format=cf32|ci16|ci8|cu8 and replay_rate=R");
        }
        if (!(rate_ >= kMinRate && rate_ <= kMaxRate))
            throw std::runtime_error("rxsim: replay rate " + std::to_string(rate_) +
                                     " S/s outside 0.1..250 MS/s");
        load(data, format);
    }
    bool active() const { return !samples_.empty(); }
    // Whether a single play has ended before sample pos.
    bool ended(uint64_t pos) const { return active() && !loop_ && pos >= samples_.size(); }
    // At most n, and no more than a single play has left from pos.
    size_t clip(size_t n, uint64_t pos) const {
        if (loop_) return n;
        return pos >= samples_.size() ? 0 : size_t(std::min<uint64_t>(n, samples_.size() - pos));
    }
    double rate() const { return rate_; }
    double freq() const { return freq_; }
    // Samples [pos, pos + n) of the endless (looped) or single play into out; false
    // when a single play has ended before pos.
    bool fill(std::complex<float> *out, size_t n, uint64_t pos) const {
        const size_t len = samples_.size();
        if (!loop_ && pos >= len) return false;
        size_t done = 0;
        while (done < n) {
            uint64_t at = pos + done;
            if (!loop_ && at >= len) {
                std::fill(out + done, out + n, std::complex<float>(0.0f, 0.0f));
                break;
            }
            size_t i = size_t(at % len);
            size_t k = std::min(n - done, len - i);
            std::copy(samples_.begin() + i, samples_.begin() + i + k, out + done);
            done += k;
        }
        return true;
    }

  private:
    static std::string readAll(const std::string &path) {
        FILE *f = std::fopen(path.c_str(), "rb");
        if (f == nullptr) throw std::runtime_error("rxsim: replay: cannot open " + path);
        std::string out;
        char buf[65536];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
            out.append(buf, n);
            if (out.size() > (size_t(1) << 24)) break; // a metadata file, not data
        }
        std::fclose(f);
        return out;
    }
    // The text after `"key"` and its colon, or npos.
    static size_t valueAt(const std::string &json, const std::string &key) {
        size_t p = json.find("\"" + key + "\"");
        if (p == std::string::npos) return p;
        p = json.find(':', p + key.size() + 2);
        if (p == std::string::npos) return p;
        p++;
        while (p < json.size() && std::isspace((unsigned char)json[p])) p++;
        return p;
    }
    static std::string jsonString(const std::string &json, const std::string &key) {
        size_t p = valueAt(json, key);
        if (p == std::string::npos || p >= json.size() || json[p] != '"') return "";
        size_t e = json.find('"', p + 1);
        return e == std::string::npos ? "" : json.substr(p + 1, e - p - 1);
    }
    static double jsonNumber(const std::string &json, const std::string &key, double def) {
        size_t p = valueAt(json, key);
        if (p == std::string::npos) return def;
        char *end = nullptr;
        double v = std::strtod(json.c_str() + p, &end);
        return (end == json.c_str() + p || !std::isfinite(v)) ? def : v;
    }
    void load(const std::string &path, const std::string &format) {
        size_t width;
        int kind; // 0 float32, 1 int16, 2 int8, 3 uint8
        if (format == "cf32" || format == "cf32_le") width = 8, kind = 0;
        else if (format == "ci16" || format == "ci16_le" || format == "cs16") width = 4, kind = 1;
        else if (format == "ci8" || format == "cs8") width = 2, kind = 2;
        else if (format == "cu8") width = 2, kind = 3;
        else
            throw std::runtime_error("rxsim: replay format " + format +
                                     " not supported (cf32_le, ci16_le, ci8, cu8)");
        FILE *f = std::fopen(path.c_str(), "rb");
        if (f == nullptr) throw std::runtime_error("rxsim: replay: cannot open " + path);
        std::vector<unsigned char> raw(width * 65536);
        size_t n;
        while ((n = std::fread(raw.data(), width, 65536, f)) > 0) {
            if (samples_.size() + n > kReplayMax) {
                std::fclose(f);
                throw std::runtime_error("rxsim: replay " + path + " holds more than " +
                                         std::to_string(kReplayMax) + " samples; trim it");
            }
            for (size_t i = 0; i < n; i++) {
                const unsigned char *b = raw.data() + i * width;
                float re, im;
                if (kind == 0) {
                    std::memcpy(&re, b, 4);
                    std::memcpy(&im, b + 4, 4);
                } else if (kind == 1) {
                    int16_t a, c;
                    std::memcpy(&a, b, 2);
                    std::memcpy(&c, b + 2, 2);
                    re = a / 32767.0f, im = c / 32767.0f;
                } else if (kind == 2) {
                    re = int8_t(b[0]) / 127.0f, im = int8_t(b[1]) / 127.0f;
                } else {
                    re = (b[0] - 127.5f) / 127.5f, im = (b[1] - 127.5f) / 127.5f;
                }
                samples_.emplace_back(re, im);
            }
        }
        std::fclose(f);
        if (samples_.empty()) throw std::runtime_error("rxsim: replay " + path + " holds no samples");
    }

    std::string path_;
    bool loop_ = true;
    double rate_ = 0.0, freq_ = 100e6;
    std::vector<std::complex<float>> samples_;
};

class RxSim : public SoapySDR::Device {
  public:
    explicit RxSim(const SoapySDR::Kwargs &args) {
        serial_ = argString(args, "serial", kDefaultSerial);
        ppm_ = argDouble(args, "ppm", 0.0);
        extRef_ = argDouble(args, "ext_ref", 0.0) != 0.0;
        extPpm_ = argDouble(args, "ext_ppm", 0.0);
        hasSamplePpm_ = args.count("sample_ppm") != 0;
        samplePpm_ = argDouble(args, "sample_ppm", 0.0);
        if (!(std::fabs(samplePpm_) <= 1000.0))
            throw std::runtime_error("rxsim: device arg sample_ppm=" + argString(args, "sample_ppm", "") +
                                     " must be in -1000..1000");
        hasTone_ = args.count("tone_hz") != 0;
        toneHz_ = argDouble(args, "tone_hz", 0.0);
        toneDbfs_ = argDouble(args, "tone_dbfs", -20.0);
        noiseDbfs_ = argDouble(args, "noise_dbfs", -60.0);
        toneAmp_ = float(std::pow(10.0, toneDbfs_ / 20.0));
        noiseAmp_ = float(std::pow(10.0, noiseDbfs_ / 20.0));
        pace_ = argDouble(args, "pace", 1.0) != 0.0;
        bufferSamples_ = argDouble(args, "buffer_samples", 0.0);
        txDeny_ = argString(args, "tx", "allow") == "deny";
        txFailAfter_ = argDouble(args, "tx_fail_after", -1.0);
        txStallAfter_ = argDouble(args, "tx_stall_after_s", -1.0);
        txStallFor_ = argDouble(args, "tx_stall_s", 3600.0);
        rxStallAfter_ = argDouble(args, "rx_stall_after_s", -1.0);
        if (argDouble(args, "fail_open", 0.0) != 0.0)
            throw std::runtime_error("rxsim: cannot open the device (simulated fault fail_open=1, serial=" +
                                     serial_ + ")");
        scene_.parse(args);
        lte_.parse(args);
        gsm_.parse(args);
        replay_.parse(args);
        if (replay_.active()) {
            rxRate_ = replay_.rate();
            rxFreq_ = replay_.freq();
        }
        (void)tables();
        seed_ = deviceSeed(args, serial_);
        noise_ = noiseTable(seed_);
        logEvent("make", nullptr, serial_);
    }
    ~RxSim() override { logEvent("unmake", nullptr, serial_); }

    std::string getDriverKey() const override { return "rxsim"; }
    std::string getHardwareKey() const override { return "rxsim"; }
    SoapySDR::Kwargs getHardwareInfo() const override {
        std::lock_guard<std::mutex> g(mu_);
        SoapySDR::Kwargs k;
        k["clock source"] = clock_;
        k["serial"] = serial_;
        k["model"] = "rxsim simulated radio";
        k["module version"] = "1.0";
        return k;
    }

    size_t getNumChannels(const int) const override { return 1; }
    bool getFullDuplex(const int, const size_t) const override { return true; }
    std::vector<std::string> getStreamFormats(const int, const size_t) const override {
        return {SOAPY_SDR_CF32, SOAPY_SDR_CS16, SOAPY_SDR_CS8};
    }
    std::string getNativeStreamFormat(const int, const size_t, double &fullScale) const override {
        fullScale = 32767.0;
        return SOAPY_SDR_CS16;
    }

    // ---- streams ----
    SoapySDR::Stream *setupStream(const int direction, const std::string &format,
                                  const std::vector<size_t> &channels,
                                  const SoapySDR::Kwargs &streamArgs) override {
        const char *dir = direction == SOAPY_SDR_TX ? "TX" : "RX";
        if (direction == SOAPY_SDR_TX && txDeny_)
            throw std::runtime_error("rxsim: TX denied by device args tx=deny (serial=" + serial_ + ")");
        if (format != SOAPY_SDR_CF32 && format != SOAPY_SDR_CS16 &&
            !(format == SOAPY_SDR_CS8 && direction == SOAPY_SDR_RX))
            throw std::runtime_error("rxsim: unsupported stream format " + format);
        for (size_t c : channels)
            if (c != 0) throw std::runtime_error("rxsim: no channel " + std::to_string(c));
        auto *s = new SimStream();
        s->direction = direction;
        s->cs16 = format == SOAPY_SDR_CS16 || format == SOAPY_SDR_CS8;
        s->cs8 = format == SOAPY_SDR_CS8;
        s->scratch.resize(kBlock);
        if (seed_ != kLegacySeed) s->rng = seed_ | 1;
        logEvent("setupStream", dir, serial_);
        // The stream args a client gave (SoapyRemote's own remote:* ones are not ours).
        for (const auto &kv : streamArgs)
            if (kv.first.rfind("remote:", 0) != 0) logEvent("streamArg " + kv.first + "=" + kv.second, dir, serial_);
        return reinterpret_cast<SoapySDR::Stream *>(s);
    }

    void closeStream(SoapySDR::Stream *stream) override {
        auto *s = reinterpret_cast<SimStream *>(stream);
        stopTxWitness(s->witness);
        logEvent("closeStream", s->direction == SOAPY_SDR_TX ? "TX" : "RX", serial_);
        delete s;
    }

    size_t getStreamMTU(SoapySDR::Stream *) const override { return kMtu; }

    int activateStream(SoapySDR::Stream *stream, const int, const long long, const size_t) override {
        auto *s = reinterpret_cast<SimStream *>(stream);
        double rate;
        long long base;
        {
            std::lock_guard<std::mutex> g(mu_);
            rate = s->direction == SOAPY_SDR_TX ? txRate_ : rxRate_;
            base = hwNowNs();
        }
        {
            std::lock_guard<std::mutex> g(s->mu);
            s->rate = rate;
            s->timeBaseNs = base;
            s->t0 = Clock::now();
            s->produced = 0;
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

    int deactivateStream(SoapySDR::Stream *stream, const int, const long long) override {
        auto *s = reinterpret_cast<SimStream *>(stream);
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

    int readStream(SoapySDR::Stream *stream, void *const *buffs, const size_t numElems, int &flags,
                   long long &timeNs, const long timeoutUs) override {
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
            s->cv.wait_until(lk, deadline);
            return SOAPY_SDR_TIMEOUT;
        }
        if (replay_.ended(s->replayStart + s->produced)) {
            // A single play has ended: nothing arrives any more (no overflow either).
            if (!replayEnded_.exchange(true)) logEvent("replayEnd", "RX", serial_);
            s->cv.wait_until(lk, deadline);
            return SOAPY_SDR_TIMEOUT;
        }
        size_t n = numElems;
        const Tuning tu = tuning();
        const Scene::Frame &frame = tu.frame;
        if (scene_.dead(frame.fc)) {
            std::this_thread::sleep_for(std::chrono::microseconds(std::max(0L, timeoutUs)));
            return SOAPY_SDR_TIMEOUT;
        }
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
                if (avail >= double(std::min(numElems, kMtu))) {
                    n = std::min(numElems, size_t(avail));
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
                double need = (double(std::min(numElems, kMtu)) - avail) / s->rate;
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
            }
            if (!more) {
                // A single play has ended: nothing arrives any more.
                if (!replayEnded_.exchange(true)) logEvent("replayEnd", "RX", serial_);
                s->cv.wait_until(lk, deadline);
                return SOAPY_SDR_TIMEOUT;
            }
            s->produced += n;
            flags |= SOAPY_SDR_HAS_TIME;
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
        }
        s->produced += n;
        flags |= SOAPY_SDR_HAS_TIME;
        return int(std::min<size_t>(n, size_t(1) << 30));
    }

    int writeStream(SoapySDR::Stream *stream, const void *const *, const size_t numElems, int &flags,
                    const long long, const long timeoutUs) override {
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

    // ---- settings: any key is accepted, kept and logged (`writeSetting KEY=VALUE`),
    // so a test sees in the radio's own log what a client wrote ----
    SoapySDR::ArgInfoList getSettingInfo() const override {
        SoapySDR::ArgInfo bias;
        bias.key = "biastee";
        bias.name = "Bias-T";
        bias.description = "DC on the antenna port (simulated: logged only)";
        bias.type = SoapySDR::ArgInfo::BOOL;
        bias.value = "false";
        return {bias};
    }
    void writeSetting(const std::string &key, const std::string &value) override {
        {
            std::lock_guard<std::mutex> g(mu_);
            settings_[key] = value;
        }
        logEvent("writeSetting " + key + "=" + value, nullptr, serial_);
    }
    std::string readSetting(const std::string &key) const override {
        std::lock_guard<std::mutex> g(mu_);
        auto it = settings_.find(key);
        return it == settings_.end() ? "" : it->second;
    }

    // ---- AGC: accepted and logged (`setGainMode RX on|off`); the levels do not change ----
    bool hasGainMode(const int, const size_t) const override { return true; }
    void setGainMode(const int direction, const size_t, const bool automatic) override {
        {
            std::lock_guard<std::mutex> g(mu_);
            (direction == SOAPY_SDR_TX ? txAgc_ : rxAgc_) = automatic;
        }
        logEvent(std::string("setGainMode ") + (automatic ? "on" : "off"),
                 direction == SOAPY_SDR_TX ? "TX" : "RX", serial_);
    }
    bool getGainMode(const int direction, const size_t) const override {
        std::lock_guard<std::mutex> g(mu_);
        return direction == SOAPY_SDR_TX ? txAgc_ : rxAgc_;
    }

    // ---- antennas ----
    std::vector<std::string> listAntennas(const int direction, const size_t) const override {
        if (direction == SOAPY_SDR_TX) return {"TX"};
        return {"RX", "CAL"};
    }
    void setAntenna(const int direction, const size_t, const std::string &name) override {
        auto l = listAntennas(direction, 0);
        if (std::find(l.begin(), l.end(), name) == l.end())
            throw std::runtime_error("rxsim: unknown antenna " + name);
        std::lock_guard<std::mutex> g(mu_);
        (direction == SOAPY_SDR_TX ? txAntenna_ : rxAntenna_) = name;
    }
    std::string getAntenna(const int direction, const size_t) const override {
        std::lock_guard<std::mutex> g(mu_);
        return direction == SOAPY_SDR_TX ? txAntenna_ : rxAntenna_;
    }

    // ---- gain: LNA 0..40 then VGA 0..20 ----
    std::vector<std::string> listGains(const int, const size_t) const override { return {"LNA", "VGA"}; }
    void setGain(const int direction, const size_t, const double value) override {
        if (!(value >= 0.0 && value <= kMaxGain))
            throw std::runtime_error("rxsim: gain " + std::to_string(value) + " dB outside 0..60");
        std::lock_guard<std::mutex> g(mu_);
        // Set only what the elements can: the total in 1 dB steps, the LNA in its 8 dB
        // steps (truncated, as libhackrf does) and the rest (< 8, or the excess over 40,
        // at most 20) on the VGA, so the readback is what the radio applied.
        const double total = std::floor(value);
        const double lna = std::min(std::floor(total / kLnaStep) * kLnaStep, kLnaMax);
        gains(direction)[0] = lna;
        gains(direction)[1] = total - lna;
    }
    void setGain(const int direction, const size_t, const std::string &name, const double value) override {
        int i = gainIndex(name);
        double max = i == 0 ? kLnaMax : kMaxGain - kLnaMax;
        if (!(value >= 0.0 && value <= max))
            throw std::runtime_error("rxsim: gain " + name + "=" + std::to_string(value) + " out of range");
        std::lock_guard<std::mutex> g(mu_);
        // Truncated to the advertised step (LNA 8 dB, VGA 1 dB), as libhackrf does.
        const double step = i == 0 ? kLnaStep : 1.0;
        gains(direction)[i] = std::floor(value / step) * step;
    }
    double getGain(const int direction, const size_t) const override {
        std::lock_guard<std::mutex> g(mu_);
        const double *v = direction == SOAPY_SDR_TX ? txGain_ : rxGain_;
        return v[0] + v[1];
    }
    double getGain(const int direction, const size_t, const std::string &name) const override {
        int i = gainIndex(name);
        std::lock_guard<std::mutex> g(mu_);
        return (direction == SOAPY_SDR_TX ? txGain_ : rxGain_)[i];
    }
    SoapySDR::Range getGainRange(const int, const size_t) const override {
        return SoapySDR::Range(0.0, kMaxGain, 1.0);
    }
    SoapySDR::Range getGainRange(const int, const size_t, const std::string &name) const override {
        return gainIndex(name) == 0 ? SoapySDR::Range(0.0, kLnaMax, kLnaStep)
                                    : SoapySDR::Range(0.0, kMaxGain - kLnaMax, 1.0);
    }

    // ---- frequency ----
    void setFrequency(const int direction, const size_t, const double frequency,
                      const SoapySDR::Kwargs &) override {
        if (!(frequency >= kMinFreq && frequency <= kMaxFreq))
            throw std::runtime_error("rxsim: frequency " + std::to_string(frequency) +
                                     " Hz outside 1 MHz..6 GHz");
        std::lock_guard<std::mutex> g(mu_);
        (direction == SOAPY_SDR_TX ? txFreq_ : rxFreq_) = frequency;
        if (direction == SOAPY_SDR_RX) {
            retuneAt_ = Clock::now();
            retuneGen_++;
        }
    }
    void setFrequency(const int direction, const size_t channel, const std::string &name,
                      const double frequency, const SoapySDR::Kwargs &args) override {
        if (name != "RF") throw std::runtime_error("rxsim: unknown frequency component " + name);
        setFrequency(direction, channel, frequency, args);
    }
    double getFrequency(const int direction, const size_t) const override {
        std::lock_guard<std::mutex> g(mu_);
        return direction == SOAPY_SDR_TX ? txFreq_ : rxFreq_;
    }
    double getFrequency(const int direction, const size_t channel, const std::string &) const override {
        return getFrequency(direction, channel);
    }
    std::vector<std::string> listFrequencies(const int, const size_t) const override { return {"RF"}; }
    SoapySDR::RangeList getFrequencyRange(const int, const size_t) const override {
        return {SoapySDR::Range(kMinFreq, kMaxFreq)};
    }
    SoapySDR::RangeList getFrequencyRange(const int, const size_t, const std::string &) const override {
        return {SoapySDR::Range(kMinFreq, kMaxFreq)};
    }

    // ---- sample rate and bandwidth ----
    void setSampleRate(const int direction, const size_t, const double rate) override {
        if (direction == SOAPY_SDR_RX && replay_.active() && std::fabs(rate - replay_.rate()) > 1e-6 * replay_.rate())
            throw std::runtime_error("rxsim: sample rate " + std::to_string(rate) + " S/s: the replayed recording is at " +
                                     std::to_string(replay_.rate()) + " S/s, its only rate");
        if (!(rate >= kMinRate && rate <= kMaxRate))
            throw std::runtime_error("rxsim: sample rate " + std::to_string(rate) +
                                     " S/s outside 0.1..250 MS/s");
        std::lock_guard<std::mutex> g(mu_);
        (direction == SOAPY_SDR_TX ? txRate_ : rxRate_) = rate;
    }
    double getSampleRate(const int direction, const size_t) const override {
        std::lock_guard<std::mutex> g(mu_);
        return direction == SOAPY_SDR_TX ? txRate_ : rxRate_;
    }
    std::vector<double> listSampleRates(const int direction, const size_t) const override {
        if (direction == SOAPY_SDR_RX && replay_.active()) return {replay_.rate()};
        return {0.25e6, 1e6, 2e6, 2.4e6, 8e6, 10e6, 20e6, 30.72e6, 61.44e6, 122.88e6, 200e6, 250e6};
    }
    SoapySDR::RangeList getSampleRateRange(const int direction, const size_t) const override {
        if (direction == SOAPY_SDR_RX && replay_.active())
            return {SoapySDR::Range(replay_.rate(), replay_.rate())};
        return {SoapySDR::Range(kMinRate, kMaxRate)};
    }
    void setBandwidth(const int direction, const size_t, const double bw) override {
        if (!(bw >= kMinBw && bw <= kMaxRate))
            throw std::runtime_error("rxsim: bandwidth " + std::to_string(bw) + " Hz out of range");
        std::lock_guard<std::mutex> g(mu_);
        (direction == SOAPY_SDR_TX ? txBw_ : rxBw_) = bw;
    }
    double getBandwidth(const int direction, const size_t) const override {
        std::lock_guard<std::mutex> g(mu_);
        double bw = direction == SOAPY_SDR_TX ? txBw_ : rxBw_;
        double rate = direction == SOAPY_SDR_TX ? txRate_ : rxRate_;
        return bw > 0.0 ? bw : 0.75 * rate;
    }
    SoapySDR::RangeList getBandwidthRange(const int, const size_t) const override {
        return {SoapySDR::Range(kMinBw, kMaxRate)};
    }

    // ---- clocking and sensors ----
    std::vector<std::string> listClockSources() const override { return {"internal", "external"}; }
    void setClockSource(const std::string &source) override {
        if (source != "internal" && source != "external")
            throw std::runtime_error("rxsim: unknown clock source " + source);
        std::lock_guard<std::mutex> g(mu_);
        clock_ = source;
    }
    std::string getClockSource() const override {
        std::lock_guard<std::mutex> g(mu_);
        return clock_;
    }
    std::vector<std::string> listSensors() const override { return {"ref_locked"}; }
    SoapySDR::ArgInfo getSensorInfo(const std::string &key) const override {
        SoapySDR::ArgInfo info;
        if (key != "ref_locked") throw std::runtime_error("rxsim: unknown sensor " + key);
        info.key = key;
        info.name = "Reference locked";
        info.type = SoapySDR::ArgInfo::BOOL;
        info.description = "true when the external reference is selected and present";
        info.value = "false";
        return info;
    }
    // ---- time: a nanosecond counter that streams timestamp their samples with ----
    bool hasHardwareTime(const std::string &what) const override { return what.empty(); }
    long long getHardwareTime(const std::string &what) const override {
        if (!what.empty()) throw std::runtime_error("rxsim: unknown time source " + what);
        std::lock_guard<std::mutex> g(mu_);
        return hwNowNs();
    }
    void setHardwareTime(const long long timeNs, const std::string &what) override {
        if (!what.empty()) throw std::runtime_error("rxsim: unknown time source " + what);
        std::lock_guard<std::mutex> g(mu_);
        timeOffsetNs_ = timeNs - sinceEpochNs();
    }

    std::string readSensor(const std::string &key) const override {
        if (key != "ref_locked") throw std::runtime_error("rxsim: unknown sensor " + key);
        std::lock_guard<std::mutex> g(mu_);
        return (clock_ == "external" && extRef_) ? "true" : "false";
    }

  private:
    static int gainIndex(const std::string &name) {
        if (name == "LNA") return 0;
        if (name == "VGA") return 1;
        throw std::runtime_error("rxsim: unknown gain element " + name);
    }
    double *gains(int direction) { return direction == SOAPY_SDR_TX ? txGain_ : rxGain_; }
    long long sinceEpochNs() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - timeEpoch_).count();
    }
    // Caller holds mu_.
    long long hwNowNs() const { return timeOffsetNs_ + sinceEpochNs(); }

    // Inline rounding (half away from zero), not std::lrint: without -fno-math-errno
    // lrint is a libm call per component, which made the CS16 conversion cost as much
    // as generating the samples and capped SoapySDRServer's stream thread.
    static int16_t toI16(float v) {
        float x = std::max(-1.0f, std::min(1.0f, v)) * 32767.0f;
        return int16_t(x + std::copysign(0.5f, x)); // branch-free: noise signs are random
    }
    // The CS16 conversion of m floats (I, Q interleaved), eight at a time with SSE2:
    // the same clamp (min, then max), scale, half away from zero and truncation as
    // toI16, so the same integers; packs_epi32 saturates, a no-op after the clamp.
    static void toI16Block(const float *in, int16_t *out, size_t m) {
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
    // An integer stream's m values (I, Q interleaved) from the stream's float scratch
    // into `out` from value `at` on: CS16 by toI16Block, or CS8 as a HackRF delivers
    // it (full scale 127, the same clamp and rounding half away from zero as toI16).
    static void toNative(const SimStream *s, void *out, size_t at, size_t m) {
        const float *in = reinterpret_cast<const float *>(s->scratch.data());
        if (!s->cs8) return toI16Block(in, static_cast<int16_t *>(out) + at, m);
        int8_t *o = static_cast<int8_t *>(out) + at;
        for (size_t j = 0; j < m; j++) {
            float x = std::max(-1.0f, std::min(1.0f, in[j])) * 127.0f;
            o[j] = int8_t(x + std::copysign(0.5f, x));
        }
    }
    static uint64_t nextRand(SimStream *s) {
        s->rng ^= s->rng << 13;
        s->rng ^= s->rng >> 7;
        s->rng ^= s->rng << 17;
        return s->rng;
    }

    // What one read needs of the current settings, under one lock: the tone's NCO
    // step, its amplitude (0 when out of band), the noise amplitude, and the scene's
    // view of the tuning. A reference error e shifts the LO and the sample clock.
    struct Tuning {
        const std::complex<float> *noise = nullptr; // the device's noise table
        uint64_t step = 0;
        float amp = 0.0f, namp = 0.0f;
        Scene::Frame frame;
    };
    Tuning tuning() const {
        std::lock_guard<std::mutex> g(mu_);
        Tuning t;
        double ppm = (clock_ == "external" && extRef_) ? extPpm_ : ppm_;
        double e = ppm * 1e-6;
        double fb = (toneHz_ - rxFreq_ * (1.0 + e)) / (1.0 + e);
        bool inBand = hasTone_ && std::fabs(fb) < 0.5 * rxRate_;
        t.step = cyclesToPhase(fb / rxRate_);
        t.amp = inBand ? toneAmp_ : 0.0f;
        t.namp = noiseAmp_;
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
    bool rxStalled() {
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
    static void generate(SimStream *s, std::complex<float> *out, size_t n, const Tuning &tu) {
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

    std::string serial_;
    double ppm_, extPpm_, toneHz_, toneDbfs_, noiseDbfs_, bufferSamples_, txFailAfter_, txStallAfter_, txStallFor_;
    double rxStallAfter_ = -1.0;              // rx_stall_after_s; negative: never
    double samplePpm_ = 0.0;                  // sample_ppm (when hasSamplePpm_)
    bool hasSamplePpm_ = false;
    bool rxStreamed_ = false, rxStallLogged_ = false; // guarded by mu_
    Clock::time_point rxFirstActive_;         // guarded by mu_
    float toneAmp_, noiseAmp_; // from tone_dbfs and noise_dbfs
    bool extRef_, hasTone_, pace_, txDeny_;
    uint64_t seed_ = kLegacySeed;                                        // seed=, or from the serial
    std::shared_ptr<const std::vector<std::complex<float>>> noise_;       // this device's noise

    mutable std::mutex mu_;
    std::string clock_ = "internal";
    std::string rxAntenna_ = "RX", txAntenna_ = "TX";
    double rxFreq_ = 100e6, txFreq_ = 100e6;
    double rxRate_ = 2e6, txRate_ = 2e6;
    double rxBw_ = 0.0, txBw_ = 0.0;
    double rxGain_[2] = {0.0, 0.0};
    double txGain_[2] = {0.0, 0.0};
    const Clock::time_point timeEpoch_ = Clock::now();
    long long timeOffsetNs_ = 0;
    Scene scene_;
    LteScene lte_;
    GsmScene gsm_;
    Replay replay_;
    std::map<std::string, std::string> settings_; // writeSetting, guarded by mu_
    bool rxAgc_ = false, txAgc_ = false;          // guarded by mu_
    std::atomic<uint64_t> replayPos_{0};   // the recording's next sample between activations
    std::atomic<bool> replayEnded_{false}; // `replayEnd RX` logged
    Clock::time_point retuneAt_ = Clock::now();
    uint64_t retuneGen_ = 0;
};

SoapySDR::KwargsList findRxSim(const SoapySDR::Kwargs &args) {
    auto drv = args.find("driver");
    if (drv != args.end() && drv->second != "rxsim") return {};
    SoapySDR::Kwargs k;
    k["driver"] = "rxsim";
    k["serial"] = argString(args, "serial", kDefaultSerial);
    k["label"] = "rxsim simulated radio :: " + k["serial"];
    // Echo the model args so differently configured simulators are distinct devices
    // (SoapySDR caches opened devices by their enumeration result).
    for (const char *key : kConfigKeys) {
        auto it = args.find(key);
        if (it != args.end()) k[key] = it->second;
    }
    return {k};
}

SoapySDR::Device *makeRxSim(const SoapySDR::Kwargs &args) { return new RxSim(args); }

SoapySDR::Registry registerRxSim("rxsim", &findRxSim, &makeRxSim, SOAPY_SDR_ABI_VERSION);

} // namespace
