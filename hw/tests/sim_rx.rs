//! RX paths against the real libSoapySDR with the bundled rxsim module.
//!
//! Modules load once per process: `init()` runs `use_sim()` and sets the event
//! log before any test touches SoapySDR. No test in this binary transmits.
use num_complex::Complex;
use rustfft::FftPlanner;
use rxnode_dsp::{NativeSource, ReadOutcome, SampleSource};
use rxnode_hw::{enumerate, Error, RxConfig, RxRadio};
use std::time::{Duration, Instant};

mod common;
use common::{init, log_lines, log_text, read_exact};

#[path = "sim_rx/formats.rs"]
mod formats;
#[path = "sim_rx/gain.rs"]
mod gain;

/// Frequency of the strongest FFT bin, with parabolic interpolation.
fn peak_hz(x: &[Complex<f32>], rate: f64) -> f64 {
    let n = x.len();
    let mut buf = x.to_vec();
    FftPlanner::new().plan_fft_forward(n).process(&mut buf);
    let mag: Vec<f64> = buf.iter().map(|c| c.norm_sqr() as f64).collect();
    let (k, _) = mag
        .iter()
        .enumerate()
        .fold((0, 0.0), |b, (i, &m)| if m > b.1 { (i, m) } else { b });
    let (a, b, c) = (
        mag[(k + n - 1) % n].ln(),
        mag[k].ln(),
        mag[(k + 1) % n].ln(),
    );
    let delta = 0.5 * (a - c) / (a - 2.0 * b + c);
    let bin = k as f64 + delta;
    let bin = if bin > n as f64 / 2.0 {
        bin - n as f64
    } else {
        bin
    };
    bin * rate / n as f64
}

fn tone_at(args: &str, clock: Option<&str>) -> f64 {
    let mut radio = RxRadio::open(args).expect("open");
    let actual = radio
        .configure(&RxConfig {
            frequency_hz: 100e6,
            sample_rate_hz: 1e6,
            clock_source: clock.map(str::to_owned),
            ..RxConfig::default()
        })
        .expect("configure");
    assert_eq!(actual.sample_rate_hz, 1e6);
    let mut s = radio.rx_stream().expect("stream");
    let x = read_exact(&mut s, 1 << 18);
    peak_hz(&x, 1e6)
}

fn expected(ppm: f64) -> f64 {
    let e = ppm * 1e-6;
    (100.1e6 - 100e6 * (1.0 + e)) / (1.0 + e)
}

#[test]
fn enumerate_finds_the_default_simulated_radio_and_probes_it() {
    init();
    let devs = enumerate("").expect("enumerate");
    assert_eq!(devs.len(), 1, "{devs:?}");
    let d = &devs[0];
    assert_eq!(d.driver, "rxsim");
    assert_eq!(d.serial.as_deref(), Some("rxsim0"));
    assert_eq!(d.hardware_key.as_deref(), Some("rxsim"));
    assert_eq!((d.rx_channels, d.tx_channels), (1, 1));
    assert_eq!(d.frequency_ranges_hz, vec![[1e6, 6e9]]);
    assert_eq!(d.sample_rate_ranges_hz, vec![[0.1e6, 250e6]]);
    assert_eq!(d.gain_range_db, Some([0.0, 60.0]));
    assert_eq!(d.clock_sources, vec!["internal", "external"]);
    assert_eq!(
        d.sensors.get("ref_locked").map(String::as_str),
        Some("false")
    );
    assert_eq!(
        d.hardware_info.get("clock source").map(String::as_str),
        Some("internal")
    );
    assert!(d.antennas.contains(&"RX".to_owned()));
    assert!(d.error.is_none());
    // Probing never streams.
    let lines = log_lines("rxsim0");
    assert!(lines.iter().any(|l| l.contains(" make ")), "{lines:?}");
    assert!(!lines.iter().any(|l| l.contains("Stream")), "{lines:?}");

    let named = enumerate("driver=rxsim,serial=bench7").expect("enumerate");
    assert_eq!(named.len(), 1);
    assert_eq!(named[0].serial.as_deref(), Some("bench7"));
    assert!(enumerate("driver=nosuchdriver")
        .expect("enumerate")
        .is_empty());
}

