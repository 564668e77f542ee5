//! The `rx_sweep` step (docs/operator.md#sweeps-rxnode-sweep), per-element gains, the sweep grid and the RX
//! policy check of a sweep.
use crate::error::{Error, Issue};
use crate::policy::{exceeds, RxPolicy};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An RX gain: one overall figure, or dB per named gain element of the device
/// (`{"LNA": 24, "VGA": 20}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum GainSpec {
    /// Overall gain, dB (the driver distributes it).
    Total(f64),
    /// dB per gain element, by the device's element names.
    Elements(BTreeMap<String, f64>),
}

impl GainSpec {
    /// The overall gain: the figure, or the sum of the elements.
    pub fn total(&self) -> f64 {
        match self {
            GainSpec::Total(g) => *g,
            GainSpec::Elements(m) => m.values().sum(),
        }
    }

    /// Problems with the value itself (not with a device or policy), each naming it.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            GainSpec::Total(g) => {
                if !g.is_finite() {
                    out.push(format!("gain_db {g} must be finite"));
                }
            }
            GainSpec::Elements(m) => {
                if m.is_empty() {
                    out.push("gain_db {} names no gain element".to_owned());
                }
                if m.len() > 16 {
                    out.push(format!("gain_db names {} elements; at most 16", m.len()));
                }
                for (k, v) in m {
                    let name = crate::header::truncate(k, 40);
                    if k.trim().is_empty()
                        || k.len() > 32
                        || k.chars().any(|c| c.is_control() || c == ',' || c == '=')
                    {
                        out.push(format!(
                            "gain_db element name {name:?} is not a gain element name"
                        ));
                    }
                    if !v.is_finite() {
                        out.push(format!("gain_db.{name} {v} must be finite"));
                    }
                }
            }
        }
        out
    }
}

