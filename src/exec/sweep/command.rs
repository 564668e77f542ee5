//! `rxnode sweep …`: the operator's own sweep, outputs named on the command
//! line (never overwritten), written to the ledger inside a checkout.
use super::radio::{execute, status_of, write_new, NotSwept, Swept};
use super::report::{heatmap, rtl_power_csv, spectrum_plot, sweep_record};
use crate::context::Ctx;
use crate::exec::{exists_not_a_file, exists_unless_forced};
use crate::exit::{bad_field, bad_field_text, bad_input, refused, FieldText, Outcome};
use crate::result::sections::sweep::{FileRecord, SweepRecord};
use crate::result::Status;
use crate::store::ledger::{Entry, Event, Refusal};
use crate::store::policy::Source;
use anyhow::Result;
use rxnode_interlock::{check_rx_sweep, GainSpec, RxSweepStep, SweepConfig};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn step_of(args: &SweepOptions) -> Result<RxSweepStep> {
    if args.device.trim().is_empty() {
        return Err(bad_field(
            "device",
            " must not be empty (e.g. driver=hackrf)",
        ));
    }
    let mut sweep = args.config();
    if let Some(total) = args.total_s {
        sweep.repeats = passes_in(total, sweep.interval_s)?;
    }
    let s = RxSweepStep {
        device: args.device.clone(),
        sweep,
        gain_db: args.gain_db.clone(),
        apply_calibration: args.apply_calibration,
        radio: args.radio.settings(),
    };
    let problems = rxnode_interlock::validate_sweep_step(&s);
    if !problems.is_empty() {
        let message = sweep_fields(&problems.join("; "));
        let first = message.fields().next();
        return Err(match first {
            Some(field) => bad_field_text(field, message),
            None => bad_input(message.to_string()),
        });
    }
    Ok(s)
}

/// Passes of a sweep run for `total` seconds, one every `interval` seconds:
/// ⌊total / interval⌋, at least one.
fn passes_in(total: f64, interval: Option<f64>) -> Result<u32> {
    let Some(i) = interval.filter(|i| i.is_finite() && *i > 0.0) else {
        return Err(bad_field_text(
            "total_s",
            FieldText::field("total_s")
                .then(" needs a positive ")
                .then_field("interval_s"),
        ));
    };
    if !(total.is_finite() && total > 0.0) {
        return Err(bad_field(
            "total_s",
            format!(
                " {} must be a positive finite number of seconds",
                rxnode_interlock::compact(total)
            ),
        ));
    }
    let n = (total / i).floor().max(1.0);
    if n > f64::from(SweepConfig::MAX_REPEATS) {
        return Err(bad_field(
            "total_s",
            format!(
                " {} at one pass every {} s is {} passes; at most {}",
                rxnode_interlock::compact(total),
                rxnode_interlock::compact(i),
                rxnode_interlock::compact(n),
                SweepConfig::MAX_REPEATS
            ),
        ));
    }
    Ok(n as u32)
}

/// A sweep check's message with its plan-field names (`stop_hz`, `crop`, …) as
/// fields of the request (not `device`, an ordinary word in messages).
fn sweep_fields(msg: &str) -> FieldText {
    crate::exit::plan_fields(msg, &rxnode_interlock::RX_SWEEP_FIELDS[1..])
}

/// A sweep check's message as the operator reads it and the ledger keeps it:
/// its plan-field names as the flags typed (`--stop-hz`, `--crop`, …).
fn as_flags(msg: &str) -> String {
    sweep_fields(msg).told(flag_of)
}

/// The command's flag for a plan field, from clap's table of [`SweepOptions`]
/// (whose fields are the plan's: `apply_calibration` is `--apply-cal`).
fn flag_of(field: &str) -> String {
    crate::options::flag_in::<SweepOptions>(field).unwrap_or_else(|| field.to_owned())
}

/// `<stem>_heatmap.png` beside the spectrum PNG `p`.
fn heatmap_path_of(p: &Path) -> PathBuf {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into());
    p.with_file_name(format!("{stem}_heatmap.png"))
}

