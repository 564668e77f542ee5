//! A radio's own settings in an RX step (docs/operator.md#radio-settings): SoapySDR
//! `writeSetting` keys and values, stream args, AGC and a manual frequency
//! correction, and their policy check. Fail closed: a setting key is refused unless
//! the node's policy lists it in `rx.allowed_settings` (a setting can put power or
//! signal on the antenna port: bias-T, amplifiers), and so is every stream arg
//! but the few that only shape buffers ([`BUFFER_STREAM_ARGS`]).
use crate::error::Error;
use crate::policy::RxPolicy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The radio settings of an RX step or command.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RadioSettings {
    /// SoapySDR `writeSetting` key → value, written after the radio is configured.
    pub settings: BTreeMap<String, String>,
    /// Stream args key → value, given to `setupStream`.
    pub stream_args: BTreeMap<String, String>,
    /// Automatic gain control on (`setGainMode`); off (unchanged) by default.
    pub agc: bool,
    /// A manual frequency correction, ppm (rtl_power's `-p`): tunes as a
    /// calibration of this many ppm would. Not with `apply_calibration`.
    pub ppm: Option<f64>,
    /// The RX channel (0 when unset).
    pub channel: Option<usize>,
}

/// Most settings (and most stream args) one step may give.
pub const MAX_RADIO_SETTINGS: usize = 32;

/// Stream args that only size the stream's buffers, allowed without listing; any
/// other stream arg (a driver may read one as a bias-T or amplifier switch) needs
/// `rx.allowed_settings`.
pub const BUFFER_STREAM_ARGS: [&str; 4] = ["bufflen", "buffers", "buflen", "mtu"];

impl RadioSettings {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self == &RadioSettings::default()
    }

    /// Problems with the values themselves, each naming its field and value.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        for (field, map) in [
            ("settings", &self.settings),
            ("stream_args", &self.stream_args),
        ] {
            if map.len() > MAX_RADIO_SETTINGS {
                out.push((
                    field,
                    format!(
                        "{field} gives {} keys; at most {MAX_RADIO_SETTINGS}",
                        map.len()
                    ),
                ));
            }
            for (k, v) in map {
                let key = crate::header::truncate(k, 40);
                if k.is_empty() || k.len() > 64 || k.chars().any(bad_char) {
                    out.push((field, format!("{field} key {key:?} is not a setting name")));
                }
                if v.len() > 256 || v.chars().any(bad_char) {
                    out.push((
                        field,
                        format!(
                            "{field}.{key} value {:?} is not a setting value (no commas, = or control characters; at most 256 bytes)",
                            crate::header::truncate(v, 40)
                        ),
                    ));
                }
            }
        }
        if let Some(c) = self.channel {
            if c > 255 {
                out.push(("channel", format!("channel {c} must be in 0..=255")));
            }
        }
        if let Some(p) = self.ppm {
            if !(p.is_finite() && p.abs() <= 1000.0) {
                out.push((
                    "ppm",
                    format!(
                        "ppm {} must be a finite number within ±1000",
                        crate::compact(p)
                    ),
                ));
            }
        }
        out
    }
}

impl RadioSettings {
    /// Settings and stream args a task's plan may never give, whatever
    /// `rx.allowed_settings` lists (the list is the node's, for the operator's
    /// `--setting` too): a key that loads, flashes or erases an image or firmware, or
    /// resets the radio (SoapyBladeRF's `load_fpga`, `flash_fpga`, `flash_firmware`,
    /// `erase_stored_fpga`, `jump_to_bootloader`, `reset`), loops or calibrates a
    /// path (`loopback`, LimeSuite's `CALIBRATE_TX`), or drives the transmit side
    /// (a `TX…`/`…_TX` word, LimeSuite's `TXTSP_CONST` test signal). A bias-T's
    /// power (`bias_tx`, `biastee_tx`: DC on a port, no signal) stays the policy's.
    pub fn task_problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        for (field, map) in [
            ("settings", &self.settings),
            ("stream_args", &self.stream_args),
        ] {
            for k in map.keys().filter(|k| never_from_a_task(k)) {
                out.push((
                    field,
                    format!(
                        "{field}.{} can never be set by a task, whatever rx.allowed_settings lists: the key loads or writes an image or firmware, resets, loops back or calibrates the radio, or drives its transmit side — fix: drop it (the operator can give it with `--setting`)",
                        crate::header::truncate(k, 40)
                    ),
                ));
            }
        }
        out
    }
}

/// A setting key no task may give ([`RadioSettings::task_problems`]), compared
/// without regard to case, word by word (words split at anything not a letter or
/// digit).
fn never_from_a_task(key: &str) -> bool {
    const PARTS: [&str; 10] = [
        "fpga",
        "firmware",
        "flash",
        "bootloader",
        "erase",
        "eeprom",
        "load",
        "reset",
        "loopback",
        "calib",
    ];
    let k = key.to_ascii_lowercase();
    if PARTS.iter().any(|p| k.contains(p)) {
        return true;
    }
    let words: Vec<&str> = k
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let tx = words
        .iter()
        .any(|w| w.starts_with("tx") || w.ends_with("tx"));
    let bias = words.iter().any(|w| w.starts_with("bias"));
    tx && !bias
}