impl<'de> Deserialize<'de> for GainSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = GainSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a gain in dB or an object of gain element to dB, e.g. {\"LNA\": 24, \"VGA\": 20}",
                )
            }
            fn visit_f64<E>(self, v: f64) -> Result<GainSpec, E> {
                Ok(GainSpec::Total(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<GainSpec, E> {
                Ok(GainSpec::Total(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<GainSpec, E> {
                Ok(GainSpec::Total(v as f64))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<GainSpec, A::Error> {
                let mut m = BTreeMap::new();
                while let Some((k, v)) = a.next_entry::<String, f64>()? {
                    if m.insert(k.clone(), v).is_some() {
                        return Err(serde::de::Error::custom(format!(
                            "gain element {:?} given twice",
                            crate::header::truncate(&k, 40)
                        )));
                    }
                }
                Ok(GainSpec::Elements(m))
            }
        }
        d.deserialize_any(V)
    }
}

/// The fields of an `rx_sweep` step as the plan names them (docs/operator.md#sweeps-rxnode-sweep), in
/// [`RxSweepStep`]'s order: the one list the schema and messages are checked against.
pub const RX_SWEEP_FIELDS: [&str; 17] = [
    "device",
    "start_hz",
    "stop_hz",
    "bin_hz",
    "sample_rate_hz",
    "gain_db",
    "dwell_s",
    "settle_s",
    "crop",
    "repeats",
    "interval_s",
    "apply_calibration",
    "settings",
    "stream_args",
    "agc",
    "ppm",
    "channel",
];

/// What a sweep asks for, from the plan step (or the operator's flags) to the hop
/// planner: the band, the bin, the sample rate, the time per hop, the crop and the
/// passes. Its one validator is [`SweepConfig::problems`]; the defaults are the
/// `DEFAULT_*` constants (docs/operator.md#sweeps-rxnode-sweep).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepConfig {
    /// Lowest frequency of the band, Hz.
    pub start_hz: f64,
    /// Highest frequency of the band, Hz.
    pub stop_hz: f64,
    /// Widest acceptable bin, Hz.
    pub bin_hz: f64,
    /// Sample rate per hop, S/s (the hop plan uses the rate the radio really set).
    pub sample_rate_hz: f64,
    /// Samples analysed per hop, seconds (at least one FFT is analysed).
    pub dwell_s: f64,
    /// Samples discarded after each retune, seconds.
    pub settle_s: f64,
    /// Fraction of each hop's band dropped (half at each edge), 0 ≤ crop < 0.95.
    pub crop: f64,
    /// Passes over the band, 1..=[`SweepConfig::MAX_REPEATS`].
    pub repeats: u32,
    /// Seconds from one pass's start to the next's (rtl_power's `-i`): the radio
    /// idles, its stream stopped, between passes. `None`: the passes follow each
    /// other at once. A pass longer than the interval starts the next at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_s: Option<f64>,
}

/// One problem with a sweep's values: the field, and a message naming it and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepProblem {
    /// The field (`repeats`, `bin_hz`, …).
    pub field: &'static str,
    /// What is wrong, naming the field and its value.
    pub message: String,
}

impl std::fmt::Display for SweepProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl SweepConfig {
    /// Default sample rate per hop, S/s.
    pub const DEFAULT_SAMPLE_RATE_HZ: f64 = 10e6;
    /// Default dwell per hop, seconds.
    pub const DEFAULT_DWELL_S: f64 = 0.05;
    /// Default settle time after each retune, seconds.
    pub const DEFAULT_SETTLE_S: f64 = 0.01;
    /// Default crop.
    pub const DEFAULT_CROP: f64 = 0.25;
    /// Default passes over the band.
    pub const DEFAULT_REPEATS: u32 = 1;
    /// Most passes over the band.
    pub const MAX_REPEATS: u32 = 10_000;
    /// Longest interval between passes, seconds (a day).
    pub const MAX_INTERVAL_S: f64 = 86_400.0;

    /// The band and the bin, every other field at its default.
    pub fn new(start_hz: f64, stop_hz: f64, bin_hz: f64) -> Self {
        SweepConfig {
            start_hz,
            stop_hz,
            bin_hz,
            sample_rate_hz: Self::DEFAULT_SAMPLE_RATE_HZ,
            dwell_s: Self::DEFAULT_DWELL_S,
            settle_s: Self::DEFAULT_SETTLE_S,
            crop: Self::DEFAULT_CROP,
            repeats: Self::DEFAULT_REPEATS,
            interval_s: None,
        }
    }

    /// The frequency grid at `rate` (the requested rate, or the one the radio set);
    /// `None` when the numbers are unusable.
    pub fn grid_at(&self, rate: f64) -> Option<SweepGrid> {
        sweep_grid(self.start_hz, self.stop_hz, self.bin_hz, rate, self.crop)
    }

    /// Hops per pass at the requested rate (`None` when the numbers are unusable).
    pub fn hops(&self) -> Option<usize> {
        self.grid_at(self.sample_rate_hz).map(|g| g.hops)
    }

    /// One pass on the radio: hops × (settle + dwell), seconds. The dwell counted
    /// is what the radio really runs: at least one FFT (a dwell asked shorter than
    /// `fft / rate` cannot make the policy under-count).
    pub fn pass_s(&self) -> Option<f64> {
        let g = self.grid_at(self.sample_rate_hz)?;
        let dwell = self.dwell_s.max(g.fft_size as f64 / self.sample_rate_hz);
        Some(g.hops as f64 * (self.settle_s + dwell))
    }

    /// Total time of the sweep, seconds: pass × repeats, or with an interval
    /// (repeats − 1) × max(interval, pass) + pass, the wall time from the first
    /// pass's start to the last one's end.
    pub fn duration_s(&self) -> Option<f64> {
        let pass = self.pass_s()?;
        let n = f64::from(self.repeats);
        Some(match self.interval_s {
            Some(i) if i.is_finite() => (n - 1.0).max(0.0) * i.max(pass) + pass,
            _ => pass * n,
        })
    }

    /// Every problem with the values, each naming its field and value: each value on
    /// its own, the bin against the rate, and the whole sweep's size at the
    /// requested rate. The one validator of a sweep, for the plan, the command and
    /// the hop planner.
    pub fn problems(&self) -> Vec<SweepProblem> {
        let mut out = Vec::new();
        self.value_problems(&mut out);
        self.resolution_problems(&mut out);
        out.extend(self.size_problems_at(self.sample_rate_hz));
        out
    }

    /// The first of [`SweepConfig::problems`], if any.
    pub fn validate(&self) -> Result<(), SweepProblem> {
        match self.problems().into_iter().next() {
            Some(p) => Err(p),
            None => Ok(()),
        }
    }

    /// Each value on its own: positive, finite, in range.
    fn value_problems(&self, out: &mut Vec<SweepProblem>) {
        let mut bad = |field: &'static str, message: String| {
            out.push(SweepProblem { field, message });
        };
        for (field, v) in [
            ("start_hz", self.start_hz),
            ("stop_hz", self.stop_hz),
            ("bin_hz", self.bin_hz),
            ("sample_rate_hz", self.sample_rate_hz),
            ("dwell_s", self.dwell_s),
        ] {
            if !(v.is_finite() && v > 0.0) {
                bad(
                    field,
                    format!("{field} must be a positive finite number, got {v}"),
                );
            }
        }
        for (field, v, q) in [
            ("start_hz", self.start_hz, crate::Quantity::Frequency),
            ("stop_hz", self.stop_hz, crate::Quantity::Frequency),
            (
                "sample_rate_hz",
                self.sample_rate_hz,
                crate::Quantity::SampleRate,
            ),
        ] {
            if let Some(why) = q.implausible(v) {
                bad(field, format!("{field} {why}"));
            }
        }
        if !(self.settle_s.is_finite() && self.settle_s >= 0.0) {
            bad(
                "settle_s",
                format!(
                    "settle_s must be a finite number ≥ 0, got {}",
                    self.settle_s
                ),
            );
        }
        if self.start_hz.is_finite() && self.stop_hz.is_finite() && self.stop_hz <= self.start_hz {
            bad(
                "stop_hz",
                format!(
                    "stop_hz {} must be above start_hz {}",
                    self.stop_hz, self.start_hz
                ),
            );
        }
        if !(self.crop.is_finite() && (0.0..0.95).contains(&self.crop)) {
            bad("crop", format!("crop {} must be in [0, 0.95)", self.crop));
        }
        if let Some(i) = self.interval_s {
            if !(i.is_finite() && i > 0.0 && i <= Self::MAX_INTERVAL_S) {
                bad(
                    "interval_s",
                    format!(
                        "interval_s {i} must be a finite number in (0, {}]",
                        Self::MAX_INTERVAL_S
                    ),
                );
            }
        }
        if self.repeats == 0 || self.repeats > Self::MAX_REPEATS {
            bad(
                "repeats",
                format!(
                    "repeats {} must be in 1..={}",
                    self.repeats,
                    Self::MAX_REPEATS
                ),
            );
        }
    }

    /// The bin against the sample rate: at least 16 bins per hop, an FFT of at
    /// most 2²⁰ points.
    fn resolution_problems(&self, out: &mut Vec<SweepProblem>) {
        if self.bin_hz.is_finite()
            && self.sample_rate_hz.is_finite()
            && self.sample_rate_hz > 0.0
            && self.bin_hz > 0.0
        {
            if self.bin_hz > self.sample_rate_hz / 16.0 {
                out.push(SweepProblem {
                    field: "bin_hz",
                    message: format!(
                        "bin_hz {} is wider than sample_rate_hz / 16 ({})",
                        self.bin_hz,
                        self.sample_rate_hz / 16.0
                    ),
                });
            } else if self.sample_rate_hz / self.bin_hz > FFT_SIZE_MAX as f64 {
                out.push(SweepProblem {
                    field: "bin_hz",
                    message: format!(
                        "bin_hz {} needs an FFT over {FFT_SIZE_MAX} points at {} S/s",
                        self.bin_hz, self.sample_rate_hz
                    ),
                });
            }
        }
    }

    /// The whole sweep at `rate`: values kept and hops, times the repeats, within
    /// bounds. The hop planner asks again at the rate the radio really set.
    pub fn size_problems_at(&self, rate: f64) -> Vec<SweepProblem> {
        let mut out = Vec::new();
        let Some(g) = self.grid_at(rate) else {
            return out;
        };
        if (g.total_bins as u64).saturating_mul(u64::from(self.repeats)) > MAX_SWEEP_VALUES {
            out.push(SweepProblem {
                field: "bin_hz",
                message: format!(
                    "{} bins × {} repeats is more than {MAX_SWEEP_VALUES} values (widen bin_hz, narrow the band or sweep fewer times)",
                    g.total_bins, self.repeats
                ),
            });
        }
        if (g.hops as u64).saturating_mul(u64::from(self.repeats)) > MAX_SWEEP_HOPS {
            out.push(SweepProblem {
                field: "stop_hz",
                message: format!(
                    "{} hops × {} repeats is more than {MAX_SWEEP_HOPS}",
                    g.hops, self.repeats
                ),
            });
        }
        out
    }
}

/// `rx_sweep` step (docs/operator.md#sweeps-rxnode-sweep). In the plan its fields
/// are flat ([`RX_SWEEP_FIELDS`]); the sweep's own values are one [`SweepConfig`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "RxSweepFields", into = "RxSweepFields")]
pub struct RxSweepStep {
    /// SoapySDR device args.
    pub device: String,
    /// The band, bin, rate, time per hop, crop and passes.
    pub sweep: SweepConfig,
    /// RX gain, overall or per element.
    pub gain_db: Option<GainSpec>,
    /// Tune every hop with the radio's fresh frequency calibration from
    /// `.local/calibration.json`; a missing or stale one blocks the step.
    pub apply_calibration: bool,
    /// The radio's own settings, stream args, AGC and manual ppm
    /// (docs/operator.md#radio-settings).
    pub radio: crate::RadioSettings,
}

/// An `rx_sweep` step as the plan writes it: every field flat, in
/// [`RX_SWEEP_FIELDS`]' order, the defaults [`SweepConfig`]'s.
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RxSweepFields {
    device: String,
    start_hz: f64,
    stop_hz: f64,
    bin_hz: f64,
    #[serde(default = "default_rate")]
    sample_rate_hz: f64,
    #[serde(default)]
    gain_db: Option<GainSpec>,
    #[serde(default = "default_dwell")]
    dwell_s: f64,
    #[serde(default = "default_settle")]
    settle_s: f64,
    #[serde(default = "default_crop")]
    crop: f64,
    #[serde(default = "default_repeats")]
    repeats: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    interval_s: Option<f64>,
    #[serde(default)]
    apply_calibration: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    settings: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    stream_args: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    agc: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ppm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    channel: Option<usize>,
}

impl From<RxSweepFields> for RxSweepStep {
    fn from(f: RxSweepFields) -> Self {
        RxSweepStep {
            device: f.device,
            sweep: SweepConfig {
                start_hz: f.start_hz,
                stop_hz: f.stop_hz,
                bin_hz: f.bin_hz,
                sample_rate_hz: f.sample_rate_hz,
                dwell_s: f.dwell_s,
                settle_s: f.settle_s,
                crop: f.crop,
                repeats: f.repeats,
                interval_s: f.interval_s,
            },
            gain_db: f.gain_db,
            apply_calibration: f.apply_calibration,
            radio: crate::RadioSettings {
                settings: f.settings,
                stream_args: f.stream_args,
                agc: f.agc,
                ppm: f.ppm,
                channel: f.channel,
            },
        }
    }
}

impl From<RxSweepStep> for RxSweepFields {
    fn from(s: RxSweepStep) -> Self {
        let c = s.sweep;
        RxSweepFields {
            device: s.device,
            start_hz: c.start_hz,
            stop_hz: c.stop_hz,
            bin_hz: c.bin_hz,
            sample_rate_hz: c.sample_rate_hz,
            gain_db: s.gain_db,
            dwell_s: c.dwell_s,
            settle_s: c.settle_s,
            crop: c.crop,
            repeats: c.repeats,
            interval_s: c.interval_s,
            apply_calibration: s.apply_calibration,
            settings: s.radio.settings,
            stream_args: s.radio.stream_args,
            agc: s.radio.agc,
            ppm: s.radio.ppm,
            channel: s.radio.channel,
        }
    }
}

fn default_rate() -> f64 {
    SweepConfig::DEFAULT_SAMPLE_RATE_HZ
}
fn default_dwell() -> f64 {
    SweepConfig::DEFAULT_DWELL_S
}
fn default_settle() -> f64 {
    SweepConfig::DEFAULT_SETTLE_S
}
fn default_crop() -> f64 {
    SweepConfig::DEFAULT_CROP
}
fn default_repeats() -> u32 {
    SweepConfig::DEFAULT_REPEATS
}

/// Fewest FFT points any capture, analysis or sweep uses.
pub const FFT_SIZE_MIN: usize = 16;
/// Most FFT points any capture, analysis or sweep uses (2²⁰).
pub const FFT_SIZE_MAX: usize = 1 << 20;

/// Whether `n` is an FFT size rxnode runs: any size in
/// [`FFT_SIZE_MIN`]`..=`[`FFT_SIZE_MAX`] (powers of two take the SIMD kernels, other
/// sizes the portable FFT).
pub fn fft_size_ok(n: usize) -> bool {
    (FFT_SIZE_MIN..=FFT_SIZE_MAX).contains(&n)
}

/// A sweep's frequency grid at one sample rate. Grid bin `i` is centred at
/// `start_hz + i · bin`, `bin = rate / fft_size`; hop `h` keeps grid bins
/// `h·kept_bins .. (h+1)·kept_bins`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepGrid {
    /// FFT points per hop.
    pub fft_size: usize,
    /// Grid bins each hop keeps: the centre `1 − crop` of its band (an even number).
    pub kept_bins: usize,
    /// Bins of the whole grid, `[start, stop)`.
    pub total_bins: usize,
    /// Hops per pass: ⌈total_bins / kept_bins⌉.
    pub hops: usize,
}