/// `sweep` options (docs/operator.md#sweeps-rxnode-sweep).
#[derive(Debug, Clone, clap::Args)]
pub struct SweepOptions {
    /// SoapySDR device args (`driver=hackrf,serial=…`).
    #[arg(short = 'd', long, value_parser = crate::options::device)]
    pub device: String,
    /// Lowest frequency of the band, Hz (`88M`).
    #[arg(long, value_parser = crate::options::frequency)]
    pub start_hz: f64,
    /// Highest frequency of the band, Hz (`108M`).
    #[arg(long, value_parser = crate::options::frequency)]
    pub stop_hz: f64,
    /// Bin width, Hz (`10k`): exact when the sample rate is a whole multiple of it,
    /// else the widest bin no wider.
    #[arg(short = 'B', long, value_parser = crate::options::si_number)]
    pub bin_hz: f64,
    /// Sample rate per hop, S/s (`10M`).
    #[arg(short = 'r', long, default_value = "10M", value_parser = crate::options::sample_rate)]
    pub sample_rate_hz: f64,
    /// RX gain: dB, or per element `LNA=24,VGA=20` (default: not set, the
    /// radio keeps its driver's gain; the report shows it).
    #[arg(short = 'g', long, value_parser = crate::options::gain)]
    pub gain_db: Option<GainSpec>,
    /// Samples analysed per hop (seconds, or `50ms`); `-t`, soapy_power's
    /// integration time, is accepted too.
    #[arg(long, short_alias = 't', default_value_t = 0.05, value_parser = crate::options::duration)]
    pub dwell_s: f64,
    /// Samples discarded after each retune (seconds, or `10ms`).
    #[arg(long, default_value_t = 0.01, value_parser = crate::options::duration)]
    pub settle_s: f64,
    /// Fraction of each hop's band dropped (half at each edge).
    #[arg(long, default_value_t = 0.25)]
    pub crop: f64,
    /// Passes over the band (a heatmap is drawn when > 1).
    #[arg(long, default_value_t = 1, conflicts_with = "total_s")]
    pub repeats: u32,
    /// Start a pass every S seconds (rtl_power's `-i`; `30s`, `5m`); the stream
    /// stops in between.
    #[arg(short = 'i', long, value_parser = crate::options::seconds)]
    pub interval_s: Option<f64>,
    /// Sweep for S seconds in all (rtl_power's `-e`; `1h`): floor(S / --interval-s)
    /// passes, within the policy's rx.max_duration_s.
    #[arg(short = 'e', long, requires = "interval_s", value_parser = crate::options::seconds)]
    pub total_s: Option<f64>,
    /// Write the rtl_power CSV here; `-` writes it to standard output as each pass
    /// ends (the report then goes to standard error).
    #[arg(short = 'O', long)]
    pub csv: Option<PathBuf>,
    /// Write the spectrum PNG here (and `<stem>_heatmap.png` when repeats > 1).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Overwrite `--csv` / `--plot` files that exist (refused otherwise).
    #[arg(long)]
    pub force: bool,
    /// Tune every hop with the radio's frequency calibration from `rxnode clkin
    /// calibrate` (refused when it is missing or older than the policy's
    /// rx.calibration_max_age_s).
    #[arg(long = "apply-cal", conflicts_with = "ppm")]
    pub apply_calibration: bool,
    /// The radio's own settings, stream args, AGC, manual ppm and channel.
    #[command(flatten)]
    pub radio: crate::options::RadioOptions,
}

impl SweepOptions {
    /// The band, bin, rate, time per hop, crop and passes asked for: the one
    /// struct from here to the hop planner (a plan step gives the same).
    pub fn config(&self) -> SweepConfig {
        SweepConfig {
            start_hz: self.start_hz,
            stop_hz: self.stop_hz,
            bin_hz: self.bin_hz,
            sample_rate_hz: self.sample_rate_hz,
            dwell_s: self.dwell_s,
            settle_s: self.settle_s,
            crop: self.crop,
            repeats: self.repeats,
            interval_s: self.interval_s,
        }
    }
}

