// rxsim's replay: a recording streamed as the radio's samples.
//
// replay=FILE (a SigMF .sigmf-meta or .sigmf-data, the other file beside it; or a raw
// file with replay_format=cf32|cf32_le|ci16|ci16_le|cs16|ci8|cs8|cu8 and
// replay_rate=R and replay_freq=F) makes the RX stream carry the file's
// samples, paced at its rate like any rxsim stream, instead of the generated tone,
// noise and scenes. replay_loop=1 (the default) starts over at the end; replay_loop=0
// plays it once, then every read times out (logged once as `replayEnd RX`), like a
// radio that stopped delivering. The radio offers only the file's rate and tunes
// to its centre; tuning it elsewhere is refused (the samples cannot move).
// An SDRangel .sdriq recording (replay=FILE.sdriq, or any file opening with its 32-byte
// header, CRC-32 and all) is replayed from its header's rate, centre and sample size (16-bit,
// or 24-bit in 32-bit words at full scale 2^23), as analyze reads it: a replay_format is
// refused (its header would be streamed as samples), so is a replay_rate or replay_freq
// that disagrees with the header, and a file named .sdriq whose header is not one (too
// short, its CRC-32 wrong, a sample size other than 16 or 24) is refused naming the field.
// A SigMF meta this reader would misread (several channels, headers or a footer in the
// data file, another data file, segments at different centres) is refused naming the key,
// and so is a "raw" file that is a container (a WAV, a tar archive, a GNU Radio File Meta
// Sink recording with attached headers), whose headers it would stream as samples, a raw
// file whose GNU Radio detached headers FILE.hdr lie beside it (they state its layout, rate
// and rx_freq, which analyze reads and a raw replay would not), and a
// file that ends mid-sample (as analyze refuses it). A meta's core:sha512 is checked over
// the data file as it is loaded (a mismatch is refused naming both hashes, as analyze
// does), a gqrx raw recording's name (gqrx_YYYYMMDD_HHMMSS_FREQ_RATE_fc.raw, cf32) gives its
// centre and rate as analyze reads them (a replay_rate or replay_freq that disagrees is
// refused), and the centre is never made up: a recording whose capture segments state no
// core:frequency needs replay_freq=F (an annotation's keys are not its tuning), one where
// some state it and others do not is refused as analyze refuses it, and a replay_freq that
// disagrees with the meta's is refused. The meta's text must first be JSON as analyze reads
// it (json_check.hpp): a byte order mark, a number JSON does not have (`0x1A`, `Infinity`),
// a key named twice in an object or any other syntax error is refused naming where. Each
// key is then read from its place in the parsed document, as analyze reads it: the
// recording's keys (core:datatype, core:sample_rate, ...) from "global", a segment's
// (core:frequency, core:sample_start, core:header_bytes) from its entry in "captures"; the
// same key elsewhere (a capture segment's core:sample_rate) is not taken for it. An
// extension declared "optional": false in core:extensions (rxnode's own aside) is refused
// naming it, as analyze refuses it.
// At most kReplayMax samples are loaded.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "common.hpp"
#include "json_check.hpp"
#include "sha512.hpp"