/// `x` as the integer it is within rounding (`rate / bin` of `10e6 / 10e3`), else `None`.
fn near_integer(x: f64) -> Option<f64> {
    let r = x.round();
    ((x - r).abs() <= 1e-9 * x.abs().max(1.0)).then_some(r)
}

/// The sweep grid at one sample rate. The bin is exactly `bin_hz` whenever
/// `rate / bin_hz` is an integer (an FFT of that many points, whatever its
/// factors); otherwise the FFT is the next size up, so the bin is the widest no
/// wider than asked. The grid has ⌈band / bin⌉ bins, so a pass takes the fewest
/// hops, ⌈band / (rate × (1 − crop))⌉ up to the even rounding of the kept bins.
/// `None` when the inputs are not usable numbers (see [`validate_sweep_step`]).
pub fn sweep_grid(
    start_hz: f64,
    stop_hz: f64,
    bin_hz: f64,
    rate: f64,
    crop: f64,
) -> Option<SweepGrid> {
    let ok = [start_hz, stop_hz, bin_hz, rate]
        .iter()
        .all(|v| v.is_finite() && *v > 0.0)
        && stop_hz > start_hz
        && crop.is_finite()
        && (0.0..0.95).contains(&crop)
        && rate / bin_hz <= FFT_SIZE_MAX as f64;
    if !ok {
        return None;
    }
    let ratio = rate / bin_hz;
    let fft = near_integer(ratio)
        .unwrap_or_else(|| ratio.ceil())
        .max(FFT_SIZE_MIN as f64) as usize;
    let fft = fft.min(FFT_SIZE_MAX);
    let bin = rate / fft as f64;
    let mut kept = ((fft as f64) * (1.0 - crop)).floor() as usize;
    kept -= kept % 2;
    let kept = kept.max(2);
    let bins = (stop_hz - start_hz) / bin;
    let total = near_integer(bins).unwrap_or_else(|| bins.ceil()).max(1.0);
    if total > 1e12 {
        return None;
    }
    let total = total as usize;
    Some(SweepGrid {
        fft_size: fft,
        kept_bins: kept,
        total_bins: total,
        hops: total.div_ceil(kept),
    })
}