/// Run `rxnode sweep`.
pub fn cmd_sweep(ctx: &Ctx, args: &SweepOptions) -> Result<Outcome> {
    let step = step_of(args)?;
    check_outputs(args)?;
    let csv_out = args.csv.as_deref().is_some_and(is_stdout);
    if csv_out && ctx.json {
        return Err(bad_field_text(
            "csv",
            FieldText::field("csv").then(
                " - and --json both write to standard output: name a CSV file, or drop --json",
            ),
        ));
    }
    let paths = ctx.paths();
    let ledger_on = git2::Repository::open(&ctx.repo).is_ok();
    if ledger_on {
        // The sweep writes the ledger under .local/: keep it out of Git first,
        // as capture does, or the next command refuses a visible ledger.
        crate::store::trust::prepare(&paths)?;
    }
    let (policy, source) = crate::store::policy::load(&paths)?;
    let log = |e: Entry| {
        if ledger_on {
            crate::exec::ledger_note(&paths, &e);
        }
    };
    if let Err(e) = check_rx_sweep(&step, &policy.rx) {
        let mut reason = as_flags(&e.to_string());
        if source == Source::Defaults {
            reason.push_str(" (default policy: no file at .local/rxnode-policy.json)");
        }
        log(Entry::new(Refusal::of("sweep", reason.clone())));
        return Err(refused(reason));
    }
    // One process per radio (docs/operator.md#one-process-per-radio).
    let _held = crate::store::radio_lock::RadioLock::acquire(&paths, &step.device, "sweep")?;
    let cancel = crate::signals::cancel_flag("the sweep");
    let cal = crate::exec::live::CalibrationUse {
        paths: paths.clone(),
        max_age_s: policy.rx.calibration_max_age_s,
        apply: step.apply_calibration,
    };
    let mut pipe = PassWriter::new(csv_out, &step);
    let sw = match execute(&step, cancel, &cal, &mut |hops| pipe.pass(hops, cancel)) {
        Ok(s) => s,
        Err(NotSwept::Unsupported(why)) => {
            log(Entry::new(Refusal::of("sweep", why.clone())));
            return Err(bad_input(format!(
                "sweep on {}: {why} — fix: pick a band and settings the radio supports (`rxnode inventory --dry-run` lists its ranges)",
                step.device
            )));
        }
        Err(NotSwept::Blocked(why)) => {
            log(Entry::new(Refusal::of("sweep", why.clone())));
            return Err(anyhow::anyhow!("sweep on {}: {why}", step.device));
        }
        Err(NotSwept::Failed(why)) => {
            return Err(anyhow::anyhow!("sweep on {}: {why}", step.device));
        }
    };
    // A file that cannot be written (a full disk) loses no measurement: the sweep
    // is still logged and reported, then the failure is the command's error.
    let (csv_rec, written, unwritten) = write_outputs(args, &sw);
    let mut v = sweep_record(0, &sw, csv_rec);
    if csv_out {
        v.csv = Some(FileRecord {
            bytes: pipe.bytes,
            file: Some("-".to_owned()),
            sha256: pipe.sha256(),
        });
    }
    log(Entry::new(Event::Sweep {
        device: step.device.clone(),
        start_hz: step.sweep.start_hz,
        stop_hz: step.sweep.stop_hz,
        bin_hz: step.sweep.bin_hz,
        hops: sw.report.hops.len(),
        failed_hops: sw.report.failed_ranges_hz.len(),
        status: v.status.as_str().to_owned(),
    }));
    if pipe.closed {
        // The reader went away (`| head`): not an error, nothing more to say.
        return Ok(Outcome::Done);
    }
    // After a failed write the files after it were not tried: no "no plot" reason.
    let plot = args.plot.as_ref().filter(|_| unwritten.is_none());
    print(ctx, &v, (&written, plot), csv_out)?;
    if let Some(e) = unwritten {
        return Err(e.context(format!(
            "the sweep was measured and reported{}, but a file asked for was not written",
            if ctx.json { " on stdout" } else { " above" }
        )));
    }
    Ok(match status_of(&sw.report) {
        Status::Pass => Outcome::Done,
        _ => Outcome::Code(1),
    })
}

