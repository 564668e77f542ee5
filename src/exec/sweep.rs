//! `rxnode sweep …` and the `rx_sweep` plan step (DESIGN §8, issue 17): an RX-only
//! wideband sweep. Never transmits: it opens one RX stream through
//! [`rxnode_hw::run_sweep`]. Bounded by the node-local RX policy
//! ([`rxnode_interlock::check_rx_sweep`]): a refusal names the limit (exit 3 /
//! `BLOCKED`). Outputs: the rtl_power CSV, the JSON hop table with band peaks,
//! noise floor and failed hops, a spectrum PNG and (repeats > 1) a heatmap PNG.
use crate::context::Ctx;
use crate::exec::steps::{Outputs, StepCtx};
use crate::exit::{bad_input, refused, Outcome};
use crate::result::plot::{Heatmap, SpectrumPlot, Trace};
use crate::result::{Check, Status};
use crate::store::ledger::{self, Entry};
use crate::store::paths::Paths;
use crate::store::policy::{self as policy_file, Source};
use anyhow::{Context, Result};
use rxnode_hw::{run_sweep, HopStatus, RxConfig, RxRadio, SweepConfig, SweepReport};
use rxnode_interlock::{check_rx_sweep, GainSpec, RxSweepStep};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Why a sweep did not run.
#[derive(Debug)]
pub enum NotSwept {
    /// The device is not there or cannot do what was asked: `BLOCKED`.
    Blocked(String),
    /// It started and the driver failed: `FAIL`.
    Failed(String),
}

/// A finished sweep with what the radio really had.
#[derive(Debug)]
pub struct Swept {
    /// The engine's report.
    pub report: SweepReport,
    /// Device args, driver and serial.
    pub device: Value,
    /// Overall gain read back, dB.
    pub gain_db: Option<f64>,
    /// Each gain element as read back, dB.
    pub gain_elements_db: BTreeMap<String, f64>,
    /// When it started (ISO 8601).
    pub started_at: String,
}

/// Parse `--gain-db`: a number, `LNA=24,VGA=20`, or a JSON object.
pub fn parse_gain(s: &str) -> Result<GainSpec, String> {
    let t = s.trim();
    if let Ok(g) = t.parse::<f64>() {
        return Ok(GainSpec::Total(g));
    }
    if t.starts_with('{') {
        return serde_json::from_str::<GainSpec>(t).map_err(|e| format!("--gain-db {t:?}: {e}"));
    }
    let mut m = BTreeMap::new();
    for part in t.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!(
                "--gain-db {t:?}: expected a number of dB or ELEMENT=DB[,ELEMENT=DB…] (e.g. LNA=24,VGA=20)"
            ));
        };
        let v: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("--gain-db {t:?}: {:?} is not a number of dB", v.trim()))?;
        if m.insert(k.trim().to_owned(), v).is_some() {
            return Err(format!(
                "--gain-db {t:?}: element {:?} given twice",
                k.trim()
            ));
        }
    }
    Ok(GainSpec::Elements(m))
}

fn config_of(s: &RxSweepStep) -> SweepConfig {
    SweepConfig {
        start_hz: s.start_hz,
        stop_hz: s.stop_hz,
        bin_hz: s.bin_hz,
        sample_rate_hz: s.sample_rate_hz,
        dwell_s: s.dwell_s,
        settle_s: s.settle_s,
        crop: s.crop,
        repeats: s.repeats,
    }
}