#[test]
fn open_configure_reads_back_and_rejects_unsupported_values() {
    init();
    let mut radio = RxRadio::open("driver=rxsim,serial=cfg").expect("open");
    let a = radio
        .configure(&RxConfig {
            frequency_hz: 433.92e6,
            sample_rate_hz: 2.4e6,
            gain_db: Some(33.0),
            bandwidth_hz: Some(1.5e6),
            antenna: Some("CAL".into()),
            clock_source: Some("external".into()),
        })
        .expect("configure");
    assert_eq!(a.frequency_hz, 433.92e6);
    assert_eq!(a.sample_rate_hz, 2.4e6);
    assert_eq!(a.gain_db, 33.0);
    assert_eq!(a.bandwidth_hz, Some(1.5e6));
    assert_eq!(a.antenna.as_deref(), Some("CAL"));
    assert_eq!(a.clock_source.as_deref(), Some("external"));
    assert_eq!(
        radio
            .hardware_info()
            .expect("hw info")
            .get("clock source")
            .map(String::as_str),
        Some("external")
    );

    let bad = RxConfig {
        frequency_hz: 7e9,
        sample_rate_hz: 1e6,
        ..RxConfig::default()
    };
    match radio.configure(&bad) {
        Err(e @ Error::Unsupported { .. }) => {
            let m = e.to_string();
            assert!(m.contains("serial=cfg") && m.contains("7000000000"), "{m}");
        }
        other => panic!("expected unsupported frequency, got {other:?}"),
    }
    let bad_rate = RxConfig {
        frequency_hz: 100e6,
        sample_rate_hz: 300e6,
        ..RxConfig::default()
    };
    assert!(
        matches!(radio.configure(&bad_rate), Err(Error::Unsupported { ref setting, .. }) if setting == "sample_rate_hz")
    );
    assert!(
        matches!(radio.set_clock_source("gps"), Err(Error::Unsupported { ref value, .. }) if value == "gps")
    );
    // No radio answers to the args at all: NotFound, naming what SoapySDR found.
    match RxRadio::open("driver=nosuchdriver") {
        Err(e @ Error::NotFound { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains("nosuchdriver") && m.contains("driver=rxsim"),
                "{m}"
            );
        }
        other => panic!("expected a not-found error, got {other:?}"),
    }
    // A radio that enumerates but cannot be opened stays an open error.
    match RxRadio::open("driver=rxsim,fail_open=1") {
        Err(e @ Error::Open { .. }) => assert!(e.to_string().contains("fail_open"), "{e}"),
        other => panic!("expected an open error, got {other:?}"),
    }
}

#[test]
fn ref_locked_needs_external_source_and_a_connected_reference() {
    init();
    let mut with_ref = RxRadio::open("driver=rxsim,serial=lock1,ext_ref=1").expect("open");
    assert_eq!(with_ref.sensors().expect("sensors")["ref_locked"], "false");
    with_ref.set_clock_source("external").expect("set");
    assert_eq!(with_ref.sensors().expect("sensors")["ref_locked"], "true");
    assert_eq!(
        with_ref.clock_source().expect("get").as_deref(),
        Some("external")
    );

    let mut without = RxRadio::open("driver=rxsim,serial=lock2,ext_ref=0").expect("open");
    without.set_clock_source("external").expect("set");
    assert_eq!(without.sensors().expect("sensors")["ref_locked"], "false");
}

#[test]
fn tone_lands_where_the_reference_error_puts_it() {
    init();
    let base = "driver=rxsim,pace=0,tone_hz=100.1e6,tone_dbfs=-10,noise_dbfs=-50";
    // Internal clock, +10 ppm: the tone moves by about -1 kHz.
    let f = tone_at(&format!("{base},serial=ppm1,ppm=10"), None);
    assert!(
        (f - expected(10.0)).abs() < 1.0,
        "got {f}, want {}",
        expected(10.0)
    );
    // No error: exactly the offset.
    let f = tone_at(&format!("{base},serial=ppm2"), None);
    assert!((f - 100e3).abs() < 1.0, "got {f}");
    // External reference connected: its own error applies.
    let f = tone_at(
        &format!("{base},serial=ppm3,ppm=10,ext_ref=1,ext_ppm=-3"),
        Some("external"),
    );
    assert!(
        (f - expected(-3.0)).abs() < 1.0,
        "got {f}, want {}",
        expected(-3.0)
    );
    // External selected but nothing at CLKIN: not locked, the internal error stays.
    let f = tone_at(
        &format!("{base},serial=ppm4,ppm=10,ext_ref=0,ext_ppm=-3"),
        Some("external"),
    );
    assert!(
        (f - expected(10.0)).abs() < 1.0,
        "got {f}, want {}",
        expected(10.0)
    );
}

