// rxsim: the device: its args, identification, settings, antennas, gain, frequency,
// sample rate and bandwidth, clocking, sensors and time (see rxsim.hpp).
#include "rxsim.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace rxsim {

RxSim::RxSim(const SoapySDR::Kwargs &args) {
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

RxSim::~RxSim() { logEvent("unmake", nullptr, serial_); }

std::string RxSim::getDriverKey() const { return "rxsim"; }

std::string RxSim::getHardwareKey() const { return "rxsim"; }

SoapySDR::Kwargs RxSim::getHardwareInfo() const {
    std::lock_guard<std::mutex> g(mu_);
    SoapySDR::Kwargs k;
    k["clock source"] = clock_;
    k["serial"] = serial_;
    k["model"] = "rxsim simulated radio";
    k["module version"] = "1.0";
    return k;
}

size_t RxSim::getNumChannels(const int) const { return 1; }

bool RxSim::getFullDuplex(const int, const size_t) const { return true; }

// so a test sees in the radio's own log what a client wrote ----
SoapySDR::ArgInfoList RxSim::getSettingInfo() const {
    SoapySDR::ArgInfo bias;
    bias.key = "biastee";
    bias.name = "Bias-T";
    bias.description = "DC on the antenna port (simulated: logged only)";
    bias.type = SoapySDR::ArgInfo::BOOL;
    bias.value = "false";
    return {bias};
}

void RxSim::writeSetting(const std::string &key, const std::string &value) {
    {
        std::lock_guard<std::mutex> g(mu_);
        settings_[key] = value;
    }
    logEvent("writeSetting " + key + "=" + value, nullptr, serial_);
}

// The value written, else a declared setting's default (getSettingInfo), as a driver
// reads back its current value; a key neither written nor declared reads "".
std::string RxSim::readSetting(const std::string &key) const {
    {
        std::lock_guard<std::mutex> g(mu_);
        auto it = settings_.find(key);
        if (it != settings_.end()) return it->second;
    }
    for (const auto &info : getSettingInfo())
        if (info.key == key) return info.value;
    return "";
}

bool RxSim::hasGainMode(const int, const size_t) const { return true; }

void RxSim::setGainMode(const int direction, const size_t, const bool automatic) {
    {
        std::lock_guard<std::mutex> g(mu_);
        (direction == SOAPY_SDR_TX ? txAgc_ : rxAgc_) = automatic;
    }
    logEvent(std::string("setGainMode ") + (automatic ? "on" : "off"),
             direction == SOAPY_SDR_TX ? "TX" : "RX", serial_);
}

bool RxSim::getGainMode(const int direction, const size_t) const {
    std::lock_guard<std::mutex> g(mu_);
    return direction == SOAPY_SDR_TX ? txAgc_ : rxAgc_;
}

std::vector<std::string> RxSim::listAntennas(const int direction, const size_t) const {
    if (direction == SOAPY_SDR_TX) return {"TX"};
    return {"RX", "CAL"};
}

void RxSim::setAntenna(const int direction, const size_t, const std::string &name) {
    auto l = listAntennas(direction, 0);
    if (std::find(l.begin(), l.end(), name) == l.end())
        throw std::runtime_error("rxsim: unknown antenna " + name);
    std::lock_guard<std::mutex> g(mu_);
    (direction == SOAPY_SDR_TX ? txAntenna_ : rxAntenna_) = name;
}

std::string RxSim::getAntenna(const int direction, const size_t) const {
    std::lock_guard<std::mutex> g(mu_);
    return direction == SOAPY_SDR_TX ? txAntenna_ : rxAntenna_;
}

std::vector<std::string> RxSim::listGains(const int, const size_t) const { return {"LNA", "VGA"}; }

void RxSim::setGain(const int direction, const size_t, const double value) {
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

void RxSim::setGain(const int direction, const size_t, const std::string &name, const double value) {
    int i = gainIndex(name);
    double max = i == 0 ? kLnaMax : kMaxGain - kLnaMax;
    if (!(value >= 0.0 && value <= max))
        throw std::runtime_error("rxsim: gain " + name + "=" + std::to_string(value) + " out of range");
    std::lock_guard<std::mutex> g(mu_);
    // Truncated to the advertised step (LNA 8 dB, VGA 1 dB), as libhackrf does.
    const double step = i == 0 ? kLnaStep : 1.0;
    gains(direction)[i] = std::floor(value / step) * step;
}

double RxSim::getGain(const int direction, const size_t) const {
    std::lock_guard<std::mutex> g(mu_);
    const double *v = direction == SOAPY_SDR_TX ? txGain_ : rxGain_;
    return v[0] + v[1];
}

double RxSim::getGain(const int direction, const size_t, const std::string &name) const {
    int i = gainIndex(name);
    std::lock_guard<std::mutex> g(mu_);
    return (direction == SOAPY_SDR_TX ? txGain_ : rxGain_)[i];
}

SoapySDR::Range RxSim::getGainRange(const int, const size_t) const {
    return SoapySDR::Range(0.0, kMaxGain, 1.0);
}

SoapySDR::Range RxSim::getGainRange(const int, const size_t, const std::string &name) const {
    return gainIndex(name) == 0 ? SoapySDR::Range(0.0, kLnaMax, kLnaStep)
                                : SoapySDR::Range(0.0, kMaxGain - kLnaMax, 1.0);
}

void RxSim::setFrequency(const int direction, const size_t, const double frequency,
                  const SoapySDR::Kwargs &) {
    if (!(frequency >= kMinFreq && frequency <= kMaxFreq))
        throw std::runtime_error("rxsim: frequency " + std::to_string(frequency) +
                                 " Hz outside 1 MHz..6 GHz");
    // A replay is one place in the spectrum: its samples cannot be moved, so tuning
    // elsewhere would label them with a centre they were not recorded at (a 433.92 MHz
    // recording's carrier reported at 100.1 MHz). Refused naming both.
    if (direction == SOAPY_SDR_RX && replay_.active() && std::fabs(frequency - replay_.freq()) > 1.0) {
        char b[200];
        std::snprintf(b, sizeof b,
                      "rxsim: frequency %.0f Hz: the replayed recording was made at %.0f Hz, its "
                      "only centre (a replay cannot move its samples)",
                      frequency, replay_.freq());
        throw std::runtime_error(b);
    }
    std::lock_guard<std::mutex> g(mu_);
    (direction == SOAPY_SDR_TX ? txFreq_ : rxFreq_) = frequency;
    if (direction == SOAPY_SDR_RX) {
        retuneAt_ = Clock::now();
        retuneGen_++;
    }
}

void RxSim::setFrequency(const int direction, const size_t channel, const std::string &name,
                  const double frequency, const SoapySDR::Kwargs &args) {
    if (name != "RF") throw std::runtime_error("rxsim: unknown frequency component " + name);
    setFrequency(direction, channel, frequency, args);
}

double RxSim::getFrequency(const int direction, const size_t) const {
    std::lock_guard<std::mutex> g(mu_);
    return direction == SOAPY_SDR_TX ? txFreq_ : rxFreq_;
}

double RxSim::getFrequency(const int direction, const size_t channel, const std::string &) const {
    return getFrequency(direction, channel);
}

std::vector<std::string> RxSim::listFrequencies(const int, const size_t) const { return {"RF"}; }

SoapySDR::RangeList RxSim::getFrequencyRange(const int, const size_t) const {
    return {SoapySDR::Range(kMinFreq, kMaxFreq)};
}

SoapySDR::RangeList RxSim::getFrequencyRange(const int, const size_t, const std::string &) const {
    return {SoapySDR::Range(kMinFreq, kMaxFreq)};
}

void RxSim::setSampleRate(const int direction, const size_t, const double rate) {
    if (direction == SOAPY_SDR_RX && replay_.active() && std::fabs(rate - replay_.rate()) > 1e-6 * replay_.rate())
        throw std::runtime_error("rxsim: sample rate " + std::to_string(rate) + " S/s: the replayed recording is at " +
                                 std::to_string(replay_.rate()) + " S/s, its only rate");
    if (!(rate >= kMinRate && rate <= kMaxRate))
        throw std::runtime_error("rxsim: sample rate " + std::to_string(rate) +
                                 " S/s outside 0.1..250 MS/s");
    std::lock_guard<std::mutex> g(mu_);
    (direction == SOAPY_SDR_TX ? txRate_ : rxRate_) = rate;
}

double RxSim::getSampleRate(const int direction, const size_t) const {
    std::lock_guard<std::mutex> g(mu_);
    return direction == SOAPY_SDR_TX ? txRate_ : rxRate_;
}

std::vector<double> RxSim::listSampleRates(const int direction, const size_t) const {
    if (direction == SOAPY_SDR_RX && replay_.active()) return {replay_.rate()};
    return {0.25e6, 1e6, 2e6, 2.4e6, 8e6, 10e6, 20e6, 30.72e6, 61.44e6, 122.88e6, 200e6, 250e6};
}

SoapySDR::RangeList RxSim::getSampleRateRange(const int direction, const size_t) const {
    if (direction == SOAPY_SDR_RX && replay_.active())
        return {SoapySDR::Range(replay_.rate(), replay_.rate())};
    return {SoapySDR::Range(kMinRate, kMaxRate)};
}

void RxSim::setBandwidth(const int direction, const size_t, const double bw) {
    if (!(bw >= kMinBw && bw <= kMaxRate))
        throw std::runtime_error("rxsim: bandwidth " + std::to_string(bw) + " Hz out of range");
    std::lock_guard<std::mutex> g(mu_);
    (direction == SOAPY_SDR_TX ? txBw_ : rxBw_) = bw;
}

double RxSim::getBandwidth(const int direction, const size_t) const {
    std::lock_guard<std::mutex> g(mu_);
    double bw = direction == SOAPY_SDR_TX ? txBw_ : rxBw_;
    double rate = direction == SOAPY_SDR_TX ? txRate_ : rxRate_;
    return bw > 0.0 ? bw : 0.75 * rate;
}

SoapySDR::RangeList RxSim::getBandwidthRange(const int, const size_t) const {
    return {SoapySDR::Range(kMinBw, kMaxRate)};
}

std::vector<std::string> RxSim::listClockSources() const { return {"internal", "external"}; }

void RxSim::setClockSource(const std::string &source) {
    if (source != "internal" && source != "external")
        throw std::runtime_error("rxsim: unknown clock source " + source);
    std::lock_guard<std::mutex> g(mu_);
    clock_ = source;
}

std::string RxSim::getClockSource() const {
    std::lock_guard<std::mutex> g(mu_);
    return clock_;
}

std::vector<std::string> RxSim::listSensors() const { return {"ref_locked"}; }

SoapySDR::ArgInfo RxSim::getSensorInfo(const std::string &key) const {
    SoapySDR::ArgInfo info;
    if (key != "ref_locked") throw std::runtime_error("rxsim: unknown sensor " + key);
    info.key = key;
    info.name = "Reference locked";
    info.type = SoapySDR::ArgInfo::BOOL;
    info.description = "true when the external reference is selected and present";
    info.value = "false";
    return info;
}

bool RxSim::hasHardwareTime(const std::string &what) const { return what.empty(); }

long long RxSim::getHardwareTime(const std::string &what) const {
    if (!what.empty()) throw std::runtime_error("rxsim: unknown time source " + what);
    std::lock_guard<std::mutex> g(mu_);
    return hwNowNs();
}

void RxSim::setHardwareTime(const long long timeNs, const std::string &what) {
    if (!what.empty()) throw std::runtime_error("rxsim: unknown time source " + what);
    std::lock_guard<std::mutex> g(mu_);
    timeOffsetNs_ = timeNs - sinceEpochNs();
}

std::string RxSim::readSensor(const std::string &key) const {
    if (key != "ref_locked") throw std::runtime_error("rxsim: unknown sensor " + key);
    std::lock_guard<std::mutex> g(mu_);
    return (clock_ == "external" && extRef_) ? "true" : "false";
}

int RxSim::gainIndex(const std::string &name) {
    if (name == "LNA") return 0;
    if (name == "VGA") return 1;
    throw std::runtime_error("rxsim: unknown gain element " + name);
}

} // namespace rxsim
