//! `rxnode inventory --dry-run [--args ARGS] [--json]`: enumerate and probe radios.
//!
//! Always read-only: devices are opened to be probed, never streamed, never
//! reconfigured. No device found is not an error (exit 0, with a hint).
use crate::context::Ctx;
use crate::exit::Outcome;
use anyhow::{Context, Result};
use rxnode_hw::DeviceInfo;
use serde::Serialize;
use std::fmt::Write as _;

#[derive(Serialize)]
struct Report {
    devices: Vec<DeviceInfo>,
    soapysdr_version: String,
    sim: bool,
    modules: Vec<String>,
    search_paths: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

/// How to install the SoapyRemote client module, in the platform's words.
#[cfg(not(windows))]
const REMOTE_MODULE: &str = "apt-get install soapysdr0.8-module-remote";
#[cfg(windows)]
const REMOTE_MODULE: &str = "PothosSDR ships it: re-run its installer with SoapyRemote selected";

/// For a SoapyRemote address that found nothing, say which server did not
/// answer (or that the client module is missing) instead of the generic hint.
fn remote_hint(args: &str, modules: &[String]) -> Option<String> {
    let url = args.split(',').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k.trim() == "remote").then(|| v.trim().to_owned())
    })?;
    if !modules.iter().any(|m| m.contains("remoteSupport")) {
        return Some(format!(
            "no radio found for args {args:?}: the SoapyRemote client module is not loaded \
             ({REMOTE_MODULE}; `--sim` loads only rxsim)"
        ));
    }
    Some(format!(
        "no radio found for args {args:?}: the SoapyRemote server at {url} did not answer or \
         serves no matching radio (is SoapySDRServer running there, with avahi-daemon? see \
         docs/hardware.md)"
    ))
}

/// `inventory` options.
#[derive(Debug, Clone, clap::Args)]
pub struct InventoryOptions {
    /// Read-only: probe without streaming or changing settings (the only mode).
    #[arg(long)]
    pub dry_run: bool,
    /// SoapySDR device args to filter devices (e.g. `driver=hackrf`).
    #[arg(short = 'd', long = "device", alias = "args", default_value = "", value_parser = crate::options::device)]
    pub args: String,
}

/// The command.
pub fn cmd_inventory(ctx: &Ctx, args: &InventoryOptions) -> Result<Outcome> {
    let devices = rxnode_hw::enumerate(&args.args)
        .with_context(|| format!("inventory with args {:?}", args.args))?;
    let modules = rxnode_hw::soapysdr_modules();
    let search_paths = rxnode_hw::soapysdr_search_paths();
    let hint = devices.is_empty().then(|| {
        let plugin = std::env::var("SOAPY_SDR_PLUGIN_PATH").unwrap_or_default();
        if let Some(h) = remote_hint(&args.args, &modules) {
            return h;
        }
        // Under --sim only rxsim is there: other drivers' args find nothing by design.
        let next = if ctx.sim {
            "Under --sim only the simulated radio is loaded (driver=rxsim): leave --sim out to reach your radio's module, or give rxsim's args"
        } else {
            "Install the module for your radio (see docs/hardware.md) or try `rxnode --sim inventory --dry-run`"
        };
        format!(
            "no radio found{}; SoapySDR modules found: {}; search paths: {}; SOAPY_SDR_PLUGIN_PATH={}. {next}.",
            if args.args.is_empty() {
                String::new()
            } else {
                format!(" for args {:?}", args.args)
            },
            if modules.is_empty() { "none".to_owned() } else { modules.join(", ") },
            search_paths.join(", "),
            if plugin.is_empty() { "(unset)" } else { plugin.as_str() },
        )
    });
    let report = Report {
        devices,
        soapysdr_version: rxnode_hw::soapysdr_version(),
        sim: ctx.sim,
        modules,
        search_paths,
        hint,
    };
    ctx.report(&report, render_human)?;
    Ok(Outcome::Done)
}

fn ranges(r: &[[f64; 2]], unit: f64, suffix: &str) -> String {
    if r.is_empty() {
        return "-".to_owned();
    }
    r.iter()
        .map(|[a, b]| format!("{}–{} {suffix}", a / unit, b / unit))
        .collect::<Vec<_>>()
        .join(", ")
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".to_owned()
    } else {
        v.join(", ")
    }
}

/// The inventory for a person, as text: one block per device, then the hint.
fn render_human(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "SoapySDR {}{}: {} device(s)",
        r.soapysdr_version,
        if r.sim { " (simulated radio only)" } else { "" },
        r.devices.len()
    );
    for d in &r.devices {
        let _ = writeln!(out);
        let _ = match &d.label {
            Some(l) => writeln!(out, "{l}"),
            None => writeln!(out, "{} {}", d.driver, d.serial.as_deref().unwrap_or("")),
        };
        let _ = writeln!(out, "  args:          {}", d.args);
        let _ = writeln!(
            out,
            "  serial:        {}",
            d.serial.as_deref().unwrap_or("-")
        );
        if let Some(e) = &d.error {
            let _ = writeln!(out, "  error:         could not open to probe: {e}");
            continue;
        }
        let _ = writeln!(
            out,
            "  hardware:      {}",
            d.hardware_key.as_deref().unwrap_or("-")
        );
        let _ = writeln!(
            out,
            "  channels:      {} RX, {} TX",
            d.rx_channels, d.tx_channels
        );
        let _ = writeln!(
            out,
            "  frequency:     {}",
            ranges(&d.frequency_ranges_hz, 1e6, "MHz")
        );
        let _ = writeln!(
            out,
            "  sample rate:   {}",
            ranges(&d.sample_rate_ranges_hz, 1e6, "MS/s")
        );
        let elements = d
            .gain_elements
            .iter()
            .map(|g| format!("{} {}–{}", g.name, g.min_db, g.max_db))
            .collect::<Vec<_>>();
        let _ = writeln!(
            out,
            "  gain:          {}{}",
            d.gain_range_db
                .map(|[a, b]| format!("{a}–{b} dB"))
                .unwrap_or_else(|| "-".to_owned()),
            if elements.is_empty() {
                String::new()
            } else {
                format!(" ({})", elements.join(", "))
            }
        );
        let _ = writeln!(out, "  antennas:      {}", list(&d.antennas));
        let _ = writeln!(out, "  clock sources: {}", list(&d.clock_sources));
        for (k, v) in &d.sensors {
            let _ = writeln!(out, "  sensor {k}: {v}");
        }
        for (k, v) in &d.hardware_info {
            let _ = writeln!(out, "  info {k}: {v}");
        }
    }
    if let Some(h) = &r.hint {
        let _ = writeln!(out);
        let _ = writeln!(out, "{h}");
    }
    out
}