#[test]
fn paced_stream_runs_at_the_sample_rate() {
    init();
    let mut radio = RxRadio::open("driver=rxsim,serial=pace1").expect("open");
    radio
        .configure(&RxConfig {
            frequency_hz: 100e6,
            sample_rate_hz: 1e6,
            ..RxConfig::default()
        })
        .expect("configure");
    let mut s = radio.rx_stream().expect("stream");
    let t = Instant::now();
    let _ = read_exact(&mut s, 300_000);
    let el = t.elapsed();
    assert!(
        el >= Duration::from_millis(250),
        "300k samples at 1 MS/s in {el:?}"
    );
}

/// The native format must not be the slow one: rxsim's CS16 path cost 4.6×
/// its CF32 path (a libm `lrintf` call per I and per Q, in a loop that did not
/// vectorize), which made rxsim, not the network, the top cost of SoapySDRServer's
/// stream thread (it reads CS16, the native format). Now ~1.7×. Unpaced, so rxsim
/// generates on this thread: its CPU time (not wall time, which other tests and
/// processes disturb) is what each format costs; best of 5 interleaved rounds.
/// A conforming driver reports readbacks inside its own ranges: at rxsim's lowest rate
/// (0.1 MS/s) its default bandwidth (0.75 × rate = 75 kHz) lay outside the bandwidth
/// range it advertised (0.2..61.44 MHz), so a client could not set back what it read,
/// and setBandwidth accepted values outside that range.
#[test]
fn default_bandwidth_at_the_lowest_rate_is_inside_the_advertised_range() {
    init();
    let mut radio = RxRadio::open("driver=rxsim,serial=bw1,pace=0").expect("open");
    let cfg = RxConfig {
        frequency_hz: 100e6,
        sample_rate_hz: 0.1e6,
        ..RxConfig::default()
    };
    let actual = radio.configure(&cfg).expect("configure");
    let bw = actual.bandwidth_hz.expect("rxsim reports a bandwidth");
    assert_eq!(bw, 75e3);
    let again = radio
        .configure(&RxConfig {
            bandwidth_hz: Some(bw),
            ..cfg
        })
        .unwrap_or_else(|e| panic!("setting back the reported {bw} Hz: {e}"));
    assert_eq!(again.bandwidth_hz, Some(bw));
}

#[test]
fn overflow_is_reported_when_the_reader_stalls() {
    init();
    let mut radio =
        RxRadio::open("driver=rxsim,serial=ovf1,pace=1,buffer_samples=100000").expect("open");
    radio
        .configure(&RxConfig {
            frequency_hz: 100e6,
            sample_rate_hz: 1e6,
            ..RxConfig::default()
        })
        .expect("configure");
    let mut s = radio.rx_stream().expect("stream");
    let _ = read_exact(&mut s, 10_000);
    std::thread::sleep(Duration::from_millis(300));
    let mut buf = vec![Complex::new(0.0, 0.0); 4096];
    assert_eq!(
        s.read(&mut buf, 100_000).expect("read"),
        ReadOutcome::Overflow
    );
    // The stream goes on after the overflow, with the buffered samples first.
    assert!(matches!(s.read(&mut buf, 100_000).expect("read"), ReadOutcome::Samples(n) if n > 0));
}