/// `-`: standard output, as rtl_power and soapy_power spell it.
fn is_stdout(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// The CSV on standard output, one pass at a time, and (passes at an interval)
/// one progress line per pass on standard error.
struct PassWriter {
    to_stdout: bool,
    progress: bool,
    passes: u32,
    hops_per_pass: Option<usize>,
    done: u32,
    bytes: usize,
    hash: sha2::Sha256,
    /// The reader closed the pipe: the sweep was stopped.
    closed: bool,
}

impl PassWriter {
    fn new(to_stdout: bool, step: &RxSweepStep) -> PassWriter {
        PassWriter {
            to_stdout,
            progress: step.sweep.interval_s.is_some(),
            passes: step.sweep.repeats,
            hops_per_pass: step.hops(),
            done: 0,
            bytes: 0,
            hash: Default::default(),
            closed: false,
        }
    }

    /// One pass's hops (or the measured part of a cancelled one).
    fn pass(&mut self, hops: &[rxnode_hw::SweepHop], cancel: &std::sync::atomic::AtomicBool) {
        use sha2::Digest as _;
        use std::io::Write as _;
        let whole = hops
            .iter()
            .all(|h| h.status != rxnode_hw::HopStatus::NotRun);
        if self.to_stdout && !self.closed {
            let rows = super::report::rtl_power_rows(hops);
            let mut out = std::io::stdout().lock();
            match out.write_all(rows.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => {
                    self.bytes += rows.len();
                    self.hash.update(rows.as_bytes());
                }
                Err(e) => {
                    if e.kind() != std::io::ErrorKind::BrokenPipe {
                        tracing::warn!("sweep CSV on standard output: {e}; stopping the sweep");
                    }
                    self.closed = true;
                    cancel.store(true, std::sync::atomic::Ordering::SeqCst);
                }
            }
        }
        if whole {
            self.done += 1;
        }
        if self.progress && whole {
            let failed = hops
                .iter()
                .filter(|h| h.status == rxnode_hw::HopStatus::Failed)
                .count();
            note!(
                "sweep pass {} of {} done: {} hop(s), {failed} failed",
                self.done,
                self.passes,
                self.hops_per_pass.unwrap_or(hops.len()),
            );
        }
    }

    fn sha256(&self) -> String {
        use sha2::Digest as _;
        hex::encode(self.hash.clone().finalize())
    }
}

/// The output files named (`--csv`, `--plot` and its heatmap): all different,
/// and none there yet (outputs are never overwritten). `--csv -` is standard output.
fn check_outputs(args: &SweepOptions) -> Result<()> {
    let heatmap_path = args
        .plot
        .as_ref()
        .filter(|_| args.repeats > 1)
        .map(|p| heatmap_path_of(p));
    // Each output with the field that names it.
    let csv_file = args.csv.clone().filter(|p| !is_stdout(p));
    let outputs: Vec<(&'static str, &PathBuf)> = [
        ("csv", &csv_file),
        ("plot", &args.plot),
        ("plot", &heatmap_path),
    ]
    .into_iter()
    .filter_map(|(field, p)| Some((field, p.as_ref()?)))
    .collect();
    for (i, (field, a)) in outputs.iter().enumerate() {
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        if outputs[..i].iter().any(|(_, b)| abs(b) == abs(a)) {
            return Err(bad_field_text(
                field,
                FieldText::text(format!("{} is named for two outputs (", a.display()))
                    .then_field("csv")
                    .then(", ")
                    .then_field("plot")
                    .then(" and its _heatmap.png must differ)"),
            ));
        }
    }
    for (field, p) in outputs {
        if p.exists() && !args.force {
            return Err(bad_field_text(field, exists_unless_forced(p)));
        }
        if p.exists() && !p.is_file() {
            return Err(bad_field_text(field, exists_not_a_file(p)));
        }
    }
    Ok(())
}

/// What was written, for the operator: a label and the path.
type Written = Vec<(&'static str, PathBuf)>;

/// The CSV and the pictures asked for: the CSV's record for the JSON, what was
/// written, and the first write that failed (the files after it are not tried).
fn write_outputs(
    args: &SweepOptions,
    sw: &Swept,
) -> (Option<FileRecord>, Written, Option<anyhow::Error>) {
    let mut csv_rec = None;
    let mut written: Written = Vec::new();
    let failed = write_files(args, sw, &mut csv_rec, &mut written).err();
    (csv_rec, written, failed)
}

fn write_files(
    args: &SweepOptions,
    sw: &Swept,
    csv_rec: &mut Option<FileRecord>,
    written: &mut Written,
) -> Result<()> {
    if let Some(p) = args.csv.as_ref().filter(|p| !is_stdout(p)) {
        let csv = rtl_power_csv(&sw.report);
        if args.force {
            write_new(p, csv.as_bytes())?;
        } else {
            crate::store::fsutil::write_atomic_new(p, csv.as_bytes())
                .map_err(|e| e.context(format!("cannot write {}", p.display())))?;
        }
        written.push(("CSV", p.clone()));
        *csv_rec = Some(FileRecord {
            bytes: csv.len(),
            file: p.file_name().map(|n| n.to_string_lossy().into_owned()),
            sha256: rxnode_interlock::sha256_hex(csv.as_bytes()),
        });
    }
    let drawable = sw
        .report
        .spectrum_db
        .iter()
        .any(|v| v.is_some_and(f32::is_finite));
    // No bin of the band with a level: no picture (the text says so), never a
    // made-up axis.
    if let Some(p) = args.plot.as_ref().filter(|_| drawable) {
        let spectrum = spectrum_plot(sw, "rxnode sweep");
        crate::result::plot::write_output(p, args.force, |t| {
            crate::result::plot::write_spectrum(t, &spectrum)
        })?;
        written.push(("spectrum PNG", p.clone()));
        if let Some(h) = heatmap(sw, "rxnode sweep") {
            let hp = heatmap_path_of(p);
            crate::result::plot::write_output(&hp, args.force, |t| {
                crate::result::plot::write_heatmap(t, &h)
            })?;
            written.push(("heatmap PNG", hp));
        }
    }
    Ok(())
}

/// The sweep on stdout: its JSON, or its Markdown and where the files went; on
/// stderr when the CSV went to stdout (`--csv -`), so the pipe carries CSV only.
fn print(
    ctx: &Ctx,
    v: &SweepRecord,
    (written, plot): (&Written, Option<&PathBuf>),
    csv_on_stdout: bool,
) -> Result<()> {
    let human = |v: &SweepRecord| {
        // Plain text for the terminal; the Markdown is for RX_RESULT.md.
        let mut o = sweep_text(v);
        // The operator sees where the results went (the JSON names the CSV only).
        for (what, p) in written {
            let _ = writeln!(o, "wrote {what}: {}", p.display());
        }
        if let Some(p) = plot.filter(|p| !written.iter().any(|(_, w)| w == *p)) {
            let _ = writeln!(
                o,
                "no plot written to {}: no bin of the band has power",
                p.display()
            );
        }
        o
    };
    if csv_on_stdout {
        let _ = ctx.shell().err(&human(v), false);
        return Ok(());
    }
    ctx.report_to_pipe(v, human)
}

/// A sweep as the operator reads it on a terminal: the verdict and band first,
/// then the settings, the peaks and any failed hops, in MHz and dB.
fn sweep_text(v: &SweepRecord) -> String {
    use crate::result::plot::trim_number;
    let req = &v.requested;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "sweep {}: {:.3}–{:.3} MHz, {} hop(s) × {} repeat(s), {} failed, bin {} (asked {})",
        v.status,
        req.start_hz / 1e6,
        req.stop_hz / 1e6,
        v.hops_per_repeat,
        req.repeats,
        v.failed_hops.len(),
        hz(v.bin_hz),
        hz(req.bin_hz),
    );
    if v.cancelled {
        let _ = writeln!(
            o,
            "  stopped: {} of {} pass(es) completed (every hop measured or failed); the rest not run",
            v.passes_completed,
            req.repeats,
        );
    }
    if let Some(line) = crate::exec::capture::correction_line(Some(&v.clock)) {
        let _ = writeln!(o, "{line}");
    }
    if let Some(c) = &v.clamped {
        let _ = writeln!(
            o,
            "  clamped: the radio tunes {:.3}–{:.3} MHz, so {:.3}–{:.3} MHz was swept of the {:.3}–{:.3} MHz asked",
            c.device_range_hz[0] / 1e6,
            c.device_range_hz[1] / 1e6,
            c.start_hz / 1e6,
            c.stop_hz / 1e6,
            c.requested_start_hz / 1e6,
            c.requested_stop_hz / 1e6,
        );
    }
    let a = &v.actual;
    let elements = a
        .gain_elements_db
        .iter()
        .map(|(k, g)| format!("{k} {}", trim_number(*g, 1)))
        .collect::<Vec<_>>()
        .join(", ");
    let elements = if elements.is_empty() {
        elements
    } else {
        format!(" ({elements})")
    };
    let _ = writeln!(
        o,
        "  rate {:.3} MS/s, gain {} dB{elements}, settle {} s, dwell {} s, crop {}",
        a.sample_rate_hz / 1e6,
        trim_number(a.gain_db.unwrap_or(f64::NAN), 1),
        trim_number(req.settle_s, 4),
        trim_number(req.dwell_s, 4),
        trim_number(req.crop, 3),
    );
    if let Some(r) = &v.radio_settings {
        // A manual ppm is told once, on the correction line with its provenance.
        let mut r = r.clone();
        if v.clock.ppm_correction_applied.is_some_and(f64::is_finite) {
            r.ppm = None;
        }
        let text = crate::describe::radio_settings_text(&r);
        if !text.is_empty() {
            let _ = writeln!(o, "  {}", text.trim_start_matches(", "));
        }
    }
    let _ = writeln!(
        o,
        "  noise floor {}; {:.2} s (settle + dwell floor {:.2} s)",
        v.floor_words(1),
        v.elapsed_s,
        v.settle_dwell_floor_s,
    );
    if let Some(t) = v
        .peak_threshold_db
        .filter(|t| *t > rxnode_dsp::BAND_MIN_SNR_DB + 0.05)
    {
        let _ = writeln!(
            o,
            "  peak threshold {t:.1} dB above the floor: with this few averages per bin noise alone \
             reaches {t:.1} dB by chance (1 % of sweeps; min SNR {:.0} dB)",
            rxnode_dsp::BAND_MIN_SNR_DB
        );
    }
    if v.peaks.is_empty() {
        let _ = writeln!(o, "  no peaks above the noise");
    } else {
        let _ = writeln!(o, "  peaks:");
        for (i, p) in v.peaks.iter().enumerate() {
            let _ = writeln!(
                o,
                "  {:>3}  {:>14.6} MHz  {:>7.1} dBFS  {}{}",
                i + 1,
                p.frequency_hz / 1e6,
                p.power_db,
                rxnode_dsp::fmt_snr(p.snr_db),
                rxnode_dsp::fmt_emission(p.emission_hz),
            );
        }
    }
    for h in &v.failed_hops {
        let _ = writeln!(
            o,
            "  failed hop: {:.3}–{:.3} MHz (not measured, not filled in)",
            h.low_hz / 1e6,
            h.high_hz / 1e6
        );
    }
    o
}

/// The band's noise floor for a person: `-97.3 dBFS/bin`, or `n/a` and why
/// (`why`: the sweep's `noise_floor_absent`).
pub(crate) fn floor_words(floor: Option<f64>, why: Option<&str>) -> String {
    match floor {
        Some(f) => format!("{f:.1} dBFS/bin"),
        None => format!("n/a ({})", why.unwrap_or("no noise floor")),
    }
}

/// A bin width for people: `10.000 kHz`, `7.812 kHz`, `250 Hz`.
fn hz(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.3} MHz", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.3} kHz", x / 1e3)
    } else {
        format!("{x:.1} Hz")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refused sweep is named by the request's fields (exit 2), each field the
    /// check's message names.
    #[test]
    fn bad_sweeps_name_the_fields_not_flags() {
        let options = |sweep: SweepConfig| SweepOptions {
            device: "driver=rxsim".into(),
            start_hz: sweep.start_hz,
            stop_hz: sweep.stop_hz,
            bin_hz: sweep.bin_hz,
            sample_rate_hz: sweep.sample_rate_hz,
            gain_db: None,
            dwell_s: sweep.dwell_s,
            settle_s: sweep.settle_s,
            crop: sweep.crop,
            repeats: sweep.repeats,
            interval_s: sweep.interval_s,
            total_s: None,
            csv: None,
            plot: None,
            force: false,
            apply_calibration: false,
            radio: Default::default(),
        };
        assert!(step_of(&options(SweepConfig::new(88e6, 108e6, 10e3))).is_ok());
        let e = step_of(&options(SweepConfig::new(88e6, 80e6, 10e3))).expect_err("refused");
        let b = crate::exit::expect_field_error(&e);
        assert!(b.message.fields().any(|f| f == "stop_hz"), "{e}");
        assert!(!e.to_string().contains("--"), "{e}");
        assert_eq!(b.message.told(flag_of), as_flags(&e.to_string()));
    }

    /// Every plan field a sweep check names has its flag in clap's table.
    #[test]
    fn every_sweep_field_has_its_flag() {
        for f in &rxnode_interlock::RX_SWEEP_FIELDS[1..] {
            let flag = crate::options::flag_in::<SweepOptions>(f);
            assert!(flag.is_some(), "{f} has no flag");
        }
        assert_eq!(flag_of("apply_calibration"), "--apply-cal");
        assert_eq!(flag_of("settings"), "--setting");
        assert_eq!(flag_of("dwell_s"), "--dwell-s");
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
