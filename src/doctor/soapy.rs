//! doctor's radio checks: libSoapySDR, its module search path and modules, the
//! radios they find (opened to be listed, never streamed), and the DSP engine.
use super::{check, Check, CheckName, Verdict};
use crate::context::Ctx;
use std::path::Path;

/// libSoapySDR, its module search path, its modules and the radios they find.
/// Without the library (a Windows PC without PothosSDR) only its check is shown.
pub(super) fn soapy_checks(ctx: &Ctx) -> Vec<Check> {
    if let Err(e) = rxnode_hw::soapysdr_available() {
        return vec![check(
            CheckName::LibSoapySdr,
            Verdict::Fail,
            e.to_string(),
            INSTALL_SOAPYSDR,
        )];
    }
    vec![library(ctx), search_path(), modules(), radios()]
}

// The fix hints speak the platform's words: Debian packages and udev on Linux,
// PothosSDR and Zadig on Windows (docs/hardware.md#windows).
#[cfg(not(windows))]
const INSTALL_SOAPYSDR: &str =
    "install libsoapysdr (Debian/Ubuntu: `sudo apt install libsoapysdr-dev soapysdr-tools`)";
#[cfg(windows)]
const INSTALL_SOAPYSDR: &str = "install PothosSDR (https://downloads.myriadrf.org/builds/PothosSDR/) and choose \"Add PothosSDR to the system PATH\", then open a new terminal";
#[cfg(not(windows))]
const INSTALL_MODULE: &str =
    "install your radio's SoapySDR module (e.g. `sudo apt install soapysdr-module-hackrf`)";
#[cfg(windows)]
const INSTALL_MODULE: &str = "install your radio's SoapySDR module with PothosSDR (its installer's module list; modules live in PothosSDR's lib\\SoapySDR\\modules0.8 folder)";
#[cfg(not(windows))]
const INSTALL_MODULES: &str =
    "install your radio's module (`sudo apt install soapysdr-module-all`) or fix SOAPY_SDR_PLUGIN_PATH";
#[cfg(windows)]
const INSTALL_MODULES: &str =
    "install your radio's module with PothosSDR (re-run its installer) or fix SOAPY_SDR_PLUGIN_PATH";
#[cfg(not(windows))]
const NO_RADIO: &str = "plug the radio in, check its USB permissions (udev rules) and module, then `SoapySDRUtil --find`";
#[cfg(windows)]
const NO_RADIO: &str = "plug the radio in, give it the WinUSB driver with Zadig (https://zadig.akeo.ie/; HackRF, RTL-SDR, bladeRF), then `SoapySDRUtil --find` in a PothosSDR terminal";
#[cfg(not(windows))]
const RADIO_BUSY: &str = "close other programs using the radio, check USB permissions and power";
#[cfg(windows)]
const RADIO_BUSY: &str =
    "close other programs using the radio, check its WinUSB driver (Zadig) and power";

/// The `libSoapySDR` check: it reports a version.
fn library(ctx: &Ctx) -> Check {
    let version = rxnode_hw::soapysdr_version();
    if version.is_empty() {
        check(
            CheckName::LibSoapySdr,
            Verdict::Fail,
            "libSoapySDR reports no version",
            INSTALL_SOAPYSDR,
        )
    } else {
        check(
            CheckName::LibSoapySdr,
            Verdict::Pass,
            format!(
                "version {version}{}",
                if ctx.sim {
                    " (--sim: only the bundled rxsim module is loaded)"
                } else {
                    ""
                }
            ),
            "",
        )
    }
}