#[test]
fn rx_stream_is_torn_down_on_drop_and_never_opens_tx() {
    init();
    {
        let mut radio = RxRadio::open("driver=rxsim,serial=ev1,pace=0").expect("open");
        let mut s = radio.rx_stream().expect("stream");
        let _ = read_exact(&mut s, 1000);
        let mut moved = std::thread::spawn(move || {
            let _ = read_exact(&mut s, 1000);
            s
        })
        .join()
        .expect("thread");
        let _ = read_exact(&mut moved, 10);
    }
    let lines = log_lines("ev1");
    // "<ts> pid=<pid> <event> [RX|TX] serial=<serial>"
    let count = |ev: &str| {
        lines
            .iter()
            .filter(|l| {
                l.split_whitespace()
                    .skip(2)
                    .take(ev.split(' ').count())
                    .eq(ev.split(' '))
            })
            .count()
    };
    assert_eq!(count("setupStream RX"), 1, "{lines:?}");
    assert_eq!(count("activateStream RX"), 1, "{lines:?}");
    assert_eq!(count("deactivateStream RX"), 1, "{lines:?}");
    assert_eq!(count("closeStream RX"), 1, "{lines:?}");
    assert_eq!(count("unmake"), 1, "{lines:?}");
    // Timestamps have sub-millisecond resolution and a pid.
    let first = &lines[0];
    let ts = first.split_whitespace().next().expect("timestamp");
    assert_eq!(ts.split('.').nth(1).map(str::len), Some(6), "{first}");
    assert!(
        first.contains(&format!("pid={}", std::process::id())),
        "{first}"
    );
    // Nothing in this binary may ever open a TX stream.
    let all = log_text();
    assert!(!all.lines().any(|l| l.contains(" TX ")), "{all}");
}

/// A conforming driver that sets SOAPY_SDR_HAS_TIME has a hardware clock:
/// rxsim reports hasHardwareTime, its time can be set and read back, and readStream's
/// timeNs is the sample clock on that time base: the first read starts at (or after)
/// the time set before activation, and each read's timeNs is the previous one plus the
/// samples it returned at the sample rate, so it is monotonic.
#[test]
fn hardware_time_is_advertised_and_timestamps_follow_the_sample_clock() {
    init();
    let dev = soapysdr::Device::new("driver=rxsim,serial=time1,pace=1").expect("open");
    assert!(dev.has_hardware_time(None).expect("hasHardwareTime"));
    let rate = 1e6;
    dev.set_sample_rate(soapysdr::Direction::Rx, 0, rate)
        .expect("rate");
    let set = 5_000_000_000i64;
    dev.set_hardware_time(None, set).expect("setHardwareTime");
    let now = dev.get_hardware_time(None).expect("getHardwareTime");
    assert!(
        (set..set + 1_000_000_000).contains(&now),
        "time read back {now}, set {set}"
    );
    let mut rx = dev.rx_stream::<Complex<f32>>(&[0]).expect("stream");
    rx.activate(None).expect("activate");
    let mut buf = vec![Complex::new(0.0f32, 0.0); 4096];
    let mut prev: Option<(i64, usize)> = None;
    for _ in 0..5 {
        let n = rx.read(&mut [&mut buf[..]], 1_000_000).expect("read");
        assert!(n > 0);
        let t = rx.time_ns();
        match prev {
            None => assert!(t >= set, "first sample at {t}, before the time set {set}"),
            Some((pt, pn)) => {
                let want = pt + (pn as f64 / rate * 1e9).round() as i64;
                assert!(
                    (t - want).abs() <= 1,
                    "timeNs {t}, expected {want} after {pn} samples"
                );
            }
        }
        prev = Some((t, n));
    }
    // Paced: the device clock has reached the last read's samples.
    let (last, n) = prev.expect("reads");
    let hw = dev.get_hardware_time(None).expect("getHardwareTime");
    assert!(
        hw >= last,
        "hardware time {hw} behind the last read's timestamp {last} ({n} samples)"
    );
    rx.deactivate(None).expect("deactivate");
}

/// A timed start (`activateStream` with `SOAPY_SDR_HAS_TIME`, as a client syncing two
/// radios asks) is kept, as a radio with a time counter keeps it: nothing arrives before
/// the time (a read times out), the first sample is stamped exactly the time asked, and a
/// time already past is refused as `SOAPY_SDR_TIME_ERROR`. rxsim used to ignore it and
/// stream at once, the first sample stamped 0.5 s before the start asked.
#[test]
fn a_timed_start_begins_at_the_time_asked_and_a_late_one_is_refused() {
    init();
    let dev = soapysdr::Device::new("driver=rxsim,serial=time2,pace=1").expect("open");
    dev.set_sample_rate(soapysdr::Direction::Rx, 0, 1e6)
        .expect("rate");
    let mut rx = dev.rx_stream::<Complex<f32>>(&[0]).expect("stream");
    let mut buf = vec![Complex::new(0.0f32, 0.0); 4096];
    let start = dev.get_hardware_time(None).expect("getHardwareTime") + 500_000_000;
    rx.activate(Some(start)).expect("timed activate");
    let early = rx.read(&mut [&mut buf[..]], 100_000);
    assert!(
        matches!(&early, Err(e) if e.code == soapysdr::ErrorCode::Timeout),
        "a read before the start time: {early:?}"
    );
    let n = rx.read(&mut [&mut buf[..]], 2_000_000).expect("read");
    assert!(n > 0);
    assert_eq!(rx.time_ns(), start, "the first sample's time");
    let hw = dev.get_hardware_time(None).expect("getHardwareTime");
    assert!(
        hw >= start,
        "samples delivered at device time {hw}, before the start {start}"
    );
    rx.deactivate(None).expect("deactivate");
    let late = dev.get_hardware_time(None).expect("getHardwareTime") - 1_000_000;
    let err = rx
        .activate(Some(late))
        .expect_err("a start time already past");
    assert_eq!(err.code, soapysdr::ErrorCode::TimeError, "{err:?}");
}

