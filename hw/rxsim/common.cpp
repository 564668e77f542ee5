// rxsim: the shared pieces declared in common.hpp: device-arg readers, the sample
// tables and each device's noise.
#include "common.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace rxsim {

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

namespace {

// In place, radix-2 (n a power of two): sum_k a[k] e^(+-2 pi i j k / n) (inverse: +).
void fft(std::vector<std::complex<double>> &a, bool inverse) {
    const size_t n = a.size();
    for (size_t i = 1, j = 0; i < n; i++) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) std::swap(a[i], a[j]);
    }
    // The twiddles once (a stage of length len takes every (n / len)-th).
    std::vector<std::complex<double>> tw(n / 2);
    const double ang = (inverse ? 2.0 : -2.0) * 3.141592653589793 / double(n);
    for (size_t k = 0; k < n / 2; k++) tw[k] = std::polar(1.0, ang * double(k));
    for (size_t len = 2; len <= n; len <<= 1) {
        const size_t stride = n / len;
        for (size_t i = 0; i < n; i += len)
            for (size_t k = 0; k < len / 2; k++) {
                const std::complex<double> u = a[i + k], v = a[i + k + len / 2] * tw[k * stride];
                a[i + k] = u + v;
                a[i + k + len / 2] = u - v;
            }
    }
}

// White noise through the anti-alias filter. `noise` holds independent complex Gaussian
// values of unit power: taken as the (circular) table's spectrum, each bin times antiAlias
// at its frequency, and transformed back, they are Gaussian noise of unit power density
// with the filter's shape, so the table read at any rate has it (the DFT of white
// Gaussian noise is white Gaussian noise: one transform instead of two).
void shapeNoise(std::vector<std::complex<float>> &noise) {
    const size_t n = noise.size();
    std::vector<std::complex<double>> a(noise.begin(), noise.end());
    const double unit = 1.0 / std::sqrt(double(n));
    for (size_t k = 0; k < n; k++) {
        const double x = double(k < n / 2 ? double(k) : double(k) - double(n)) / double(n);
        a[k] *= antiAlias(x) * unit;
    }
    fft(a, true);
    for (size_t i = 0; i < n; i++) noise[i] = {float(a[i].real()), float(a[i].imag())};
}

} // namespace

Tables::Tables() : sine(kToneLen), noise(kNoiseLen) {
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
    shapeNoise(noise);
}

const Tables &tables() {
    static const Tables t;
    return t;
}

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
    shapeNoise(*v);
    made.emplace_back(seed, v);
    return v;
}

namespace {

// splitmix64: spreads a small seed (1, 2, 3 ...) over all 64 bits.
uint64_t mixSeed(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

} // namespace

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

} // namespace rxsim