/// The `module search path` check: the paths searched exist, and so does
/// everything `SOAPY_SDR_PLUGIN_PATH` names.
fn search_path() -> Check {
    let paths = rxnode_hw::soapysdr_search_paths();
    let env_plugin = std::env::var_os("SOAPY_SDR_PLUGIN_PATH")
        .map(|v| v.to_string_lossy().into_owned())
        .filter(|v| !v.is_empty());
    let env_missing: Vec<String> = env_plugin
        .iter()
        .flat_map(|v| std::env::split_paths(v).collect::<Vec<_>>())
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
    let shown = paths
        .iter()
        .map(|p| {
            if Path::new(p).exists() {
                p.clone()
            } else {
                format!("{p} (missing)")
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let env_note = env_plugin
        .as_deref()
        .map(|v| format!("; SOAPY_SDR_PLUGIN_PATH={v}"))
        .unwrap_or_default();
    if !env_missing.is_empty() {
        check(
            CheckName::ModuleSearchPath,
            Verdict::Fail,
            format!(
                "SOAPY_SDR_PLUGIN_PATH names what does not exist: {}; searched: {shown}",
                env_missing.join(", ")
            ),
            "fix or unset SOAPY_SDR_PLUGIN_PATH (it must name module files or folders that exist)",
        )
    } else if paths.iter().any(|p| Path::new(p).exists()) {
        check(
            CheckName::ModuleSearchPath,
            Verdict::Pass,
            format!("{shown}{env_note}"),
            "",
        )
    } else {
        check(
            CheckName::ModuleSearchPath,
            Verdict::Fail,
            format!("no search path exists: {shown}{env_note}"),
            INSTALL_MODULE,
        )
    }
}

/// The `modules` check: at least one, and every one loads.
fn modules() -> Check {
    let modules = rxnode_hw::soapysdr_load_modules();
    let failed: Vec<String> = modules
        .iter()
        .filter_map(|m| m.error.as_ref().map(|e| format!("{}: {e}", m.path)))
        .collect();
    let listed = modules
        .iter()
        .map(|m| match &m.version {
            Some(v) => format!("{} ({v})", m.path),
            None => m.path.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ");
    if modules.is_empty() {
        check(
            CheckName::Modules,
            Verdict::Fail,
            "no SoapySDR module found: no radio driver is installed",
            INSTALL_MODULES,
        )
    } else if !failed.is_empty() {
        check(
            CheckName::Modules,
            Verdict::Fail,
            format!(
                "{} of {} failed to load: {}",
                failed.len(),
                modules.len(),
                failed.join("; ")
            ),
            "reinstall the failing module for this libSoapySDR version, or remove it from the search path",
        )
    } else {
        check(
            CheckName::Modules,
            Verdict::Pass,
            format!("{} loaded: {listed}", modules.len()),
            "",
        )
    }
}

/// The `radios` check: enumeration finds radios and every one opens.
fn radios() -> Check {
    match rxnode_hw::enumerate("") {
        Err(e) => check(
            CheckName::Radios,
            Verdict::Fail,
            format!("enumeration failed: {e}"),
            "check the module install with `SoapySDRUtil --find`",
        ),
        Ok(devs) if devs.is_empty() => check(
            CheckName::Radios,
            Verdict::Fail,
            "no radios found",
            NO_RADIO,
        ),
        Ok(devs) => {
            let list = devs
                .iter()
                .map(|d| {
                    let mut s = d.args.clone();
                    if let Some(e) = &d.error {
                        s.push_str(&format!(" (cannot open: {e})"));
                    }
                    s
                })
                .collect::<Vec<_>>()
                .join("; ");
            if devs.iter().any(|d| d.error.is_some()) {
                check(
                    CheckName::Radios,
                    Verdict::Fail,
                    format!("{} found, not all open: {list}", devs.len()),
                    RADIO_BUSY,
                )
            } else {
                check(
                    CheckName::Radios,
                    Verdict::Pass,
                    format!("{} found: {list}", devs.len()),
                    "",
                )
            }
        }
    }
}

/// Which Welch engine this CPU gets (N = 2048, as in the default capture settings).
pub(super) fn dsp_engine() -> Check {
    match rxnode_dsp::Welch::new(rxnode_dsp::WelchConfig::new(2048, 1e6)) {
        Ok(w) => {
            let why = match w.engine() {
                "rustfft" => "portable engine: this CPU has no SIMD kernel (about half the speed)",
                _ => "fused SIMD kernel (window + FFT + |X|²)",
            };
            check(
                CheckName::DspEngine,
                Verdict::Pass,
                format!("Welch N=2048 on {}: {why}", w.engine()),
                "",
            )
        }
        Err(e) => check(
            CheckName::DspEngine,
            Verdict::Fail,
            format!("{e:#}"),
            "report this: the default Welch settings were refused",
        ),
    }
}