/// A burst asked at activation (`SOAPY_SDR_END_BURST` with numElems, a USRP's "num samps
/// and done") is kept as a radio with stream commands keeps it, seen by another client
/// (Debian's python3-soapysdr, whose `activateStream` takes flags and numElems, which the
/// Rust binding does not): exactly numElems samples, the read that ends them flagged
/// `END_BURST`, then reads time out until the next activation; what rxsim does not model
/// (numElems without `END_BURST`, another flag) is refused with `SOAPY_SDR_NOT_SUPPORTED`.
/// A timed stop (`deactivateStream` with `SOAPY_SDR_HAS_TIME`) is kept alike: the samples
/// before its time, the last read flagged `END_BURST`, then timeouts.
/// rxsim used to ignore all of it: a burst of 1000 streamed 16384 samples a read for
/// ever, and a timed stop stopped the stream at once.
#[test]
fn a_burst_or_a_timed_stop_ends_the_stream_where_asked_and_what_rxsim_cannot_keep_is_refused() {
    init();
    // Debian's python3 (python3-soapysdr is built for it): scripts/setup.sh --tests.
    let out = std::process::Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(
            r#"
import SoapySDR, numpy as np
from SoapySDR import SOAPY_SDR_RX as RX, SOAPY_SDR_CF32, SOAPY_SDR_END_BURST as END, SOAPY_SDR_ONE_PACKET, SOAPY_SDR_HAS_TIME
d = SoapySDR.Device(dict(driver="rxsim", serial="burst1", pace="1"))
d.setSampleRate(RX, 0, 1e6)
s = d.setupStream(RX, SOAPY_SDR_CF32); buf = np.zeros(d.getStreamMTU(s), np.complex64)
def burst(flags, n, reads):
    a = d.activateStream(s, flags, 0, n)
    got = [d.readStream(s, [buf], len(buf), timeoutUs=200000) for _ in range(reads)]
    d.deactivateStream(s)
    print(a, sum(r.ret for r in got if r.ret > 0), [r.ret if r.ret < 0 else int(r.flags & END != 0) for r in got])
burst(END, 1000, 3)
burst(END, 20000, 3)
burst(0, 0, 2)
print(d.activateStream(s, 0, 0, 1000)); d.deactivateStream(s)
print(d.activateStream(s, SOAPY_SDR_ONE_PACKET, 0, 0)); d.deactivateStream(s)
d.activateStream(s)
r = d.readStream(s, [buf], len(buf), timeoutUs=200000)
n, got = r.ret, []
stop = d.deactivateStream(s, SOAPY_SDR_HAS_TIME, r.timeNs + 50000000)
for _ in range(8):
    r = d.readStream(s, [buf], len(buf), timeoutUs=200000)
    got.append(r.ret if r.ret < 0 else int(r.flags & END != 0)); n += max(r.ret, 0)
    if r.ret < 0: break
print(stop, n, got[-3:], d.deactivateStream(s, END, 0))
d.deactivateStream(s)
d.closeStream(s)
"#,
        )
        .output()
        .expect("run /usr/bin/python3 (scripts/setup.sh --tests installs python3-soapysdr)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python3-soapysdr client failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            // 1000 in one read flagged END_BURST, then timeouts (-1).
            "0 1000 [1, -1, -1]",
            // 16384 (the MTU) then the 3616 left, the last flagged.
            "0 20000 [0, 1, -1]",
            // Continuous: never flagged.
            "0 32768 [0, 0]",
            "-5",
            "-5",
            // A stop 50 ms after the first sample: 50 000 samples at 1 MS/s (16384 × 3
            // then 848, flagged), then a timeout; a stop with END_BURST refused.
            "0 50000 [0, 1, -1] -5",
        ],
        "{text}"
    );
}

