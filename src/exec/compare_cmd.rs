//! `rxnode clkin compare`: the operator's CLKIN comparison of two radios on one tone
//! (docs/operator.md#verifying-a-slaves-clkin). Receive only; bounded by the node-local
//! policy like a capture on each radio (a refusal names the radio and the limit and
//! exits 3). Inside a checkout the comparison is written to the ledger.
use crate::context::Ctx;
use crate::exec::compare::{compare, Compared};
use crate::exec::live::NotCaptured;
use crate::exec::positive;
use crate::exit::{bad_field, bad_input, field_context, refused, FieldText, Outcome};
use crate::result::Status;
use crate::store::ledger::{CompareDetail, CompareRan, CompareStream, Entry, Event, Refusal};
use crate::store::policy::Source;
use anyhow::Result;
use rxnode_interlock::{check_clkin_compare, ClkinCompareStep, GainSpec};
use std::path::PathBuf;

/// `clkin compare` options.
#[derive(Debug, Clone, clap::Args)]
pub struct ClkinCompareOptions {
    /// SoapySDR device args, twice: MASTER first, then SLAVE.
    #[arg(short = 'd', long = "device", required = true, value_name = "ARGS", value_parser = crate::options::device)]
    pub devices: Vec<String>,
    /// Centre frequency both radios tune to, Hz (`100M`, `433.92MHz`).
    #[arg(short = 'f', long, value_parser = crate::options::frequency)]
    pub frequency_hz: f64,
    /// Sample rate of both streams, S/s (`1M`, `2e6`).
    #[arg(short = 'r', long, value_parser = crate::options::sample_rate)]
    pub sample_rate_hz: f64,
    /// The tone both radios see, Hz (`100.2M`); it may be off its dial by tens of ppm.
    #[arg(long, value_parser = crate::options::frequency)]
    pub tone_hz: f64,
    /// RX gain of both radios, dB (default: not set, each radio keeps its
    /// driver's gain).
    #[arg(short = 'g', long)]
    pub gain_db: Option<f64>,
    /// How long both radios stream (seconds, or `1s`, `500ms`).
    #[arg(short = 't', long, default_value_t = 1.0, value_parser = crate::options::duration)]
    pub duration_s: f64,
    /// LOCKED when SLAVE is within ±this many ppb of MASTER (and the measurement can tell)
    /// and a radio reads back an external clock source; AGREE without one.
    #[arg(long, default_value_t = 10.0, value_parser = crate::options::ppb)]
    pub tolerance_ppb: f64,
    /// Clock sources to select first, MASTER's then SLAVE's (`internal,external`;
    /// default: each radio keeps the one it has).
    #[arg(long, value_delimiter = ',', value_name = "MASTER,SLAVE")]
    pub clock_sources: Option<Vec<String>>,
    /// Write the phase-difference picture (PNG) here.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// The arguments themselves (exit 2), before policy and hardware.
fn check_args(a: &ClkinCompareOptions) -> Result<()> {
    if a.devices.len() != 2 {
        return Err(bad_input(format!(
            "give exactly two radios, MASTER then SLAVE (-d MASTER -d SLAVE); got {}",
            a.devices.len()
        )));
    }
    if a.devices.iter().any(|d| d.trim().is_empty()) {
        return Err(bad_field(
            "devices",
            " must not be empty (e.g. driver=hackrf,serial=…)",
        ));
    }
    if a.devices[0].trim() == a.devices[1].trim() {
        return Err(bad_input(format!(
            "MASTER and SLAVE are the same radio {:?}: give two different device args",
            a.devices[0]
        )));
    }
    positive("frequency_hz", a.frequency_hz)?;
    positive("sample_rate_hz", a.sample_rate_hz)?;
    positive("duration_s", a.duration_s)?;
    super::at_least_one_sample(a.duration_s, a.sample_rate_hz)?;
    positive("tone_hz", a.tone_hz)?;
    positive("tolerance_ppb", a.tolerance_ppb)?;
    if let Some(g) = a.gain_db.filter(|g| !g.is_finite()) {
        return Err(bad_field("gain_db", format!(" {g} is not finite")));
    }
    if (a.tone_hz - a.frequency_hz).abs() >= a.sample_rate_hz / 2.0 {
        return Err(bad_field(
            "tone_hz",
            format!(
                " {} is outside the captured band {} Hz ± {} Hz",
                a.tone_hz,
                a.frequency_hz,
                a.sample_rate_hz / 2.0
            ),
        ));
    }
    if let Some(c) = &a.clock_sources {
        if c.len() != 2 || c.iter().any(|s| s.trim().is_empty()) {
            return Err(bad_field(
                "clock_sources",
                " takes two names, MASTER's then SLAVE's (e.g. internal,external)",
            ));
        }
    }
    if let Some(p) = &a.plot {
        if p.extension().and_then(|e| e.to_str()) != Some("png") {
            return Err(bad_field(
                "plot",
                format!(" {}: the picture is a .png", p.display()),
            ));
        }
        if p.exists() {
            return Err(bad_field(
                "plot",
                format!(
                    ": {} already exists; choose another name (outputs are never overwritten)",
                    p.display()
                ),
            ));
        }
    }
    Ok(())
}

/// The comparison as a plan step: one value for the policy and the radios.
fn step_of(a: &ClkinCompareOptions) -> ClkinCompareStep {
    ClkinCompareStep {
        devices: a.devices.clone(),
        frequency_hz: a.frequency_hz,
        sample_rate_hz: a.sample_rate_hz,
        gain_db: a.gain_db.map(GainSpec::Total),
        duration_s: a.duration_s,
        tone_hz: a.tone_hz,
        tolerance_ppb: a.tolerance_ppb,
        clock_sources: a.clock_sources.clone(),
    }
}

/// Run `rxnode clkin compare`.
pub fn cmd_clkin_compare(ctx: &Ctx, a: &ClkinCompareOptions) -> Result<Outcome> {
    check_args(a)?;
    let paths = ctx.paths();
    let ledger_on = git2::Repository::open(&ctx.repo)
        .map(|r| {
            if let Err(e) = crate::git::ops::ensure_local_excluded(&r) {
                tracing::warn!("cannot keep .local/ out of Git: {e:#}");
            }
        })
        .is_ok();
    let log = |e: Entry| {
        if ledger_on {
            crate::exec::ledger_note(&paths, &e);
        }
    };
    let (policy, source) = crate::store::policy::load(&paths)?;
    let step = step_of(a);
    let refuse = |mut reason: String| {
        if source == Source::Defaults {
            reason.push_str(" (default policy: no file at .local/rxnode-policy.json)");
        }
        log(Entry::new(Refusal::of("clkin compare", reason.clone())));
        refused(reason)
    };
    if let Err(e) = check_clkin_compare(&step, &policy.rx) {
        return Err(refuse(crate::options::policy_flags::<ClkinCompareOptions>(
            &e.to_string(),
        )));
    }
    // Two spellings of one radio: refused at once (exit 2), not waited for.
    if let Some(why) = crate::store::radio_lock::same_radio_twice(&a.devices, &["MASTER", "SLAVE"])
    {
        return Err(bad_input(why));
    }
    // One process per radio, for both radios (docs/operator.md#one-process-per-radio).
    let mut _held = Vec::with_capacity(a.devices.len());
    for d in &a.devices {
        _held.push(crate::store::radio_lock::RadioLock::acquire(
            &paths,
            d,
            "clkin compare",
        )?);
    }
    let cancel = crate::signals::cancel_flag("the comparison");
    if !ctx.json {
        note!(
            "clkin compare: MASTER {} and SLAVE {} stream for {} s …",
            a.devices[0],
            a.devices[1],
            a.duration_s
        );
    }
    let mut done = match compare(&step, cancel) {
        Ok(d) => d,
        Err(NotCaptured::OverLimit(why)) => return Err(refuse(why)),
        Err(NotCaptured::Unsupported(why)) => {
            return Err(crate::exit::bad_input(format!(
                "clkin compare: {why} — fix: pick a setting both radios support (`rxnode inventory --dry-run` lists their ranges)"
            )));
        }
        Err(NotCaptured::Blocked(why)) | Err(NotCaptured::Failed(why)) => {
            log(Entry::new(Event::ClkinCompare(CompareDetail::Failed {
                devices: a.devices.clone(),
                error: why.clone(),
                status: "FAIL",
            })));
            return Err(anyhow::anyhow!("clkin compare: {why}"));
        }
    };
    crate::exec::compare::add_clock_blocks(
        &mut done.entry,
        &paths,
        policy.rx.calibration_max_age_s,
    );
    log(Entry::new(Event::ClkinCompare(ledger_detail(&done, a))));
    let mut plotted = None;
    if let Some(p) = &a.plot {
        // Who, what and when, as a task's picture says it: the radios and the time.
        let title = format!(
            "rxnode clkin compare (standalone) · MASTER {} · SLAVE {} · {}",
            crate::result::plot::short(&a.devices[0], 40),
            crate::result::plot::short(&a.devices[1], 40),
            crate::store::fsutil::now_iso()
        );
        match crate::result::plot::write_compare_png_of(p, &title, &done.entry) {
            Ok(true) => plotted = Some(p.clone()),
            Ok(false) => note!("no phase trace to plot: {}", done.detail),
            Err(e) => {
                return Err(field_context(
                    e,
                    FieldText::field("plot").then(format!(" {}", p.display())),
                ))
            }
        }
    }
    ctx.report_to_pipe(&done.entry, |entry| {
        let mut t = String::new();
        crate::result::render_compare_text(&mut t, entry);
        if let Some(p) = plotted {
            t.push_str(&format!("picture: {}\n", p.display()));
        }
        t
    })?;
    Ok(if done.status == Status::Pass {
        Outcome::Done
    } else {
        Outcome::Code(1)
    })
}

/// The ledger's view: the figure, the verdict and what each stream delivered.
fn ledger_detail(d: &Compared, a: &ClkinCompareOptions) -> CompareDetail {
    let k = &d.entry.clkin_compare;
    let radio = |r: &crate::result::sections::compare::CompareRadio| CompareStream {
        device: r.device.args.clone(),
        overflows: r.overflows,
        samples_received: r.samples_received,
    };
    CompareDetail::Ran(Box::new(CompareRan {
        devices: a.devices.clone(),
        duration_s: a.duration_s,
        frequency_hz: a.frequency_hz,
        master: radio(&d.entry.master),
        relative_ppb: k.relative_ppb,
        sample_rate_hz: a.sample_rate_hz,
        slave: radio(&d.entry.slave),
        status: d.status.as_str(),
        tolerance_ppb: a.tolerance_ppb,
        tone_hz: a.tone_hz,
        uncertainty_ppb: k.uncertainty_ppb,
        verdict: k.verdict.map(|v| v.as_str()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> ClkinCompareOptions {
        ClkinCompareOptions {
            devices: vec!["driver=a".into(), "driver=b".into()],
            frequency_hz: 100e6,
            sample_rate_hz: 1e6,
            tone_hz: 100.2e6,
            gain_db: None,
            duration_s: 1.0,
            tolerance_ppb: 10.0,
            clock_sources: None,
            plot: None,
        }
    }

    /// A refused argument is named by the request's field (exit 2), never by a flag.
    #[test]
    fn bad_arguments_name_the_field_not_a_flag() {
        assert!(check_args(&options()).is_ok());
        let refusal = |o: ClkinCompareOptions| {
            let e = check_args(&o).expect_err("must be refused");
            let b = crate::exit::expect_field_error(&e);
            (b.field, e.to_string())
        };
        assert_eq!(
            refusal(ClkinCompareOptions {
                tolerance_ppb: 0.0,
                ..options()
            }),
            (
                "tolerance_ppb",
                "tolerance_ppb 0 must be a finite number > 0".into()
            )
        );
        assert_eq!(
            refusal(ClkinCompareOptions {
                devices: vec!["driver=a".into(), " ".into()],
                ..options()
            }),
            (
                "devices",
                "devices must not be empty (e.g. driver=hackrf,serial=…)".into()
            )
        );
        assert_eq!(
            refusal(ClkinCompareOptions {
                tone_hz: 101e6,
                ..options()
            })
            .0,
            "tone_hz"
        );
    }
}