/// Most hops × repeats a sweep may ask for.
pub const MAX_SWEEP_HOPS: u64 = 1_000_000;

/// Most bins × repeats a sweep may measure (each is kept for the CSV): 2²⁴, e.g.
/// 70 MHz–6 GHz at 10 kHz bins 27 times. Bounds the memory a plan can make us use.
pub const MAX_SWEEP_VALUES: u64 = 1 << 24;

impl RxSweepStep {
    /// Hops per pass at the requested rate (`None` when the numbers are unusable).
    pub fn hops(&self) -> Option<usize> {
        self.sweep.hops()
    }

    /// Total time on the radio, seconds ([`SweepConfig::duration_s`]).
    pub fn duration_s(&self) -> Option<f64> {
        self.sweep.duration_s()
    }

    /// Every problem of the step's own values, as plan issues (line of the fence).
    pub(crate) fn check(&self, line: usize, n: usize, issues: &mut Vec<Issue>) {
        let mut bad = SweepIssues { line, n, issues };
        for p in self.sweep.problems() {
            bad.push(p.field, p.message);
        }
        if let Some(g) = &self.gain_db {
            for p in g.problems() {
                bad.push("gain_db", p);
            }
        }
        for (field, p) in self.radio.problems() {
            bad.push(field, p);
        }
        if self.radio.ppm.is_some() && self.apply_calibration {
            bad.push(
                "ppm",
                "ppm and apply_calibration both correct the frequency: give one".to_owned(),
            );
        }
    }
}