fn bad_char(c: char) -> bool {
    c.is_control() || c == ',' || c == '='
}

/// Check radio settings against the RX policy: every setting key, and every stream
/// arg but the buffer sizes of [`BUFFER_STREAM_ARGS`], must be listed in
/// `rx.allowed_settings` (exactly, as the driver spells it); the error names the
/// key and the policy key.
pub fn check_radio_settings(s: &RadioSettings, policy: &RxPolicy) -> Result<(), Error> {
    if let Some((_, p)) = s.problems().into_iter().next() {
        return Err(Error::Policy(p));
    }
    let listed = |k: &str| policy.allowed_settings.iter().any(|a| a == k);
    for k in s.settings.keys() {
        if !listed(k) {
            return Err(Error::Policy(format!(
                "settings.{} is not in rx.allowed_settings {:?} (a radio setting is refused unless the node's policy lists its key: it can power the antenna port)",
                crate::header::truncate(k, 40),
                policy.allowed_settings
            )));
        }
    }
    for k in s.stream_args.keys() {
        if !BUFFER_STREAM_ARGS.contains(&k.as_str()) && !listed(k) {
            return Err(Error::Policy(format!(
                "stream_args.{} is not in rx.allowed_settings {:?} (only the buffer sizes {} pass unlisted: a driver may read another stream arg as a bias-T or amplifier switch)",
                crate::header::truncate(k, 40),
                policy.allowed_settings,
                BUFFER_STREAM_ARGS.join(", ")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fail closed: no key passes an empty list; a listed key passes exactly as
    /// spelled; a stream arg needs listing unless it only sizes buffers.
    #[test]
    fn settings_are_refused_unless_the_policy_lists_them() {
        let mut p = RxPolicy::default();
        let mut s = RadioSettings::default();
        assert!(s.is_empty());
        check_radio_settings(&s, &p).unwrap();
        s.settings.insert("biastee".into(), "true".into());
        let e = check_radio_settings(&s, &p).unwrap_err().to_string();
        assert!(
            e.contains("settings.biastee is not in rx.allowed_settings []"),
            "{e}"
        );
        p.allowed_settings = vec!["BiasTee".into()];
        assert!(check_radio_settings(&s, &p).is_err(), "exact spelling only");
        p.allowed_settings = vec!["biastee".into()];
        check_radio_settings(&s, &p).unwrap();
        s.stream_args.insert("bufflen".into(), "65536".into());
        check_radio_settings(&s, &p).unwrap();
        s.stream_args.insert("bias_tx".into(), "1".into());
        let e = check_radio_settings(&s, &p).unwrap_err().to_string();
        assert!(
            e.contains("stream_args.bias_tx is not in rx.allowed_settings"),
            "{e}"
        );
        s.stream_args.remove("bias_tx");
        s.stream_args.insert("rfnotch".into(), "1".into());
        let e = check_radio_settings(&s, &p).unwrap_err().to_string();
        assert!(e.contains("stream_args.rfnotch is not in"), "{e}");
        p.allowed_settings.push("rfnotch".into());
        check_radio_settings(&s, &p).unwrap();
        s.stream_args.remove("rfnotch");
        s.settings.insert("direct_samp".into(), "2,3".into());
        let e = check_radio_settings(&s, &p).unwrap_err().to_string();
        assert!(e.contains("settings.direct_samp value"), "{e}");
        s.settings.remove("direct_samp");
        s.ppm = Some(f64::NAN);
        assert!(check_radio_settings(&s, &p)
            .unwrap_err()
            .to_string()
            .contains("ppm NaN"));
    }

    /// A task may never give a key that loads or flashes an image, resets, loops
    /// back, calibrates or drives the transmit side, even when the policy lists it;
    /// a bias-T's power and the receive side's own keys stay the policy's.
    #[test]
    fn a_task_never_sets_an_image_reset_or_transmit_key() {
        for k in [
            "load_fpga",
            "flash_firmware",
            "erase_stored_fpga",
            "jump_to_bootloader",
            "reset",
            "loopback",
            "CALIBRATE_TX",
            "TXTSP_CONST",
            "ENABLE_TX_GFIR_LPF",
            "tx_lo",
        ] {
            let mut s = RadioSettings::default();
            s.settings.insert(k.into(), "1".into());
            let p = s.task_problems();
            assert!(
                p.iter().any(|(f, m)| *f == "settings"
                    && m.contains(&format!("settings.{k} can never be set by a task"))),
                "{k}: {p:?}"
            );
            let mut s = RadioSettings::default();
            s.stream_args.insert(k.into(), "1".into());
            assert_eq!(s.task_problems().len(), 1, "{k}");
        }
        for k in [
            "biastee",
            "bias_tx",
            "biastee_tx",
            "biastee_rx",
            "rfnotch",
            "direct_samp",
            "agc",
            "bufflen",
        ] {
            let mut s = RadioSettings::default();
            s.settings.insert(k.into(), "1".into());
            assert!(s.task_problems().is_empty(), "{k}");
        }
    }
}