/// Open, configure (rate, first centre, gains — each checked by the device) and sweep.
pub fn execute(s: &RxSweepStep, cancel: &AtomicBool) -> Result<Swept, NotSwept> {
    let started_at = crate::store::fsutil::now_iso();
    let mut radio = RxRadio::open(&s.device)
        .map_err(|e| NotSwept::Blocked(format!("device not available: {e}")))?;
    let info = radio.probe();
    // Tune to the first hop's centre first: the radio never sits outside the band.
    let first =
        rxnode_interlock::sweep_grid(s.start_hz, s.stop_hz, s.bin_hz, s.sample_rate_hz, s.crop)
            .map(|(fft, k, _, _)| s.start_hz + (k / 2) as f64 * s.sample_rate_hz / fft as f64)
            .unwrap_or(s.start_hz);
    let cfg = RxConfig {
        frequency_hz: first,
        sample_rate_hz: s.sample_rate_hz,
        gain_db: match &s.gain_db {
            Some(GainSpec::Total(g)) => Some(*g),
            _ => None,
        },
        ..RxConfig::default()
    };
    // The device's own limits are the bound where the policy sets none.
    if let (Some(GainSpec::Elements(_)), true) = (&s.gain_db, info.gain_elements.is_empty()) {
        return Err(NotSwept::Blocked(format!(
            "device {} lists no gain elements; give gain_db as one number",
            s.device
        )));
    }
    // Every hop's centre must be one the device can tune: refuse before streaming
    // rather than fail hops one by one.
    if let Some((fft, k, _, hops)) =
        rxnode_interlock::sweep_grid(s.start_hz, s.stop_hz, s.bin_hz, s.sample_rate_hz, s.crop)
    {
        let bin = s.sample_rate_hz / fft as f64;
        let ranges = &info.frequency_ranges_hz;
        if !ranges.is_empty() {
            for h in 0..hops {
                let c = s.start_hz + ((h * k) as f64 + (k / 2) as f64) * bin;
                if !ranges.iter().any(|r| r[0] <= c && c <= r[1]) {
                    return Err(NotSwept::Blocked(format!(
                        "hop centre {c} Hz is outside the device's frequency ranges {}",
                        ranges
                            .iter()
                            .map(|r| format!("{}..{} Hz", r[0], r[1]))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
            }
        }
    }
    radio.configure(&cfg).map_err(blocked_or_failed)?;
    if let Some(GainSpec::Elements(m)) = &s.gain_db {
        radio.set_gain_elements(m).map_err(blocked_or_failed)?;
    }
    let actual = radio
        .actual()
        .map_err(|e| NotSwept::Failed(e.to_string()))?;
    let gain_elements_db = radio.gain_elements().unwrap_or_default();
    let report = run_sweep(&mut radio, &config_of(s), cancel).map_err(blocked_or_failed)?;
    Ok(Swept {
        report,
        device: json!({"args": s.device, "driver": info.driver, "serial": info.serial}),
        gain_db: Some(actual.gain_db),
        gain_elements_db,
        started_at,
    })
}

fn blocked_or_failed(e: rxnode_hw::Error) -> NotSwept {
    match e {
        rxnode_hw::Error::Unsupported { .. } | rxnode_hw::Error::InvalidSetting { .. } => {
            NotSwept::Blocked(e.to_string())
        }
        other => NotSwept::Failed(other.to_string()),
    }
}

/// The status of a finished sweep: PASS when every hop measured; PARTIAL when some
/// hops failed or the operator cancelled; FAIL when no hop measured.
pub fn status_of(r: &SweepReport) -> Status {
    let ok = r.hops.iter().filter(|h| h.status == HopStatus::Ok).count();
    if ok == 0 {
        Status::Fail
    } else if ok == r.hops.len() && !r.cancelled {
        Status::Pass
    } else {
        Status::Partial
    }
}

/// The JSON of a sweep (in the result and for `--json`).
pub fn sweep_json(step: usize, sw: &Swept, csv: Option<Value>) -> Value {
    let r = &sw.report;
    let hops: Vec<Value> = r
        .hops
        .iter()
        .map(|h| {
            json!({
                "hop": h.hop,
                "repeat": h.repeat,
                "requested_center_hz": h.requested_center_hz,
                "actual_center_hz": h.actual_center_hz,
                "low_hz": h.low_hz,
                "high_hz": h.high_hz,
                "samples": h.samples,
                "settle_samples": h.settle_samples,
                "overflows": h.overflows,
                "attempts": h.attempts,
                "status": h.status,
                "error": h.error,
            })
        })
        .collect();
    let peaks: Vec<Value> = r
        .peaks
        .iter()
        .zip(&r.peak_widths_hz)
        .map(|(p, w)| {
            json!({"frequency_hz": p.frequency_hz, "power_db": p.power_db, "snr_db": p.snr_db, "width_3db_hz": w})
        })
        .collect();
    json!({
        "step": step,
        "status": status_of(r).as_str(),
        "device": sw.device,
        "started_at": sw.started_at,
        "requested": r.config,
        "actual": {
            "sample_rate_hz": r.sample_rate_hz,
            "gain_db": sw.gain_db,
            "gain_elements_db": sw.gain_elements_db,
        },
        "fft_size": r.plan.fft_size,
        "bin_hz": r.plan.bin_hz,
        "hops_per_repeat": r.plan.centers_hz.len(),
        "hops": hops,
        "peaks": peaks,
        "noise_floor_db": r.noise_floor_db,
        "failed_hops": r.failed_ranges_hz.iter().map(|f| json!({"low_hz": f[0], "high_hz": f[1]})).collect::<Vec<_>>(),
        "elapsed_s": r.elapsed_s,
        "settle_dwell_floor_s": r.floor_s,
        "cancelled": r.cancelled,
        "csv": csv,
    })
}

/// rtl_power CSV: one line per measured hop and repeat,
/// `date, time, Hz low, Hz high, Hz step, samples, dB, dB, …` (UTC). A failed hop
/// has no line (its range is in the JSON): nothing is filled in.
pub fn rtl_power_csv(r: &SweepReport) -> String {
    let mut out = String::new();
    let fmt = time::macros::format_description!("[year]-[month]-[day], [hour]:[minute]:[second]");
    for h in r
        .hops
        .iter()
        .filter(|h| h.status == HopStatus::Ok && !h.db.is_empty())
    {
        let t = time::OffsetDateTime::from_unix_timestamp(h.unix_time_s as i64)
            .ok()
            .and_then(|t| t.format(&fmt).ok())
            .unwrap_or_else(|| "1970-01-01, 00:00:00".into());
        let _ = write!(
            out,
            "{t}, {:.0}, {:.0}, {:.2}, {}",
            h.low_hz, h.high_hz, h.step_hz, h.samples
        );
        for v in &h.db {
            if v.is_finite() {
                let _ = write!(out, ", {v:.2}");
            } else {
                // A bin outside the hop's FFT after a large retune error: rtl_power's
                // own "no data" spelling.
                out.push_str(", nan");
            }
        }
        out.push('\n');
    }
    out
}

fn title(sw: &Swept, what: &str) -> String {
    let r = &sw.report;
    let args = sw.device.get("args").and_then(Value::as_str).unwrap_or("?");
    let dev: String = if args.chars().count() > 32 {
        args.chars().take(31).chain(std::iter::once('…')).collect()
    } else {
        args.to_owned()
    };
    format!(
        "{what} · {dev} · {:.3}–{:.3} MHz · {:.3} MS/s · bin {:.2} kHz · {}",
        r.config.start_hz / 1e6,
        r.config.stop_hz / 1e6,
        r.sample_rate_hz / 1e6,
        r.plan.bin_hz / 1e3,
        sw.started_at
    )
}

/// The stitched spectrum picture of a sweep.
pub fn spectrum_plot(sw: &Swept, what: &str) -> SpectrumPlot {
    let r = &sw.report;
    SpectrumPlot {
        title: title(sw, what),
        trace: Trace {
            start_hz: r.config.start_hz,
            step_hz: r.plan.bin_hz,
            db: r
                .spectrum_db
                .iter()
                .map(|v| v.map_or(f64::NAN, f64::from))
                .collect(),
        },
        peaks: r
            .peaks
            .iter()
            .map(|p| (p.frequency_hz, p.power_db))
            .collect(),
        noise_floor_db: r.noise_floor_db,
        markers: Vec::new(),
        failed_hz: r.failed_ranges_hz.clone(),
        freq_known: true,
    }
}

/// The heatmap of a sweep (one row per repeat), `None` for a single pass.
pub fn heatmap(sw: &Swept, what: &str) -> Option<Heatmap> {
    let r = &sw.report;
    if r.config.repeats < 2 {
        return None;
    }
    let n = r.plan.total_bins;
    let mut rows = Vec::new();
    let mut times = Vec::new();
    let t0 = r
        .hops
        .iter()
        .map(|h| h.unix_time_s)
        .find(|t| *t > 0.0)
        .unwrap_or(0.0);
    for rep in 0..r.config.repeats {
        let mut row = vec![f64::NAN; n];
        let mut t = None;
        for h in r
            .hops
            .iter()
            .filter(|h| h.repeat == rep && h.status == HopStatus::Ok)
        {
            t.get_or_insert(h.unix_time_s - t0);
            let (b0, _) = r.plan.hop_bins(h.hop);
            for (i, v) in h.db.iter().enumerate() {
                if let Some(x) = row.get_mut(b0 + i) {
                    *x = f64::from(*v);
                }
            }
        }
        times.push(t.unwrap_or_else(|| times.last().copied().unwrap_or(0.0)));
        rows.push(row);
    }
    Some(Heatmap {
        title: title(sw, &format!("{what} heatmap")),
        start_hz: r.config.start_hz,
        step_hz: r.plan.bin_hz,
        row_time_s: times,
        rows,
    })
}

/// Write `bytes` atomically, never over an existing file the operator named.
fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::store::fsutil::write_atomic(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The `rx_sweep` plan step: policy, run, `SWEEP_<n>.csv` (+ PNGs) in the outbox.
pub(crate) fn step_sweep(st: &StepCtx, s: &RxSweepStep, out: &mut Outputs) {
    let n = st.index + 1;
    if let Err(e) = check_rx_sweep(s, &st.policy.rx) {
        out.not_swept(st, Status::Blocked, e.to_string());
        return;
    }
    let cancel = crate::term::cancel_flag("the running step");
    let sw = match execute(s, cancel) {
        Ok(sw) => sw,
        Err(NotSwept::Blocked(why)) => {
            out.not_swept(st, Status::Blocked, why);
            return;
        }
        Err(NotSwept::Failed(why)) => {
            out.errors.push(format!("{}: {why}", st.name));
            out.not_swept(st, Status::Fail, why);
            return;
        }
    };
    let dir = st.paths.outbox(st.task.id());
    let csv_rec = step_files(st, &dir, &sw, &mut out.errors);
    let r = &sw.report;
    let detail = format!(
        "{:.3}–{:.3} MHz in {} hop(s) × {} repeat(s), {} failed, bin {:.1} Hz, noise floor {}, {} peak(s), {:.2} s",
        r.config.start_hz / 1e6,
        r.config.stop_hz / 1e6,
        r.plan.centers_hz.len(),
        r.config.repeats,
        r.failed_ranges_hz.len(),
        r.plan.bin_hz,
        r.noise_floor_db.map(|f| format!("{f:.1} dBFS")).unwrap_or_else(|| "n/a".into()),
        r.peaks.len(),
        r.elapsed_s
    );
    for f in &r.failed_ranges_hz {
        out.errors.push(format!(
            "{}: hop {:.3}–{:.3} MHz failed twice (no data, not interpolated)",
            st.name,
            f[0] / 1e6,
            f[1] / 1e6
        ));
    }
    out.checks.push(Check::new(&st.name, status_of(r), detail));
    let mut v = sweep_json(n, &sw, csv_rec);
    if r.hops.len() > MAX_HOPS_IN_RESULT {
        if let Err(e) = hops_to_file(&dir, n, r.hops.len(), &mut v) {
            out.errors.push(format!("{}: {e:#}", st.name));
        }
    }
    out.sweeps.push(v);
}

/// `SWEEP_<n>.csv` (its record for the result, `None` if it could not be
/// written), the spectrum PNG and the heatmap PNG in the outbox `dir`.
fn step_files(st: &StepCtx, dir: &Path, sw: &Swept, errors: &mut Vec<String>) -> Option<Value> {
    let n = st.index + 1;
    let csv_name = format!("SWEEP_{n}.csv");
    let csv = rtl_power_csv(&sw.report);
    let csv_rec = match write_new(&dir.join(&csv_name), csv.as_bytes()) {
        Ok(()) => Some(json!({
            "file": csv_name,
            "bytes": csv.len(),
            "sha256": rxnode_interlock::sha256_hex(csv.as_bytes()),
        })),
        Err(e) => {
            errors.push(format!("{}: {e:#}", st.name));
            None
        }
    };
    let what = format!("{} · step {n}", st.task.id().as_str());
    if let Err(e) = crate::result::plot::write_spectrum(
        &dir.join(format!("SWEEP_{n}.png")),
        &spectrum_plot(sw, &what),
    ) {
        tracing::warn!("sweep plot: {e:#}");
    }
    if let Some(h) = heatmap(sw, &what) {
        if let Err(e) =
            crate::result::plot::write_heatmap(&dir.join(format!("SWEEP_{n}_heatmap.png")), &h)
        {
            tracing::warn!("sweep heatmap: {e:#}");
        }
    }
    csv_rec
}

/// The result is published (≤ 256 KiB): a long hop table goes to
/// `SWEEP_<n>_hops.json` in the outbox (hash in the result); the result keeps
/// every hop that did not go cleanly. Unchanged if the file cannot be written.
fn hops_to_file(dir: &Path, n: usize, hops: usize, v: &mut Value) -> Result<()> {
    let all = v.get("hops").cloned().unwrap_or(Value::Null);
    let text = serde_json::to_vec_pretty(&all).unwrap_or_default();
    let file = format!("SWEEP_{n}_hops.json");
    write_new(&dir.join(&file), &text)?;
    let keep: Vec<Value> = all
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|h| {
                    h["status"] != "OK"
                        || h["attempts"].as_u64() != Some(1)
                        || h["overflows"].as_u64() != Some(0)
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    v["hops"] = Value::Array(keep);
    v["hops_file"] = json!({
        "file": file,
        "bytes": text.len(),
        "sha256": rxnode_interlock::sha256_hex(&text),
        "hops": hops,
    });
    Ok(())
}

/// Hop rows kept in `RX_RESULT.json` before the table moves to its own file.
const MAX_HOPS_IN_RESULT: usize = 200;

/// One sweep's section of `RX_RESULT.md`.
pub fn render_sweep_md(o: &mut String, n: usize, s: &Value) {
    let f = |k: &str| s.get(k).and_then(Value::as_f64);
    let _ = writeln!(o, "### Sweep {n}\n");
    let _ = writeln!(o, "| | |\n|---|---|");
    let _ = writeln!(
        o,
        "| Status | {} |",
        s.get("status").and_then(Value::as_str).unwrap_or("?")
    );
    if let Some(d) = s.get("detail").and_then(Value::as_str) {
        let _ = writeln!(
            o,
            "| Detail | {} |",
            d.replace('|', "\\|").replace('\n', " ")
        );
        return;
    }
    if let Some(req) = s.get("requested") {
        let g = |k: &str| req.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
        let _ = writeln!(
            o,
            "| Band | {:.6}–{:.6} MHz |\n| Bin | {:.2} Hz (asked {:.2}) |\n| Settle / dwell | {} s / {} s |\n| Crop | {} |\n| Repeats | {} |",
            g("start_hz") / 1e6,
            g("stop_hz") / 1e6,
            f("bin_hz").unwrap_or(f64::NAN),
            g("bin_hz"),
            g("settle_s"),
            g("dwell_s"),
            g("crop"),
            g("repeats")
        );
    }
    if let Some(a) = s.get("actual") {
        let _ = writeln!(
            o,
            "| Rate (actual) | {} S/s |\n| Gain (read back) | {} dB {} |",
            a.get("sample_rate_hz")
                .and_then(Value::as_f64)
                .unwrap_or(f64::NAN),
            a.get("gain_db")
                .and_then(Value::as_f64)
                .map(|g| g.to_string())
                .unwrap_or("n/a".into()),
            a.get("gain_elements_db")
                .map(|g| g.to_string())
                .unwrap_or_default()
                .replace('|', "\\|")
        );
    }
    let _ = writeln!(
        o,
        "| Noise floor | {} |",
        f("noise_floor_db")
            .map(|v| format!("{v:.2} dBFS/bin"))
            .unwrap_or("n/a".into())
    );
    let _ = writeln!(
        o,
        "| Time | {:.3} s (settle + dwell floor {:.3} s) |",
        f("elapsed_s").unwrap_or(f64::NAN),
        f("settle_dwell_floor_s").unwrap_or(f64::NAN)
    );
    if let Some(c) = s.get("csv").filter(|c| !c.is_null()) {
        let _ = writeln!(
            o,
            "| CSV | `{}` {} bytes, SHA-256 `{}` |",
            c.get("file").and_then(Value::as_str).unwrap_or("?"),
            c.get("bytes").and_then(Value::as_u64).unwrap_or(0),
            c.get("sha256").and_then(Value::as_str).unwrap_or("?")
        );
    }
    if let Some(c) = s.get("hops_file").filter(|c| !c.is_null()) {
        let _ = writeln!(
            o,
            "| Hop table | `{}` ({} hops; here only the hops that did not go cleanly), SHA-256 `{}` |",
            c.get("file").and_then(Value::as_str).unwrap_or("?"),
            c.get("hops").and_then(Value::as_u64).unwrap_or(0),
            c.get("sha256").and_then(Value::as_str).unwrap_or("?")
        );
    }
    if let Some(p) = s
        .get("peaks")
        .and_then(Value::as_array)
        .filter(|p| !p.is_empty())
    {
        let _ = writeln!(
            o,
            "\n| Peak | Frequency | Power | SNR | −3 dB width |\n|---|---|---|---|---|"
        );
        for (i, k) in p.iter().enumerate() {
            let g = |key: &str| k.get(key).and_then(Value::as_f64).unwrap_or(f64::NAN);
            let _ = writeln!(
                o,
                "| {} | {:.6} MHz | {:.2} dBFS | {:.1} dB | {:.0} Hz |",
                i + 1,
                g("frequency_hz") / 1e6,
                g("power_db"),
                g("snr_db"),
                g("width_3db_hz")
            );
        }
    }
    if let Some(fh) = s
        .get("failed_hops")
        .and_then(Value::as_array)
        .filter(|p| !p.is_empty())
    {
        let _ = writeln!(o, "\nFailed hops (no data, never interpolated):\n");
        for h in fh {
            let g = |key: &str| h.get(key).and_then(Value::as_f64).unwrap_or(f64::NAN);
            let _ = writeln!(
                o,
                "- {:.6}–{:.6} MHz",
                g("low_hz") / 1e6,
                g("high_hz") / 1e6
            );
        }
    }
    let _ = writeln!(o);
}

fn step_of(args: &SweepOptions) -> Result<RxSweepStep> {
    if args.device.trim().is_empty() {
        return Err(bad_input("--device must not be empty (e.g. driver=hackrf)"));
    }
    let gain_db = match &args.gain_db {
        Some(g) => Some(parse_gain(g).map_err(bad_input)?),
        None => None,
    };
    let s = RxSweepStep {
        device: args.device.clone(),
        start_hz: args.start_hz,
        stop_hz: args.stop_hz,
        bin_hz: args.bin_hz,
        sample_rate_hz: args.sample_rate_hz,
        gain_db,
        dwell_s: args.dwell_s,
        settle_s: args.settle_s,
        crop: args.crop,
        repeats: args.repeats,
    };
    let problems = rxnode_interlock::validate_sweep_step(&s);
    if !problems.is_empty() {
        return Err(bad_input(as_flags(&problems.join("; "))));
    }
    Ok(s)
}

/// The plan-field names in a sweep check's message (`stop_hz`, `crop`, …)
/// rewritten as the flags the operator typed (`--stop-hz`, `--crop`, …).
/// Only whole words: `rx.max_sample_rate_hz` stays a policy key.
fn as_flags(msg: &str) -> String {
    const FIELDS: [&str; 9] = [
        "start_hz",
        "stop_hz",
        "bin_hz",
        "sample_rate_hz",
        "gain_db",
        "dwell_s",
        "settle_s",
        "crop",
        "repeats",
    ];
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '.' || c == '-';
    let mut out = String::with_capacity(msg.len() + 16);
    let mut rest = msg;
    while let Some(c) = rest.chars().next() {
        let at_boundary = !out.chars().next_back().is_some_and(word);
        let hit = FIELDS.iter().find(|f| {
            at_boundary
                && rest.starts_with(**f)
                && !rest[f.len()..].chars().next().is_some_and(word)
        });
        if let Some(f) = hit {
            out.push_str("--");
            out.push_str(&f.replace('_', "-"));
            rest = &rest[f.len()..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// `<stem>_heatmap.png` beside the spectrum PNG `p`.
fn heatmap_path_of(p: &Path) -> PathBuf {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into());
    p.with_file_name(format!("{stem}_heatmap.png"))
}

/// `sweep` options (DESIGN §8).
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// SoapySDR device args.
    pub device: String,
    /// Lowest frequency of the band, Hz.
    pub start_hz: f64,
    /// Highest frequency of the band, Hz.
    pub stop_hz: f64,
    /// Widest acceptable bin, Hz.
    pub bin_hz: f64,
    /// Sample rate per hop.
    pub sample_rate_hz: f64,
    /// RX gain: dB, or per element `LNA=24,VGA=20`.
    pub gain_db: Option<String>,
    /// Samples analysed per hop, seconds.
    pub dwell_s: f64,
    /// Samples discarded after each retune, seconds.
    pub settle_s: f64,
    /// Fraction of each hop's band dropped (half at each edge).
    pub crop: f64,
    /// Passes over the band (a heatmap is drawn when > 1).
    pub repeats: u32,
    /// Write the rtl_power CSV here.
    pub csv: Option<PathBuf>,
    /// Write the spectrum PNG here (and `<stem>_heatmap.png` when repeats > 1).
    pub plot: Option<PathBuf>,
}

/// Run `rxnode sweep`.
pub fn cmd_sweep(ctx: &Ctx, args: &SweepOptions) -> Result<Outcome> {
    let step = step_of(args)?;
    let heatmap_path = args
        .plot
        .as_ref()
        .filter(|_| args.repeats > 1)
        .map(|p| heatmap_path_of(p));
    let outputs: Vec<&PathBuf> = [&args.csv, &args.plot, &heatmap_path]
        .into_iter()
        .flatten()
        .collect();
    for (i, a) in outputs.iter().enumerate() {
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        if outputs[..i].iter().any(|b| abs(b) == abs(a)) {
            return Err(bad_input(format!(
                "{} is named for two outputs (--csv, --plot and its _heatmap.png must differ)",
                a.display()
            )));
        }
    }
    for p in outputs {
        if p.exists() {
            return Err(bad_input(format!(
                "{} already exists; choose another name (outputs are never overwritten)",
                p.display()
            )));
        }
    }
    let paths = Paths::new(&ctx.repo);
    let ledger_on = git2::Repository::open(&ctx.repo).is_ok();
    if ledger_on {
        // The sweep writes the ledger under .local/: keep it out of Git first,
        // as capture does, or the next command refuses a visible ledger.
        crate::store::trust::prepare(&paths)?;
    }
    let (policy, source) = policy_file::load(&paths)?;
    let log = |e: Entry| {
        if ledger_on {
            if let Err(err) = ledger::append(&paths, &e) {
                tracing::error!("cannot write the ledger: {err:#}");
            }
        }
    };
    if let Err(e) = check_rx_sweep(&step, &policy.rx) {
        let mut reason = as_flags(&e.to_string());
        if source == Source::Defaults {
            reason.push_str(" (default policy: no file at .local/rxnode-policy.json)");
        }
        log(Entry::new("refused").detail(json!({"command": "sweep", "reason": reason})));
        return Err(refused(reason));
    }
    let cancel = crate::term::cancel_flag("the sweep");
    let sw = match execute(&step, cancel) {
        Ok(s) => s,
        Err(NotSwept::Blocked(why)) => {
            log(Entry::new("refused").detail(json!({"command": "sweep", "reason": why})));
            return Err(refused(format!("sweep on {}: {why}", step.device)));
        }
        Err(NotSwept::Failed(why)) => {
            return Err(anyhow::anyhow!("sweep on {}: {why}", step.device));
        }
    };
    let mut csv_rec = None;
    let mut written: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(p) = &args.csv {
        let csv = rtl_power_csv(&sw.report);
        write_new(p, csv.as_bytes())?;
        written.push(("CSV", p.clone()));
        csv_rec = Some(json!({
            "file": p.file_name().map(|n| n.to_string_lossy().into_owned()),
            "bytes": csv.len(),
            "sha256": rxnode_interlock::sha256_hex(csv.as_bytes()),
        }));
    }
    if let Some(p) = &args.plot {
        crate::result::plot::write_spectrum(p, &spectrum_plot(&sw, "rxnode sweep"))?;
        written.push(("spectrum PNG", p.clone()));
        if let Some(h) = heatmap(&sw, "rxnode sweep") {
            let hp = heatmap_path_of(p);
            crate::result::plot::write_heatmap(&hp, &h)?;
            written.push(("heatmap PNG", hp));
        }
    }
    let v = sweep_json(0, &sw, csv_rec);
    log(Entry::new("sweep").detail(json!({
        "device": step.device,
        "start_hz": step.start_hz,
        "stop_hz": step.stop_hz,
        "bin_hz": step.bin_hz,
        "hops": sw.report.hops.len(),
        "failed_hops": sw.report.failed_ranges_hz.len(),
        "status": v["status"],
    })));
    let text = if ctx.json {
        format!("{}\n", serde_json::to_string_pretty(&v)?)
    } else {
        let mut o = String::new();
        render_sweep_md(&mut o, 1, &v);
        // The operator sees where the results went (the JSON names the CSV only).
        for (what, p) in &written {
            let _ = writeln!(o, "wrote {what}: {}", p.display());
        }
        o
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    Ok(match status_of(&sw.report) {
        Status::Pass => Outcome::Done,
        _ => Outcome::Code(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gain_flag_forms() {
        assert_eq!(parse_gain("20").unwrap(), GainSpec::Total(20.0));
        assert_eq!(
            parse_gain("LNA=24, VGA=20").unwrap(),
            GainSpec::Elements([("LNA".into(), 24.0), ("VGA".into(), 20.0)].into())
        );
        assert_eq!(parse_gain(r#"{"LNA": 8}"#).unwrap().total(), 8.0);
        assert!(parse_gain("LNA=x").unwrap_err().contains("not a number"));
        assert!(parse_gain("loud").unwrap_err().contains("ELEMENT=DB"));
        assert!(parse_gain("LNA=1,LNA=2").unwrap_err().contains("twice"));
    }

    #[test]
    fn sweep_messages_name_the_flags() {
        assert_eq!(
            as_flags("stop_hz 80000000 must be above start_hz 88000000"),
            "--stop-hz 80000000 must be above --start-hz 88000000"
        );
        assert_eq!(
            as_flags(
                "sample_rate_hz 2e7 exceeds rx.max_sample_rate_hz 1e7; crop 1 must be in [0, 0.95)"
            ),
            "--sample-rate-hz 2e7 exceeds rx.max_sample_rate_hz 1e7; --crop 1 must be in [0, 0.95)"
        );
    }
}