/// Where a sweep step's problems go: plan issues of step `n` on the fence line.
struct SweepIssues<'a> {
    line: usize,
    n: usize,
    issues: &'a mut Vec<Issue>,
}

impl SweepIssues<'_> {
    fn push(&mut self, field: &str, msg: String) {
        let n = self.n;
        self.issues.push(Issue::new(
            Some(self.line),
            Some(field),
            format!("rx-plan step {n}: {msg}"),
        ));
    }
}

/// Every problem of a sweep step's own values (the operator command's checks),
/// each naming its field and value.
pub fn validate_sweep_step(step: &RxSweepStep) -> Vec<String> {
    let mut issues = Vec::new();
    step.check(0, 0, &mut issues);
    issues
        .into_iter()
        .map(|i| i.message.trim_start_matches("rx-plan step 0: ").to_owned())
        .collect()
}

/// Check a gain against the RX policy: the overall figure, or each element and
/// their sum. Under `rx.max_gain_db` a gain must be given.
pub fn check_rx_gain(gain: Option<&GainSpec>, policy: &RxPolicy) -> Result<(), Error> {
    if let Some(g) = gain {
        if let Some(p) = g.problems().into_iter().next() {
            return Err(Error::Policy(p));
        }
    }
    let Some(max) = policy.max_gain_db else {
        return Ok(());
    };
    let Some(g) = gain else {
        return Err(Error::Policy(format!(
            "gain_db is required while rx.max_gain_db {max} is set"
        )));
    };
    if let GainSpec::Elements(m) = g {
        for (k, v) in m {
            if exceeds(*v, max) {
                return Err(Error::Policy(format!(
                    "gain_db.{k} {v} exceeds rx.max_gain_db {max}"
                )));
            }
        }
    }
    // A negative element never lowers the total checked here: a radio clamps each
    // element to its own range, so {"LNA": 32, "VGA": 30, "TIA": -30} may run at 62.
    let total = match g {
        GainSpec::Total(t) => *t,
        GainSpec::Elements(m) => m.values().map(|v| v.max(0.0)).sum(),
    };
    if exceeds(total, max) {
        return Err(Error::Policy(match g {
            GainSpec::Total(_) => format!("gain_db {total} exceeds rx.max_gain_db {max}"),
            GainSpec::Elements(_) => {
                format!("gain_db total {total} exceeds rx.max_gain_db {max}")
            }
        }));
    }
    Ok(())
}