namespace rxsim {

constexpr size_t kReplayMax = size_t(1) << 26;
// The largest SigMF meta a replay reads (16 MiB).
constexpr size_t kMetaMax = size_t(1) << 24;

class Replay {
  public:
    void parse(const SoapySDR::Kwargs &args) {
        auto it = args.find("replay");
        if (it == args.end() || it->second.empty()) return;
        path_ = it->second;
        loop_ = argDouble(args, "replay_loop", 1.0) != 0.0;
        std::string data = path_, format;
        long offset = 0; // where the samples start in the data file
        const std::string meta_ext = ".sigmf-meta", data_ext = ".sigmf-data";
        auto ends = [](const std::string &a, const std::string &b) {
            return a.size() >= b.size() && a.compare(a.size() - b.size(), b.size(), b) == 0;
        };
        const bool isSigmf = ends(path_, meta_ext) || ends(path_, data_ext);
        // The centre is never made up: the recording states it (SigMF core:frequency) or the
        // operator does (replay_freq=F); a recording that states none without replay_freq is
        // refused, and so is a replay_freq that disagrees with the recording's own.
        auto given = args.find("replay_freq");
        const bool freqGiven = given != args.end() && !given->second.empty();
        double argFreq = freqGiven ? argDouble(args, "replay_freq", std::nan("")) : std::nan("");
        if (freqGiven && !(std::isfinite(argFreq) && argFreq > 0.0))
            throw std::runtime_error("rxsim: replay_freq=" + given->second +
                                     " is not a frequency > 0 in Hz");
        if (isSigmf) {
            std::string stem = path_.substr(0, path_.size() - meta_ext.size());
            data = stem + data_ext;
            meta_ = stem + meta_ext;
            const std::string meta = readAll(meta_);
            // One rule for the meta, analyze's: its text JSON (json_check.hpp), checked whole,
            // and each key read from its place in the parsed tree (global, captures[i]), never
            // found by its text: a core:sample_rate in a capture segment is not the rate.
            Json doc;
            const std::string notJson = JsonCheck::parse(meta, &doc, {"global", "captures"});
            if (!notJson.empty())
                throw std::runtime_error("rxsim: replay " + meta_ + ": " + notJson +
                                         " (rxnode analyze refuses it too)");
            const Json *global = doc.get("global");
            if (global == nullptr || global->kind != Json::Object)
                throw std::runtime_error("rxsim: replay " + meta_ +
                                         " has no \"global\" object (rxnode analyze refuses it too)");
            refuseRequiredExtensions(*global, meta_);
            const Json *dt = global->get("core:datatype");
            const Json *rate = global->get("core:sample_rate");
            if (dt == nullptr || dt->kind != Json::String || dt->text.empty())
                throw std::runtime_error("rxsim: replay " + meta_ +
                                         " has no core:datatype in its \"global\" object (a "
                                         "capture segment's or an annotation's is not the "
                                         "recording's; rxnode analyze reads it there too)");
            format = dt->text;
            if (rate == nullptr)
                throw std::runtime_error("rxsim: replay " + meta_ +
                                         " has no core:sample_rate in its \"global\" object (a "
                                         "capture segment's or an annotation's is not the "
                                         "recording's rate; rxnode analyze reads it there too)");
            if (!(rate->kind == Json::Number && std::isfinite(rate->num) && rate->num > 0.0))
                throw std::runtime_error("rxsim: replay " + meta_ + ": core:sample_rate " +
                                         rate->shown() + " is not a rate in Hz > 0");
            rate_ = rate->num;
            refuseMisread(*global, meta_);
            // Each capture segment's centre and start, read inside `captures` only (an
            // annotation's keys say nothing about the tuning).
            std::vector<double> f;
            const Json *captures = doc.get("captures");
            static const Json kNone;
            const Json &segments = captures != nullptr ? *captures : kNone;
            if (captures != nullptr && captures->kind != Json::Array)
                throw std::runtime_error("rxsim: replay " + meta_ + ": captures is " +
                                         captures->shown() + ", not a list of capture segments");
            for (size_t i = 0; i < segments.items.size(); i++) {
                const Json &seg = segments.items[i];
                const std::string at = "capture segment " + std::to_string(i);
                if (seg.kind != Json::Object)
                    throw std::runtime_error("rxsim: replay " + meta_ + ": " + at + " is " +
                                             seg.shown() + ", not an object");
                const Json *hdr = seg.get("core:header_bytes");
                if (hdr != nullptr && !(hdr->kind == Json::Number && hdr->num == 0.0))
                    refuseKey(meta_, "core:header_bytes", "is not 0 (" + at + ")");
                if (const Json *v = seg.get("core:frequency"))
                    f.push_back(v->kind == Json::Number ? v->num : std::nan(""));
                // Where the segment starts, counted from the first segment's start, as analyze
                // places it: sorted, and inside the data (checked once it is loaded).
                // (none stated: 0, as analyze reads it).
                double start = 0.0;
                if (const Json *st = seg.get("core:sample_start")) {
                    if (!st->isCount())
                        throw std::runtime_error("rxsim: replay " + meta_ + ": " + at +
                                                 " has core:sample_start " + st->shown() +
                                                 ": not a count (a whole number >= 0)");
                    start = st->num;
                }
                if (i > 0 && start < starts_.back())
                    throw std::runtime_error(
                        "rxsim: replay " + meta_ + ": " + at + " has core:sample_start " +
                        number(start) +
                        ", before the segment before it: segments must be sorted by "
                        "core:sample_start (rxnode analyze refuses it too)");
                starts_.push_back(start);
            }
            if (!f.empty() && f.size() != segments.items.size())
                throw std::runtime_error(
                    "rxsim: replay " + meta_ + ": " + std::to_string(segments.items.size() - f.size()) +
                    " of its " + std::to_string(segments.items.size()) +
                    " capture segments state no core:frequency while the others do; replay "
                    "streams the data file as one channel at one centre (rxnode analyze reads it)");
            for (double v : f)
                if (!(v == f[0]))
                    throw std::runtime_error("rxsim: replay " + meta_ +
                                             ": core:frequency differs between capture segments; "
                                             "replay streams the data file as one channel at one "
                                             "centre (rxnode analyze reads it)");
            if (f.empty()) {
                if (!freqGiven)
                    throw std::runtime_error(
                        "rxsim: replay " + meta_ +
                        " states no core:frequency (the centre it was recorded at): give it as "
                        "replay_freq=F; a replay is never tuned to a centre the recording does "
                        "not state");
                freq_ = argFreq;
            } else {
                if (!(std::isfinite(f[0]) && f[0] > 0.0))
                    throw std::runtime_error("rxsim: replay " + meta_ +
                                             ": core:frequency is not a frequency > 0 in Hz");
                if (freqGiven && argFreq != f[0])
                    throw std::runtime_error("rxsim: replay_freq=" + given->second +
                                             " disagrees with " + meta_ + "'s core:frequency " +
                                             number(f[0]) + " Hz; drop replay_freq");
                freq_ = f[0];
            }
            if (const Json *h = global->get("core:sha512")) {
                sha512_ = h->kind == Json::String ? h->text : std::string();
                std::transform(sha512_.begin(), sha512_.end(), sha512_.begin(),
                               [](unsigned char c) { return char(std::tolower(c)); });
                const bool hex = sha512_.size() == 128 &&
                                 sha512_.find_first_not_of("0123456789abcdef") == std::string::npos;
                if (!hex)
                    throw std::runtime_error("rxsim: replay " + meta_ + ": core:sha512 " +
                                             h->shown() + " is not a SHA-512 (128 hex digits)");
            }
        } else if (const Sdriq sq = sdriqOf(path_); sq.bits != 0) {
            // SDRangel's .sdriq: its header says the layout, rate and centre, as analyze
            // reads them; the samples follow its 32 bytes.
            const std::string what = "rxsim: replay " + path_ + ": it is an SDRangel .sdriq recording (" +
                                     std::to_string(sq.bits) + "-bit I/Q, " + number(sq.rate) +
                                     " S/s, centre " + number(sq.center) +
                                     " Hz, its 32-byte header CRC-checked)";
            if (!argString(args, "replay_format", "").empty())
                throw std::runtime_error(what + ": its header says how its samples are stored; "
                                                "drop replay_format (read as " +
                                         argString(args, "replay_format", "") +
                                         ", its header would be streamed as samples)");
            if (!(sq.rate > 0.0))
                throw std::runtime_error(what + ": its header's sample rate is 0 S/s, not a rate > 0 "
                                                "(rxnode analyze refuses it too)");
            if (!(sq.center > 0.0))
                throw std::runtime_error(what + ": its header's centre frequency is 0 Hz, not a "
                                                "frequency > 0 (rxnode analyze refuses it too)");
            auto r = args.find("replay_rate");
            if (r != args.end() && !r->second.empty() &&
                argDouble(args, "replay_rate", std::nan("")) != sq.rate)
                throw std::runtime_error("rxsim: replay_rate=" + r->second + " disagrees with " +
                                         path_ + "'s .sdriq header, " + number(sq.rate) +
                                         " S/s; drop replay_rate");
            if (freqGiven && argFreq != sq.center)
                throw std::runtime_error("rxsim: replay_freq=" + given->second + " disagrees with " +
                                         path_ + "'s .sdriq header, centre " + number(sq.center) +
                                         " Hz; drop replay_freq");
            rate_ = sq.rate;
            freq_ = sq.center;
            format = sq.bits == 24 ? "sdriq24" : "sdriq16";
            offset = 32;
        } else {
            format = argString(args, "replay_format", "");
            rate_ = argDouble(args, "replay_rate", 0.0);
            bool haveFreq = freqGiven;
            double centre = argFreq;
            // gqrx names its raw recordings gqrx_YYYYMMDD_HHMMSS_FREQ_RATE_fc.raw (cf32): the
            // name states the centre and rate, as analyze reads them; a replay_rate or
            // replay_freq that disagrees is refused, one left out is the name's. (Another
            // replay_format than cf32 is a file the name no longer describes, as in analyze.)
            double gqrxCentre = 0.0, gqrxRate = 0.0;
            if ((format.empty() || format == "cf32" || format == "cf32_le") &&
                gqrxName(path_, &gqrxCentre, &gqrxRate)) {
                const std::string named = "rxsim: replay " + path_ + ": its gqrx file name states ";
                format = "cf32";
                auto r = args.find("replay_rate");
                if (r != args.end() && !r->second.empty() && rate_ != gqrxRate)
                    throw std::runtime_error(named + number(gqrxRate) + " S/s; replay_rate=" +
                                             r->second + " disagrees: drop it");
                if (haveFreq && centre != gqrxCentre)
                    throw std::runtime_error(named + "the centre " + number(gqrxCentre) +
                                             " Hz; replay_freq=" + given->second +
                                             " disagrees: drop it");
                if (!(gqrxCentre > 0.0))
                    throw std::runtime_error(named + "a centre of 0 Hz, not a frequency > 0 "
                                             "(rxnode analyze refuses it too)");
                rate_ = gqrxRate;
                centre = gqrxCentre;
                haveFreq = true;
            }
            if (format.empty() || !(rate_ > 0.0) || !haveFreq)
                throw std::runtime_error(
                    "rxsim: replay of the raw file " + path_ +
                    " needs replay_format=cf32|ci16|ci8|cu8, replay_rate=R and replay_freq=F (the "
                    "centre it was recorded at: a raw file states none)");
            freq_ = centre;
            refuseContainer(path_);
        }
        if (!(rate_ >= kMinRate && rate_ <= kMaxRate))
            throw std::runtime_error("rxsim: replay rate " + std::to_string(rate_) +
                                     " S/s outside 0.1..250 MS/s");
        load(data, format,
             isSigmf ? "core:datatype" : offset != 0 ? ".sdriq header's sample size" : "replay_format",
             offset);
        // A segment the meta places past the data's last sample: the recording lost the
        // samples it describes (analyze refuses it), never replayed as if whole.
        for (size_t i = 1; i < starts_.size(); i++)
            if (starts_[i] - starts_[0] > double(samples_.size()))
                throw std::runtime_error("rxsim: replay " + meta_ + ": capture segment " +
                                         std::to_string(i) + " starts at sample " +
                                         number(starts_[i]) + ", but the dataset " +
                                         data + " holds " + std::to_string(samples_.size()) +
                                         " samples: it lacks the samples the meta describes");
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
            // A metadata file, not data: one this large is refused, never read in part (the
            // keys past the cut, a core:sha512 among them, would go unread).
            if (out.size() > kMetaMax) {
                std::fclose(f);
                throw std::runtime_error("rxsim: replay " + path + " is larger than " +
                                         std::to_string(kMetaMax) +
                                         " bytes: too large for a SigMF meta to replay "
                                         "(rxnode analyze reads it)");
            }
        }
        std::fclose(f);
        return out;
    }
    // A key of the meta whose samples this replay, which streams the data file from its
    // first byte as one channel at one centre, would read otherwise than `rxnode analyze`
    // does: refused naming it.
    [[noreturn]] static void refuseKey(const std::string &name, const std::string &key,
                                       const std::string &why) {
        throw std::runtime_error("rxsim: replay " + name + ": " + key + " " + why +
                                 "; replay streams the data file from its first byte as one "
                                 "channel at one centre (rxnode analyze reads it)");
    }
    // The global keys that make a replay misread the data file (several channels
    // interleaved, a footer in the data file, a data file of another name): refused naming
    // the key. (A capture segment's core:header_bytes is refused where segments are read.)
    static void refuseMisread(const Json &global, const std::string &name) {
        const Json *v = global.get("core:num_channels");
        if (v != nullptr && !(v->kind == Json::Number && v->num == 1.0))
            refuseKey(name, "core:num_channels", "is not 1");
        v = global.get("core:trailing_bytes");
        if (v != nullptr && !(v->kind == Json::Number && v->num == 0.0))
            refuseKey(name, "core:trailing_bytes", "is not 0");
        if (global.get("core:dataset") != nullptr)
            refuseKey(name, "core:dataset", "names the data file");
    }
    // core:extensions: an extension declared "optional": false must be supported to read
    // the recording (SigMF 1.2; it may change what the samples mean). rxsim, as analyze,
    // supports only rxnode's own: another is refused naming it, and so is an entry that does
    // not say it is optional.
    static void refuseRequiredExtensions(const Json &global, const std::string &name) {
        const Json *ext = global.get("core:extensions");
        if (ext == nullptr) return;
        auto refuse = [&](const std::string &why) {
            throw std::runtime_error("rxsim: replay " + name + ": " + why +
                                     " (rxnode analyze refuses it too)");
        };
        if (ext->kind == Json::Object) {
            // The form before SigMF 1.0: namespace -> "optional" or "required".
            for (size_t i = 0; i < ext->keys.size(); i++) {
                const Json &v = ext->items[i];
                if (!(v.kind == Json::String && v.text == "optional"))
                    refuse("core:extensions names the extension \"" + ext->keys[i] + "\" as " +
                           v.shown() + ", not \"optional\"; SigMF says a reader that does not "
                           "support it must not read the recording, and rxsim supports no "
                           "extension");
            }
            return;
        }
        if (ext->kind != Json::Array) refuse("core:extensions is not a list of extensions");
        for (size_t k = 0; k < ext->items.size(); k++) {
            const Json &e = ext->items[k];
            if (e.kind != Json::Object)
                refuse("core:extensions[" + std::to_string(k) + "] is not an extension");
            const Json *n = e.get("name");
            const std::string extName = n != nullptr && n->kind == Json::String ? n->text : "";
            const Json *opt = e.get("optional");
            const bool optional = opt != nullptr && opt->kind == Json::Bool && opt->num == 1.0;
            if (!optional && extName != "rxnode")
                refuse("core:extensions[" + std::to_string(k) + "] declares the extension \"" +
                       extName + "\" without \"optional\": true; SigMF says a reader that does "
                       "not support it must not read the recording (it may change what the "
                       "samples mean), and rxsim supports no extension");
        }
    }
    // A file that is no raw recording but a container rxnode analyze reads, whose headers
    // a raw replay would stream as samples (and shift every sample after them: a WAV's
    // 44-byte header swapped a cf32 file's I and Q, a tone at +100 kHz played at -100 kHz):
    // refused naming what it is. A file too short to tell is left to load.
    static void refuseContainer(const std::string &path) {
        FILE *f = std::fopen(path.c_str(), "rb");
        if (f == nullptr) return; // load names the file it cannot open
        unsigned char h[512] = {};
        const size_t n = std::fread(h, 1, sizeof h, f);
        std::fclose(f);
        auto at = [&](size_t off, const char *tag, size_t len) {
            return n >= off + len && std::memcmp(h + off, tag, len) == 0;
        };
        // GNU Radio's File Meta Sink: an attached header opens with the PMT dict's
        // first key, "strt" (hw/dsp/src/iq/reader/gnuradio.rs).
        static const char kGnuRadio[] = {0x09, 0x07, 0x02, 0x00, 0x04, 's', 't', 'r', 't', 0x0b};
        std::string what;
        if ((at(0, "RIFF", 4) || at(0, "RF64", 4) || at(0, "BW64", 4)) && at(8, "WAVE", 4))
            what = "a WAV recording, whose header and chunks";
        else if (at(257, "ustar", 5))
            what = "a tar archive (a .sigmf archive: extract it and replay its .sigmf-meta), whose "
                   "headers and meta";
        else if (at(0, kGnuRadio, sizeof kGnuRadio))
            what = "a GNU Radio File Meta Sink recording with attached headers, whose headers (one "
                   "before each segment)";
        // GNU Radio's File Meta Sink with detached headers: FILE.hdr beside the samples (a
        // regular file opening with a header, as analyze tells it) states their layout, rate
        // and rx_freq, which analyze reads and a raw replay would not: a 1 MS/s recording at
        // 433.92 MHz replayed at replay_rate=2e6, replay_freq=100e6 put its tone at 100.2 MHz.
        const std::string hdr = path + ".hdr";
        struct stat st;
        if (what.empty() && stat(hdr.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG) {
            if (FILE *hf = std::fopen(hdr.c_str(), "rb")) {
                unsigned char m[sizeof kGnuRadio] = {};
                const size_t k = std::fread(m, 1, sizeof m, hf);
                std::fclose(hf);
                if (k == sizeof m && std::memcmp(m, kGnuRadio, sizeof m) == 0)
                    throw std::runtime_error(
                        "rxsim: replay of the raw file " + path + ": " + hdr +
                        " beside it is its GNU Radio File Meta Sink header (detached), which states "
                        "the samples' layout, rate and rx_freq; a raw replay would take "
                        "replay_format, replay_rate and replay_freq instead (rxnode analyze reads "
                        "the file with its header); rxsim replays raw samples or a SigMF pair");
            }
        }
        if (!what.empty())
            throw std::runtime_error("rxsim: replay of the raw file " + path + ": it is " + what +
                                     " would be streamed as samples; rxsim replays raw samples or a "
                                     "SigMF pair (rxnode analyze reads this file)");
    }
    // Whether path's file name is one gqrx gives its raw I/Q recordings,
    // gqrx_YYYYMMDD_HHMMSS_FREQ_RATE_fc.raw (FREQ and RATE whole Hz), as analyze tells it;
    // if so, the centre and rate it states.
    static bool gqrxName(const std::string &path, double *centre, double *rate) {
        const size_t slash = path.find_last_of("/\\");
        const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
        const std::string pre = "gqrx_", suf = "_fc.raw";
        if (name.size() < pre.size() + suf.size() || name.compare(0, pre.size(), pre) != 0 ||
            name.compare(name.size() - suf.size(), suf.size(), suf) != 0)
            return false;
        const std::string body = name.substr(pre.size(), name.size() - pre.size() - suf.size());
        std::vector<std::string> parts;
        size_t start = 0;
        for (size_t i = 0; i <= body.size(); i++)
            if (i == body.size() || body[i] == '_') {
                parts.push_back(body.substr(start, i - start));
                start = i + 1;
            }
        auto digits = [](const std::string &t, size_t n) {
            return !t.empty() && (n == 0 || t.size() == n) &&
                   t.find_first_not_of("0123456789") == std::string::npos;
        };
        if (parts.size() != 4 || !digits(parts[0], 8) || !digits(parts[1], 6) ||
            !digits(parts[2], 0) || !digits(parts[3], 0))
            return false;
        *centre = std::strtod(parts[2].c_str(), nullptr);
        *rate = std::strtod(parts[3].c_str(), nullptr);
        return true;
    }
    // What an SDRangel .sdriq header says; bits 0: the file is not one.
    struct Sdriq {
        unsigned bits = 0;
        double rate = 0.0, center = 0.0;
    };
    // SDRangel's .sdriq: a 32-byte header (rate u32, centre u64, start time u64, sample
    // size u32 of 16 or 24, filler u32) closed by the CRC-32 of its first 28 bytes, all
    // little-endian. A file named .sdriq must have one (refused naming the field, as
    // analyze refuses it); another is one when its first 32 bytes are one, CRC and all.
    static Sdriq sdriqOf(const std::string &path) {
        const std::string ext = ".sdriq";
        std::string tail = path.size() >= ext.size() ? path.substr(path.size() - ext.size()) : "";
        std::transform(tail.begin(), tail.end(), tail.begin(),
                       [](unsigned char c) { return char(std::tolower(c)); });
        const bool named = tail == ext;
        FILE *f = std::fopen(path.c_str(), "rb");
        if (f == nullptr) return {}; // load names the file it cannot open
        unsigned char h[32] = {};
        const size_t n = std::fread(h, 1, sizeof h, f);
        std::fclose(f);
        const std::string not_one =
            "rxsim: replay " + path + ": not an SDRangel .sdriq recording as its name says: ";
        if (n < 32) {
            if (named)
                throw std::runtime_error(not_one + std::to_string(n) +
                                         " bytes, shorter than its 32-byte header");
            return {};
        }
        auto u32at = [&](size_t off) {
            return uint32_t(h[off]) | uint32_t(h[off + 1]) << 8 | uint32_t(h[off + 2]) << 16 |
                   uint32_t(h[off + 3]) << 24;
        };
        const uint32_t stored = u32at(28), computed = crc32(h, 28);
        if (stored != computed) {
            if (!named) return {};
            char b[160];
            std::snprintf(b, sizeof b,
                          "its header's CRC-32 (bytes 28..32) is 0x%08x, but its first 28 bytes "
                          "hash to 0x%08x",
                          unsigned(stored), unsigned(computed));
            throw std::runtime_error(not_one + b + " (rxnode analyze refuses it too)");
        }
        const uint32_t bits = u32at(20);
        if (bits != 16 && bits != 24) {
            if (!named) return {};
            throw std::runtime_error(not_one + "its header's sample size (bytes 20..24) is " +
                                     std::to_string(bits) + ": SDRangel writes 16 or 24");
        }
        Sdriq sq;
        sq.bits = bits;
        sq.rate = double(u32at(0));
        sq.center = double(uint64_t(u32at(4)) | uint64_t(u32at(8)) << 32);
        return sq;
    }
    // The CRC-32 (IEEE 802.3, reflected, as zlib computes it) of b[0..len).
    static uint32_t crc32(const unsigned char *b, size_t len) {
        uint32_t crc = 0xFFFFFFFFu;
        for (size_t i = 0; i < len; i++) {
            crc ^= b[i];
            for (int k = 0; k < 8; k++) crc = (crc & 1u) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
        }
        return ~crc;
    }
    static std::string number(double v) {
        char b[64];
        std::snprintf(b, sizeof b, "%.17g", v);
        return b;
    }
    // formatFrom: where the format was named (replay_format, or the meta's core:datatype).
    // offset: the byte the samples start at (an .sdriq's header before it).
    void load(const std::string &path, const std::string &format, const std::string &formatFrom,
              long offset) {
        size_t width;
        int kind; // 0 float32, 1 int16, 2 int8, 3 uint8, 4 int32 holding a 24-bit value
        if (format == "cf32" || format == "cf32_le") width = 8, kind = 0;
        else if (format == "ci16" || format == "ci16_le" || format == "cs16") width = 4, kind = 1;
        else if (format == "ci8" || format == "cs8") width = 2, kind = 2;
        else if (format == "cu8") width = 2, kind = 3;
        else if (format == "sdriq16") width = 4, kind = 1;
        else if (format == "sdriq24") width = 8, kind = 4;
        else
            throw std::runtime_error("rxsim: replay format " + format +
                                     " not supported (cf32_le, ci16_le, ci8, cu8)");
        FILE *f = std::fopen(path.c_str(), "rb");
        if (f == nullptr) throw std::runtime_error("rxsim: replay: cannot open " + path);
        if (offset != 0 && std::fseek(f, offset, SEEK_SET) != 0) {
            std::fclose(f);
            throw std::runtime_error("rxsim: replay: cannot seek in " + path);
        }
        std::vector<unsigned char> raw(width * 65536);
        // Whole samples only: a file that ends mid-sample is refused as analyze refuses
        // it (truncated, or a wrong replay_format, which gives the same symptom), never
        // streamed without its last bytes. A partial sample a read ends with is carried
        // into the next.
        size_t n, got, have = 0;
        uint64_t bytes = 0;
        Sha512 hash;
        while ((got = std::fread(raw.data() + have, 1, raw.size() - have, f)) > 0) {
            if (!sha512_.empty()) hash.update(raw.data() + have, got);
            bytes += got;
            have += got;
            n = have / width;
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
                } else if (kind == 4) {
                    // SDRangel's 24-bit samples, in 32-bit words: full scale 2^23.
                    int32_t a, c;
                    std::memcpy(&a, b, 4);
                    std::memcpy(&c, b + 4, 4);
                    re = float(a / 8388608.0), im = float(c / 8388608.0);
                } else if (kind == 2) {
                    re = int8_t(b[0]) / 127.0f, im = int8_t(b[1]) / 127.0f;
                } else {
                    // rtl_sdr's unsigned bytes as every reader of rxnode reads them:
                    // centred on 127.5, full scale 128 (docs/operator.md#analysing-a-recording).
                    re = (b[0] - 127.5f) * (1.0f / 128.0f), im = (b[1] - 127.5f) * (1.0f / 128.0f);
                }
                samples_.emplace_back(re, im);
            }
            const size_t rest = have - n * width;
            std::memmove(raw.data(), raw.data() + n * width, rest);
            have = rest;
        }
        std::fclose(f);
        if (have != 0)
            throw std::runtime_error("rxsim: replay " + path + ": " + std::to_string(bytes) +
                                     " bytes is not a whole number of " + format + " samples (" +
                                     std::to_string(width) + " bytes each): truncated or wrong " + formatFrom);
        if (!sha512_.empty()) {
            const std::string got = hash.hex();
            if (got != sha512_)
                throw std::runtime_error(
                    "rxsim: replay " + meta_ + ": core:sha512 does not match the dataset " + path +
                    ": the meta says " + sha512_ + ", the data hashes to " + got +
                    ": the samples are not the ones recorded (changed, truncated or mixed with "
                    "another file's); nothing is replayed from them");
        }
        if (samples_.empty()) throw std::runtime_error("rxsim: replay " + path + " holds no samples");
    }

    std::string path_, meta_;
    // Each capture segment's core:sample_start, as stated (placed counted from the first's).
    std::vector<double> starts_;
    // The meta's core:sha512, lower-case hex; empty when it states none.
    std::string sha512_;
    bool loop_ = true;
    double rate_ = 0.0, freq_ = 0.0;
    std::vector<std::complex<float>> samples_;
};

} // namespace rxsim
