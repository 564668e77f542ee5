// rxsim: a simulated radio as a real SoapySDR module (driver "rxsim").
//
// One RX and one TX channel, CF32/CS16 and, on RX, CS8 (as a HackRF streams it), 1 MHz..6 GHz, 0.1..250 MS/s,
// gain 0..60 dB (RX: applied to the signals and the noise from a 20 dB reference, common.hpp),
// clock sources internal/external with a `ref_locked` sensor. The RX stream carries a
// CW tone plus noise through an anti-alias filter flat to +-0.4 fs (antiAlias, common.hpp),
// paced to the sample rate (pace=1) with honest overflow reporting,
// or as fast as possible (pace=0) from precomputed tables.
//
// The module is split by concern, as a SoapySDR driver is:
//   registration.cpp  find and make (the driver's entry in SoapySDR's registry)
//   settings.cpp      the device: its args, identification, settings, antennas, gain,
//                     frequency, rate, bandwidth, clocking, sensors and time
//   streaming.cpp     the streams: set-up, activation, reads (generator, scenes,
//                     replay, CS16 conversion) and writes
//   common.hpp/.cpp   limits, device-arg readers, sample tables, stream state
//   event_log.hpp/.cpp  RXSIM_EVENT_LOG and the TX witness
//   scenes/*.hpp      one scene per file: sweep (emitters, settle, dead band), lte, gsm
//   replay.hpp        a recording streamed instead of generated samples
//
// Device args: serial, seed, ppm, ext_ref, ext_ppm, tone_hz, tone_dbfs, noise_dbfs, pace,
// buffer_samples, tx=deny, tx_fail_after (fault injection: TX writes fail after N
// samples), tx_stall_after_s / tx_stall_s (fault injection: S seconds after activation a
// TX write blocks, ignoring its timeout, for tx_stall_s seconds (default an hour) or
// until the stream is deactivated from another thread, like a hung USB transfer; the
// stall is logged once as `stallWrite TX`), rx_stall_after_s=S (fault injection: S
// seconds after this device's first RX activation every RX read times out, until the
// device is closed, like a radio whose USB transfers stopped; logged once as
// `stallRead RX`) and fail_open=1 (fault injection: making the device throws, like a
// radio that is unplugged or held by another program), sample_ppm (scenes/lte.hpp),
// and the args of each scene (scenes/*.hpp) and of replay (replay.hpp). A reference
// error e shifts both the LO and the sample clock, so a tone at RF f appears at
// baseband (f - fc(1+e))/(1+e).
//
// Each device has its own noise: seed=N (an unsigned integer) picks it, else it is
// derived from the serial (the default serial keeps the original noise), so two
// devices with different serials are two radios whose noise is independent. Two
// radios "on one reference" are both set to the external clock source with the same
// ext_ref=1,ext_ppm=P.
//
// Portable C++17 plus getpid (POSIX) / _getpid (Windows).
#pragma once

#include <SoapySDR/Device.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common.hpp"
#include "replay.hpp"
#include "scenes/gsm.hpp"
#include "scenes/lte.hpp"
#include "scenes/sweep.hpp"

namespace rxsim {

class RxSim : public SoapySDR::Device {
  public:
    explicit RxSim(const SoapySDR::Kwargs &args);
    ~RxSim() override;

    // ---- identification (settings.cpp) ----
    std::string getDriverKey() const override;
    std::string getHardwareKey() const override;
    SoapySDR::Kwargs getHardwareInfo() const override;
    size_t getNumChannels(const int) const override;
    bool getFullDuplex(const int, const size_t) const override;

    // ---- streams (streaming.cpp) ----
    std::vector<std::string> getStreamFormats(const int direction, const size_t) const override;
    std::string getNativeStreamFormat(const int, const size_t, double &fullScale) const override;
    SoapySDR::Stream *setupStream(const int direction, const std::string &format,
                                  const std::vector<size_t> &channels,
                                  const SoapySDR::Kwargs &streamArgs) override;
    void closeStream(SoapySDR::Stream *stream) override;
    size_t getStreamMTU(SoapySDR::Stream *) const override;
    int activateStream(SoapySDR::Stream *stream, const int flags, const long long timeNs,
                       const size_t numElems) override;
    int deactivateStream(SoapySDR::Stream *stream, const int flags, const long long timeNs) override;
    int readStream(SoapySDR::Stream *stream, void *const *buffs, const size_t numElems, int &flags,
                   long long &timeNs, const long timeoutUs) override;
    int writeStream(SoapySDR::Stream *stream, const void *const *, const size_t numElems, int &flags,
                    const long long, const long timeoutUs) override;