/// Check an `rx_sweep` step against the RX policy; the error names the limit.
/// Fails closed on anything not a usable number. Sweeps record no IQ.
pub fn check_rx_sweep(step: &RxSweepStep, policy: &RxPolicy) -> Result<(), Error> {
    if let Some(p) = validate_sweep_step(step).into_iter().next() {
        return Err(Error::Policy(p));
    }
    let Some(dur) = step.duration_s() else {
        return Err(Error::Policy(
            "the sweep's hop plan cannot be computed".into(),
        ));
    };
    if exceeds(dur, policy.max_duration_s) {
        let how = match step.sweep.interval_s {
            Some(i) => format!(
                "{} passes, one every interval_s {i} s, a pass {:.3} s",
                step.sweep.repeats,
                step.sweep.pass_s().unwrap_or(0.0)
            ),
            None => format!(
                "{} hops × ({} s settle + {} s dwell) × {} repeats",
                step.hops().unwrap_or(0),
                step.sweep.settle_s,
                step.sweep.dwell_s,
                step.sweep.repeats
            ),
        };
        return Err(Error::Policy(format!(
            "sweep duration {dur:.3} s ({how}) exceeds rx.max_duration_s {}",
            policy.max_duration_s
        )));
    }
    if let Some(max) = policy.max_sample_rate_hz {
        if exceeds(step.sweep.sample_rate_hz, max) {
            return Err(Error::Policy(format!(
                "sample_rate_hz {} exceeds rx.max_sample_rate_hz {max}",
                step.sweep.sample_rate_hz
            )));
        }
    }
    check_rx_gain(step.gain_db.as_ref(), policy)?;
    crate::check_radio_settings(&step.radio, policy)
}