/// A declared setting reads back its current value, as a driver's does: `biastee`
/// (declared a bool, default `false`) reads `false` before any write (rxsim read back
/// an empty string), then what was written.
#[test]
fn a_declared_setting_reads_its_default_then_what_was_written() {
    init();
    let dev = soapysdr::Device::new("driver=rxsim,serial=set1").expect("open");
    assert_eq!(dev.read_setting("biastee").expect("read"), "false");
    dev.write_setting("biastee", "true").expect("write");
    assert_eq!(dev.read_setting("biastee").expect("read"), "true");
}

/// Gains read back are what a real radio would set: the LNA advertises
/// 8 dB steps, so 13 dB on it (or a total of 13) must not read back an LNA of 13.
/// Steps truncate, as libhackrf does; the total keeps its 1 dB steps via the VGA.
#[test]
fn gains_are_truncated_to_the_advertised_steps() {
    init();
    let dev = soapysdr::Device::new("driver=rxsim,serial=gain1,pace=0").expect("open");
    let rx = soapysdr::Direction::Rx;
    let step = dev
        .gain_element_range(rx, 0, "LNA")
        .expect("LNA range")
        .step;
    assert_eq!(step, 8.0);
    dev.set_gain_element(rx, 0, "LNA", 13.0).expect("set LNA");
    assert_eq!(dev.gain_element(rx, 0, "LNA").expect("LNA"), 8.0);
    dev.set_gain_element(rx, 0, "VGA", 7.6).expect("set VGA");
    assert_eq!(dev.gain_element(rx, 0, "VGA").expect("VGA"), 7.0);
    for (total, lna, vga) in [(13.0, 8.0, 5.0), (39.0, 32.0, 7.0), (59.5, 40.0, 19.0)] {
        dev.set_gain(rx, 0, total).expect("set gain");
        let got = (
            dev.gain(rx, 0).expect("gain"),
            dev.gain_element(rx, 0, "LNA").expect("LNA"),
            dev.gain_element(rx, 0, "VGA").expect("VGA"),
        );
        assert_eq!(got, (total.floor(), lna, vga), "total {total}");
        assert_eq!(got.1 % step, 0.0, "LNA {} off its {step} dB step", got.1);
    }
}