    // ---- settings (settings.cpp): any key is accepted, kept and logged
    // (`writeSetting KEY=VALUE`), so a test sees in the radio's own log what a client wrote ----
    SoapySDR::ArgInfoList getSettingInfo() const override;
    void writeSetting(const std::string &key, const std::string &value) override;
    std::string readSetting(const std::string &key) const override;

    // ---- AGC: accepted and logged (`setGainMode RX on|off`); it moves no gain (the set gain applies) ----
    bool hasGainMode(const int, const size_t) const override;
    void setGainMode(const int direction, const size_t, const bool automatic) override;
    bool getGainMode(const int direction, const size_t) const override;

    // ---- antennas ----
    std::vector<std::string> listAntennas(const int direction, const size_t) const override;
    void setAntenna(const int direction, const size_t, const std::string &name) override;
    std::string getAntenna(const int direction, const size_t) const override;

    // ---- gain: LNA 0..40 then VGA 0..20; RX starts at kRefGainDb (LNA 16, VGA 4), where the
    // levels the device args give hold; each dB of LNA + VGA away from it moves the signals and
    // the receiver noise at the converter by a dB (common.hpp) ----
    std::vector<std::string> listGains(const int, const size_t) const override;
    void setGain(const int direction, const size_t, const double value) override;
    void setGain(const int direction, const size_t, const std::string &name, const double value) override;
    double getGain(const int direction, const size_t) const override;
    double getGain(const int direction, const size_t, const std::string &name) const override;
    SoapySDR::Range getGainRange(const int, const size_t) const override;
    SoapySDR::Range getGainRange(const int, const size_t, const std::string &name) const override;

    // ---- frequency ----
    void setFrequency(const int direction, const size_t, const double frequency,
                      const SoapySDR::Kwargs &) override;
    void setFrequency(const int direction, const size_t channel, const std::string &name,
                      const double frequency, const SoapySDR::Kwargs &args) override;
    double getFrequency(const int direction, const size_t) const override;
    double getFrequency(const int direction, const size_t channel, const std::string &) const override;
    std::vector<std::string> listFrequencies(const int, const size_t) const override;
    SoapySDR::RangeList getFrequencyRange(const int, const size_t) const override;
    SoapySDR::RangeList getFrequencyRange(const int, const size_t, const std::string &) const override;

    // ---- sample rate and bandwidth ----
    void setSampleRate(const int direction, const size_t, const double rate) override;
    double getSampleRate(const int direction, const size_t) const override;
    std::vector<double> listSampleRates(const int direction, const size_t) const override;
    SoapySDR::RangeList getSampleRateRange(const int direction, const size_t) const override;
    void setBandwidth(const int direction, const size_t, const double bw) override;
    double getBandwidth(const int direction, const size_t) const override;
    SoapySDR::RangeList getBandwidthRange(const int, const size_t) const override;

    // ---- clocking and sensors ----
    std::vector<std::string> listClockSources() const override;
    void setClockSource(const std::string &source) override;
    std::string getClockSource() const override;
    std::vector<std::string> listSensors() const override;
    SoapySDR::ArgInfo getSensorInfo(const std::string &key) const override;
    std::string readSensor(const std::string &key) const override;

    // ---- time: a nanosecond counter that streams timestamp their samples with ----
    bool hasHardwareTime(const std::string &what) const override;
    long long getHardwareTime(const std::string &what) const override;
    void setHardwareTime(const long long timeNs, const std::string &what) override;

  private:
    static int gainIndex(const std::string &name);
    double *gains(int direction) { return direction == SOAPY_SDR_TX ? txGain_ : rxGain_; }
    long long sinceEpochNs() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - timeEpoch_).count();
    }
    // Caller holds mu_.
    long long hwNowNs() const { return timeOffsetNs_ + sinceEpochNs(); }

    // What one read needs of the current settings, under one lock: the tone's NCO
    // step, its amplitude (0 when out of band), the noise amplitude (both scaled by the
    // RX gain relative to kRefGainDb), and the scene's view of the tuning. A reference error e shifts the LO and the sample clock.
    struct Tuning {
        const std::complex<float> *noise = nullptr; // the device's noise table
        uint64_t step = 0;
        float amp = 0.0f, namp = 0.0f;
        Frame frame;
    };
    Tuning tuning() const;
    // Whether the rx_stall_after_s fault has begun (logged once).
    bool rxStalled();
    // The hot loop: table NCO (64-bit phase accumulator) plus the noise table.
    static void generate(SimStream *s, std::complex<float> *out, size_t n, const Tuning &tu);

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
    double rxGain_[2] = {kRefLnaDb, kRefGainDb - kRefLnaDb}; // LNA, VGA
    double txGain_[2] = {0.0, 0.0};
    const Clock::time_point timeEpoch_ = Clock::now();
    long long timeOffsetNs_ = 0;
    SweepScene scene_;
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

} // namespace rxsim