#[cfg(test)]
mod tests {
    /// `RX_SWEEP_FIELDS` is exactly what serde reads and writes for a step.
    #[test]
    fn the_field_list_is_the_steps_fields() {
        let step: RxSweepStep = serde_json::from_str(
            r#"{"device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6, "bin_hz": 10e3,
                "interval_s": 5, "settings": {"biastee": "true"}, "stream_args": {"bufflen": "1"},
                "agc": true, "ppm": 1.5, "channel": 0}"#,
        )
        .unwrap();
        let v = serde_json::to_value(&step).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut want = RX_SWEEP_FIELDS.to_vec();
        want.sort_unstable();
        let mut got = keys.clone();
        got.sort_unstable();
        assert_eq!(got, want);
    }

    use super::*;

    fn step() -> RxSweepStep {
        serde_json::from_str(
            r#"{"device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6, "bin_hz": 10e3,
                "sample_rate_hz": 10e6, "gain_db": 20, "dwell_s": 0.05, "settle_s": 0.01,
                "crop": 0.25, "repeats": 1}"#,
        )
        .unwrap()
    }

    #[test]
    fn grid_and_duration() {
        let s = step();
        let g = s.sweep.grid_at(s.sweep.sample_rate_hz).unwrap();
        // A dwell shorter than one FFT counts as one FFT.
        let mut short = s.clone();
        short.sweep.dwell_s = 1e-6;
        let want = 3.0 * (0.01 + 1000.0 / 10e6);
        assert!((short.duration_s().unwrap() - want).abs() < 1e-12);
        // Too many values to keep.
        let mut huge = s.clone();
        huge.sweep.start_hz = 1e6;
        huge.sweep.stop_hz = 6e9;
        huge.sweep.sample_rate_hz = 1e6;
        huge.sweep.bin_hz = 1.0;
        let mut issues = Vec::new();
        huge.check(1, 1, &mut issues);
        assert!(
            issues.iter().any(|i| i.message.contains("values")),
            "{issues:?}"
        );
        // 10 MS/s / 10 kHz: exactly 10 kHz bins from a 1000-point FFT.
        assert_eq!((g.fft_size, g.kept_bins), (1000, 750));
        assert_eq!(g.total_bins, 2000);
        assert_eq!(g.hops, 3);
        assert_eq!(s.hops(), Some(3));
        assert!((s.duration_s().unwrap() - 3.0 * 0.06).abs() < 1e-12);
    }

    /// The bin asked is the bin given whenever `rate / bin` is an integer, and a pass
    /// takes the fewest hops, ⌈band / (rate × (1 − crop))⌉: 420–480 MHz at 10 kHz
    /// and 10 MS/s is 8 hops of 7.5 MHz (as soapy_power plans it), not 9.
    #[test]
    fn exact_bin_and_fewest_hops() {
        for (start, stop, bin, rate, crop, fft, hops) in [
            (420e6, 480e6, 10e3, 10e6, 0.25, 1000, 8),
            (88e6, 108e6, 1e3, 2.4e6, 0.25, 2400, 12),
            (100e6, 101e6, 1e3, 2.048e6, 0.0, 2048, 1),
            (1e9, 2e9, 100e3, 20e6, 0.25, 200, 67),
        ] {
            let g = sweep_grid(start, stop, bin, rate, crop).unwrap();
            assert_eq!(g.fft_size, fft, "{start}..{stop} at {bin} Hz, {rate} S/s");
            assert!(((rate / g.fft_size as f64) - bin).abs() < 1e-9 * bin);
            let fewest = ((stop - start) / (rate * (1.0 - crop))).ceil() as usize;
            assert_eq!(g.hops, hops);
            assert_eq!(g.hops, fewest, "{start}..{stop}");
        }
        // Not an integer ratio: the next size up, so the bin is no wider than asked.
        let g = sweep_grid(88e6, 108e6, 7e3, 2.4e6, 0.25).unwrap();
        assert_eq!(g.fft_size, 343);
        assert!(2.4e6 / g.fft_size as f64 <= 7e3);
        assert!(fft_size_ok(1000) && fft_size_ok(16) && !fft_size_ok(15));
        assert!(fft_size_ok(1 << 20) && !fft_size_ok((1 << 20) + 1));
    }

    #[test]
    fn gain_number_or_elements() {
        let g: GainSpec = serde_json::from_str("20").unwrap();
        assert_eq!(g, GainSpec::Total(20.0));
        let g: GainSpec = serde_json::from_str(r#"{"LNA": 24, "VGA": 20.5}"#).unwrap();
        assert_eq!(g.total(), 44.5);
        let e = serde_json::from_str::<GainSpec>(r#""max""#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("gain element to dB"), "{e}");
        let e = serde_json::from_str::<GainSpec>(r#"{"LNA": "x"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid type"), "{e}");
        assert!(!GainSpec::Elements(BTreeMap::new()).problems().is_empty());
        let bad = GainSpec::Elements([("A,B=1".to_owned(), 1.0)].into());
        assert!(bad.problems()[0].contains("not a gain element name"));
    }

    #[test]
    fn policy_bounds_each_element_the_sum_duration_and_rate() {
        let mut p = RxPolicy {
            max_gain_db: Some(40.0),
            ..RxPolicy::default()
        };
        let mut s = step();
        check_rx_sweep(&s, &p).unwrap();
        s.gain_db = Some(GainSpec::Elements(
            [("LNA".into(), 24.0), ("VGA".into(), 20.0)].into(),
        ));
        let e = check_rx_sweep(&s, &p).unwrap_err().to_string();
        assert!(
            e.contains("gain_db total 44 exceeds rx.max_gain_db 40"),
            "{e}"
        );
        s.gain_db = Some(GainSpec::Elements([("LNA".into(), 41.0)].into()));
        let e = check_rx_sweep(&s, &p).unwrap_err().to_string();
        assert!(e.contains("gain_db.LNA 41 exceeds"), "{e}");
        s.gain_db = None;
        assert!(check_rx_sweep(&s, &p)
            .unwrap_err()
            .to_string()
            .contains("required"));
        s.gain_db = Some(GainSpec::Total(10.0));
        p.max_duration_s = 0.1;
        let e = check_rx_sweep(&s, &p).unwrap_err().to_string();
        assert!(e.contains("sweep duration 0.180 s (3 hops"), "{e}");
        assert!(e.contains("rx.max_duration_s 0.1"), "{e}");
        p.max_duration_s = 60.0;
        p.max_sample_rate_hz = Some(2e6);
        assert!(check_rx_sweep(&s, &p)
            .unwrap_err()
            .to_string()
            .contains("rx.max_sample_rate_hz"));
        p.max_sample_rate_hz = None;
        s.sweep.repeats = 1000;
        assert!(check_rx_sweep(&s, &p)
            .unwrap_err()
            .to_string()
            .contains("exceeds rx.max_duration_s"));
        // An interval: the passes' wall time, from the first start to the last end.
        s.sweep.repeats = 3;
        s.sweep.interval_s = Some(30.0);
        assert!((s.duration_s().unwrap() - (2.0 * 30.0 + 0.18)).abs() < 1e-9);
        let e = check_rx_sweep(&s, &p).unwrap_err().to_string();
        assert!(
            e.contains("sweep duration 60.180 s (3 passes, one every interval_s 30 s"),
            "{e}"
        );
        // A pass longer than the interval: the passes follow each other at once.
        s.sweep.interval_s = Some(0.01);
        assert!((s.duration_s().unwrap() - 3.0 * 0.18).abs() < 1e-9);
        s.sweep.interval_s = Some(0.0);
        assert!(check_rx_sweep(&s, &p)
            .unwrap_err()
            .to_string()
            .contains("interval_s 0 must be"));
        s.sweep.interval_s = None;
        s.sweep.repeats = 1;
        s.sweep.crop = f64::NAN;
        assert!(check_rx_sweep(&s, &p)
            .unwrap_err()
            .to_string()
            .contains("crop"));
    }
}