/// The GSM scene against the standard's definitions, by an independent computation
/// (instantaneous frequency, no estimator): FCCH bursts are 148 bits of a tone at
/// +Rb/4 = +67.708 kHz, Rb = 270.833 kbit/s, starting each in timeslot 0 of frames
/// 0, 10, 20, 30 and 40 of the 51-frame multiframe (frame = 1250 bits); with a radio
/// error the tone lands where the LO and the sample clock put it.
#[test]
fn gsm_scene_puts_fcch_bursts_where_the_standard_does() {
    init();
    const RB: f64 = 1_625_000.0 / 6.0;
    let rate = 1e6;
    let carrier = 935.2e6;
    for (serial, ppm) in [("gsm0", 0.0), ("gsm1", 20.0)] {
        let args = format!(
            "driver=rxsim,serial={serial},pace=0,noise_dbfs=-80,gsm_freq={carrier},gsm_snr_db=60,ppm={ppm}"
        );
        let mut radio = RxRadio::open(&args).expect("open");
        radio
            .configure(&RxConfig {
                frequency_hz: carrier,
                sample_rate_hz: rate,
                ..RxConfig::default()
            })
            .expect("configure");
        let mut s = radio.rx_stream().expect("stream");
        // Two multiframes and a bit.
        let x = read_exact(&mut s, 500_000);
        let e = ppm * 1e-6;
        let tone = (carrier + RB / 4.0 - carrier * (1.0 + e)) / (1.0 + e);
        // Instantaneous frequency, averaged over 16 samples.
        let inst: Vec<f64> = x
            .windows(2)
            .map(|w| f64::from((w[1] * w[0].conj()).arg()) * rate / (2.0 * std::f64::consts::PI))
            .collect();
        let smooth: Vec<f64> = inst
            .windows(16)
            .map(|w| w.iter().sum::<f64>() / 16.0)
            .collect();
        let mut runs = Vec::new();
        let mut start = None;
        for (i, f) in smooth.iter().enumerate() {
            let on = (f - tone).abs() < 1_000.0;
            match (on, start) {
                (true, None) => start = Some(i),
                (false, Some(a)) => {
                    if i - a >= 200 {
                        runs.push((a, i));
                    }
                    start = None;
                }
                _ => {}
            }
        }
        assert!(
            runs.len() >= 9,
            "{ppm} ppm: {} bursts in 0.5 s: {runs:?}",
            runs.len()
        );
        let bits_per_sample = RB / (rate * (1.0 + e));
        for &(a, b) in &runs {
            // A steady run of the smoothed frequency: the burst less the 16-sample
            // average's edge; 148 bits = 546.5 samples.
            let bits = (b - a + 16) as f64 * bits_per_sample;
            assert!(
                (bits - 148.0).abs() < 6.0,
                "{ppm} ppm: burst of {bits:.1} bits"
            );
            // Starts on a frame boundary of frames 0/10/20/30/40 (mod 51).
            let at_bits = a as f64 * bits_per_sample;
            let frame = (at_bits / 1250.0).round();
            assert!(
                (at_bits - frame * 1250.0).abs() < 6.0,
                "{ppm} ppm: burst at bit {at_bits:.1} is not on a frame boundary"
            );
            let fn51 = frame as u64 % 51;
            assert!(
                [0, 10, 20, 30, 40].contains(&fn51),
                "{ppm} ppm: FCCH in frame {fn51}"
            );
            // The tone: the slope of the unwrapped phase (least squares) inside the burst.
            let mut ph = 0.0;
            let pts: Vec<(f64, f64)> = (a + 40..b - 40)
                .map(|i| {
                    ph += inst[i];
                    (i as f64, ph)
                })
                .collect();
            let n = pts.len() as f64;
            let (mx, my) = (
                pts.iter().map(|p| p.0).sum::<f64>() / n,
                pts.iter().map(|p| p.1).sum::<f64>() / n,
            );
            let slope = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>()
                / pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
            assert!(
                (slope - tone).abs() < 1.0,
                "{ppm} ppm: tone at {slope:.1} Hz, want {tone:.1}"
            );
        }
    }
}

/// An X310-class rate: rxsim advertises and accepts up to 250 MS/s (reading back what
/// it was set to, with the default bandwidth 0.75 × rate inside its range); above that
/// it refuses, naming the setting, the value asked and the range it supports.
#[test]
fn rxsim_accepts_250_msps_and_refuses_above_naming_the_range() {
    init();
    let mut radio = RxRadio::open("driver=rxsim,serial=x310,pace=0").expect("open");
    assert_eq!(radio.probe().sample_rate_ranges_hz, vec![[0.1e6, 250e6]]);
    for rate in [122.88e6, 200e6, 250e6] {
        let a = radio
            .configure(&RxConfig {
                frequency_hz: 1e9,
                sample_rate_hz: rate,
                ..RxConfig::default()
            })
            .unwrap_or_else(|e| panic!("{rate} S/s: {e}"));
        assert_eq!(a.sample_rate_hz, rate);
        assert_eq!(a.bandwidth_hz, Some(0.75 * rate));
    }
    // Streams at the top rate in both formats.
    let x = read_exact(&mut radio.rx_stream().expect("cf32 stream"), 100_000);
    assert!(x.iter().any(|c| c.norm() > 0.0));
    let mut s = radio.rx_stream_ci16().expect("cs16 stream");
    let mut q = vec![Complex::new(0i16, 0); 16384];
    assert!(matches!(
        s.read_native(&mut q, 1_000_000).expect("read"),
        ReadOutcome::Samples(n) if n > 0
    ));
    drop(s);
    match radio.configure(&RxConfig {
        frequency_hz: 1e9,
        sample_rate_hz: 250.001e6,
        ..RxConfig::default()
    }) {
        Err(e @ Error::Unsupported { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains("sample_rate_hz 250001000")
                    && m.contains("supported: 100000..250000000"),
                "{m}"
            );
        }
        other => panic!("expected an unsupported rate, got {other:?}"),
    }
}

