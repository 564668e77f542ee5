// rxsim: the driver's entry in SoapySDR's registry: find and make (see rxsim.hpp).
#include "rxsim.hpp"

#include <SoapySDR/Registry.hpp>
#include <SoapySDR/Version.hpp>

namespace {

using rxsim::argString;
using rxsim::kDefaultSerial;

const char *kConfigKeys[] = {"ppm",        "ext_ref", "ext_ppm", "tone_hz", "tone_dbfs",
                             "noise_dbfs", "pace",    "tx",      "buffer_samples", "tx_fail_after",
                             "tx_stall_after_s", "tx_stall_s", "emitters",   "settle_s", "dead_hz",
                             "seed", "rx_stall_after_s", "fail_open",
                             "lte_freq", "lte_pci", "lte_snr_db", "lte_seed", "lte_tdd", "sample_ppm",
                             "gsm_freq", "gsm_snr_db",
                             "replay", "replay_format", "replay_rate", "replay_freq", "replay_loop"};

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

SoapySDR::Device *makeRxSim(const SoapySDR::Kwargs &args) { return new rxsim::RxSim(args); }

SoapySDR::Registry registerRxSim("rxsim", &findRxSim, &makeRxSim, SOAPY_SDR_ABI_VERSION);

} // namespace