/// The tone's level (dBFS) and what is left beside it (dBc) in 0.25 s of the noise-free
/// stream of `args` at `rate` for a radio `ppm` off: read in uneven reads, mixed down
/// by the tone's exact frequency (f64 phase), low-passed to 8 kHz by a triangular
/// kernel of two 125 µs blocks; what is left is the power beside the tone's mean.
fn beside_the_tone(args: &str, rate: f64, ppm: f64) -> (f64, f64) {
    let reads = [1000, 4097, 16384, 333, 65536, 7];
    let mut radio = RxRadio::open(&format!(
        "{args},pace=0,tone_hz=100.1e6,tone_dbfs=-20,noise_dbfs=-1000,ppm={ppm}"
    ))
    .expect("open");
    radio
        .configure(&RxConfig {
            frequency_hz: 100e6,
            sample_rate_hz: rate,
            ..RxConfig::default()
        })
        .expect("configure");
    let mut s = radio.rx_stream().expect("stream");
    let cyc = expected(ppm) / rate;
    let m = (rate / 8000.0) as usize;
    let blocks = 2001;
    // Per block of m samples, the sums under the kernel's rising and falling half.
    let mut rise = vec![Complex::<f64>::new(0.0, 0.0); blocks];
    let mut fall = rise.clone();
    let mut buf = vec![Complex::new(0f32, 0.0); 65536];
    let (mut at, mut r) = (0usize, 0);
    while at < m * blocks {
        let want = reads[r % reads.len()].min(m * blocks - at);
        r += 1;
        let k = match s.read(&mut buf[..want], 1_000_000).expect("read") {
            ReadOutcome::Samples(k) => k,
            other => panic!("unexpected {other:?}"),
        };
        for (j, x) in buf[..k].iter().enumerate() {
            let n = at + j;
            let ph = -2.0 * std::f64::consts::PI * (cyc * n as f64).fract();
            let z = Complex::new(f64::from(x.re), f64::from(x.im)) * Complex::from_polar(1.0, ph);
            let w = ((n % m) as f64 + 0.5) / m as f64;
            rise[n / m] += z * w;
            fall[n / m] += z * (1.0 - w);
        }
        at += k;
    }
    let y: Vec<Complex<f64>> = (0..blocks - 1).map(|b| rise[b] + fall[b + 1]).collect();
    let mean = y.iter().sum::<Complex<f64>>() / y.len() as f64;
    let left = y.iter().map(|v| (v - mean).norm_sqr()).sum::<f64>() / y.len() as f64;
    (
        20.0 * (mean.norm() / m as f64).log10(),
        10.0 * (left / mean.norm_sqr()).log10(),
    )
}

/// rxsim's reference tone is clean beside itself, as a signal generator's is: what is
/// left beside it ([`beside_the_tone`]) is below −130 dBc, so a spur within ±4 kHz, a
/// slow drift or a phase step at a read boundary would show at its own level — as a
/// CW emitter 92 dB down 6 Hz away does (the live captures' CLKIN check once listed
/// lines like that beside this tone; they were its own window's sidelobes, not
/// rxsim's: docs/benchmarks.md#live-capture). What is left of the clean tone is the
/// 16-bit table's phase truncation (−92 dBc in all, its lines far from the tone)
/// leaking through the kernel: −159 to −231 dBc here.
#[test]
fn the_reference_tone_has_no_spur_beside_it() {
    init();
    for (i, (rate, ppm)) in [(61.44e6, 0.0), (61.44e6, 2.5), (20e6, -1.3)]
        .into_iter()
        .enumerate()
    {
        let (level, dbc) = beside_the_tone(&format!("driver=rxsim,serial=pure{i}"), rate, ppm);
        eprintln!("{rate} S/s, {ppm} ppm: tone {level:.2} dBFS, beside it {dbc:.1} dBc");
        assert!((level + 20.0).abs() < 0.01, "{level} dBFS");
        assert!(
            dbc < -130.0,
            "{rate} S/s, {ppm} ppm: {dbc:.1} dBc beside the tone"
        );
    }
    let (_, dbc) = beside_the_tone(
        "driver=rxsim,serial=pure3,emitters=100.100006e6:-112",
        61.44e6,
        0.0,
    );
    eprintln!("with a spur 92 dB down 6 Hz away: {dbc:.1} dBc");
    assert!((-100.0..-90.0).contains(&dbc), "{dbc:.1} dBc");
}
