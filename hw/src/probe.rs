//! Enumerate and probe radios through SoapySDR (read-only).
use crate::{sim, Error};
use serde::{Deserialize, Serialize};
use soapysdr::{Device, Direction};
use std::collections::BTreeMap;
use std::ffi::CStr;

/// What a probe learned about one radio. Probing only reads: no stream, no setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceInfo {
    /// Args that open exactly this device (`driver=…,serial=…`).
    pub args: String,
    /// SoapySDR driver key.
    pub driver: String,
    /// Serial number, when the driver reports one.
    pub serial: Option<String>,
    /// The SoapyRemote server the radio is reached through (`tcp://host:port`),
    /// `None` for a radio on this host: part of the radio's identity, so a remote
    /// unit is never taken for a local one with the same driver and serial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    /// Human label from enumeration.
    pub label: Option<String>,
    /// Hardware key (model).
    pub hardware_key: Option<String>,
    /// Number of RX channels.
    pub rx_channels: usize,
    /// Number of TX channels.
    pub tx_channels: usize,
    /// RX channel 0 tunable ranges, `[min, max]` in Hz.
    pub frequency_ranges_hz: Vec<[f64; 2]>,
    /// RX channel 0 sample-rate ranges, `[min, max]` in S/s.
    pub sample_rate_ranges_hz: Vec<[f64; 2]>,
    /// RX channel 0 overall gain range `[min, max]` in dB.
    pub gain_range_db: Option<[f64; 2]>,
    /// RX channel 0 gain elements with their ranges.
    pub gain_elements: Vec<GainElement>,
    /// RX channel 0 antennas.
    pub antennas: Vec<String>,
    /// Clock (reference) sources.
    pub clock_sources: Vec<String>,
    /// Device sensors and their readings.
    pub sensors: BTreeMap<String, String>,
    /// Hardware info key/values.
    pub hardware_info: BTreeMap<String, String>,
    /// Why the device could not be opened for probing, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl DeviceInfo {
    /// What is known of a device before [`probe_into`] reads it: its args, driver,
    /// serial and label; everything else empty.
    pub(crate) fn unprobed(
        args: String,
        driver: String,
        serial: Option<String>,
        label: Option<String>,
    ) -> Self {
        Self {
            args,
            driver,
            serial,
            remote: None,
            label,
            hardware_key: None,
            rx_channels: 0,
            tx_channels: 0,
            frequency_ranges_hz: Vec::new(),
            sample_rate_ranges_hz: Vec::new(),
            gain_range_db: None,
            gain_elements: Vec::new(),
            antennas: Vec::new(),
            clock_sources: Vec::new(),
            sensors: BTreeMap::new(),
            hardware_info: BTreeMap::new(),
            error: None,
        }
    }
}

/// One named gain stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GainElement {
    /// Element name (`LNA`, `VGA`, `AMP` …).
    pub name: String,
    /// Minimum, dB.
    pub min_db: f64,
    /// Maximum, dB.
    pub max_db: f64,
}

/// The SoapySDR library version (e.g. `0.8.1`); empty when the library is
/// missing ([`crate::soapysdr_available`] says why).
pub fn soapysdr_version() -> String {
    if crate::soapysdr_available().is_err() {
        return String::new();
    }
    // SAFETY: returns a pointer to a static NUL-terminated string.
    unsafe {
        let p = soapysdr_sys::SoapySDR_getLibVersion();
        if p.is_null() {
            return String::new();
        }
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// Module files SoapySDR finds in its search paths (for "no device" hints);
/// none when the library is missing.
pub fn soapysdr_modules() -> Vec<String> {
    if crate::soapysdr_available().is_err() {
        return vec![];
    }
    sim::touch();
    let mut len = 0usize;
    // SAFETY: SoapySDR allocates an array of `len` C strings; we copy and free it.
    unsafe {
        let list = soapysdr_sys::SoapySDR_listModules(&mut len);
        let out = strings(list, len);
        soapysdr_sys::SoapySDRStrings_clear(&mut { list }, len);
        out
    }
}

/// SoapySDR's module search paths; none when the library is missing.
pub fn soapysdr_search_paths() -> Vec<String> {
    if crate::soapysdr_available().is_err() {
        return vec![];
    }
    let mut len = 0usize;
    // SAFETY: as above.
    unsafe {
        let list = soapysdr_sys::SoapySDR_listSearchPaths(&mut len);
        let out = strings(list, len);
        soapysdr_sys::SoapySDRStrings_clear(&mut { list }, len);
        out
    }
}

/// One SoapySDR module file and what loading it gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleLoad {
    /// The module file.
    pub path: String,
    /// The module's version string, when it reports one.
    pub version: Option<String>,
    /// Why it failed to load (the loader's or a registered driver's message).
    pub error: Option<String>,
}

/// Load every module SoapySDR finds (what enumeration does anyway) and report
/// each one's version or why it failed (`rxnode doctor`).
pub fn soapysdr_load_modules() -> Vec<ModuleLoad> {
    soapysdr_modules()
        .into_iter()
        .map(|path| {
            let Ok(c) = std::ffi::CString::new(path.as_str()) else {
                return ModuleLoad {
                    path,
                    version: None,
                    error: Some("path contains a NUL byte".to_owned()),
                };
            };
            let mut errors = Vec::new();
            // SAFETY: `c` is a valid C string for each call; the returned strings
            // are owned by us and freed with SoapySDR_free; the kwargs are
            // copied, then cleared.
            let version = unsafe {
                let msg = owned_string(soapysdr_sys::SoapySDR_loadModule(c.as_ptr()));
                if !msg.is_empty() && !msg.ends_with("already loaded") {
                    errors.push(msg);
                }
                let mut kw = soapysdr_sys::SoapySDR_getLoaderResult(c.as_ptr());
                let keys = strings(kw.keys, kw.size);
                let vals = strings(kw.vals, kw.size);
                soapysdr_sys::SoapySDRKwargs_clear(&mut kw);
                for (k, v) in keys.iter().zip(vals.iter()) {
                    if !v.is_empty() {
                        errors.push(format!("{k}: {v}"));
                    }
                }
                owned_string(soapysdr_sys::SoapySDR_getModuleVersion(c.as_ptr()))
            };
            ModuleLoad {
                path,
                version: (!version.is_empty()).then_some(version),
                error: (!errors.is_empty()).then(|| errors.join("; ")),
            }
        })
        .collect()
}

/// Copy and free a string SoapySDR allocated for us.
unsafe fn owned_string(p: *mut std::os::raw::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    let s = CStr::from_ptr(p).to_string_lossy().trim().to_owned();
    soapysdr_sys::SoapySDR_free(p.cast());
    s
}

unsafe fn strings(list: *mut *mut std::os::raw::c_char, len: usize) -> Vec<String> {
    if list.is_null() {
        return Vec::new();
    }
    (0..len)
        .filter_map(|i| {
            let p = *list.add(i);
            (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
        })
        .collect()
}

/// Why no radio answers to `args` — `None` when SoapySDR enumerates one (or
/// cannot enumerate at all): the module files SoapySDR loaded and the radios
/// it finds with no filter, in one line. Enumeration only: nothing is opened.
pub fn why_absent(args: &str) -> Option<String> {
    // Without the library nothing can be enumerated: the caller's own error says so.
    crate::soapysdr_available().ok()?;
    sim::touch();
    if !soapysdr::enumerate(args).ok()?.is_empty() {
        return None;
    }
    let modules: Vec<String> = soapysdr_modules()
        .iter()
        .map(|m| {
            std::path::Path::new(m)
                .file_name()
                .map_or_else(|| m.clone(), |f| f.to_string_lossy().into_owned())
        })
        .collect();
    let radios: Vec<String> = soapysdr::enumerate("")
        .map(|all| {
            all.iter()
                .map(|a| {
                    a.iter()
                        .filter(|(k, _)| *k == "driver" || *k == "serial")
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect()
        })
        .unwrap_or_default();
    let modules = match modules.len() {
        0 => "no module".to_owned(),
        n => format!("{n} module(s) ({})", modules.join(", ")),
    };
    let radios = match radios.len() {
        0 => "no radio".to_owned(),
        _ => format!("these radios: {}", radios.join("; ")),
    };
    Some(format!(
        "no radio matches {args:?}: SoapySDR {} loaded {modules} and finds {radios}",
        soapysdr_version()
    ))
}

/// The enumeration args of this node's own radios: SoapyRemote's stop key, which
/// its client reads before anything else and then neither searches the LAN
/// (mDNS, SSDP) for servers nor connects to one; every other module ignores it.
/// A task's `inventory` step lists what this node has, never what answers on the LAN.
pub const LOCAL_RADIOS: &str = "soapy_remote_no_deeper=1";

/// Enumerate devices matching `args` (`""` = all) and probe each, read-only.
///
/// A device that enumerates but cannot be opened is listed with `error` set.
pub fn enumerate(args: &str) -> Result<Vec<DeviceInfo>, Error> {
    crate::soapysdr_available()?;
    sim::touch();
    let found = soapysdr::enumerate(args).map_err(|e| Error::Enumerate {
        args: args.to_owned(),
        message: e.message.clone(),
    })?;
    let mut out = Vec::with_capacity(found.len());
    for a in found {
        let kv: Vec<(String, String)> = a
            .iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let get = |key: &str| kv.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let open_args = kv
            .iter()
            .filter(|(k, _)| k != "label")
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        let mut info = DeviceInfo::unprobed(
            open_args.clone(),
            get("driver").unwrap_or_default(),
            get("serial"),
            get("label"),
        );
        info.remote = get("remote").filter(|r| !r.trim().is_empty());
        match Device::new(open_args.as_str()) {
            Ok(dev) => probe_into(&dev, &mut info),
            Err(e) => info.error = Some(e.message),
        }
        out.push(info);
    }
    Ok(out)
}

/// The physical unit SoapySDR opens for `args`, as its enumeration names it
/// (driver, serial, SoapyRemote server, … as key/value pairs): the first match,
/// which is the one `Device::make` opens. Read-only: nothing is opened. `None`
/// when nothing matches (opening it fails then).
pub fn resolve_unit(args: &str) -> Result<Option<BTreeMap<String, String>>, Error> {
    crate::soapysdr_available()?;
    sim::touch();
    let found = soapysdr::enumerate(args).map_err(|e| Error::Enumerate {
        args: args.to_owned(),
        message: e.message.clone(),
    })?;
    Ok(found.into_iter().next().map(|a| {
        a.iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }))
}

/// Fill `info` from an open device using getters only.
pub(crate) fn probe_into(dev: &Device, info: &mut DeviceInfo) {
    if let Ok(d) = dev.driver_key() {
        info.driver = d;
    }
    info.hardware_key = dev.hardware_key().ok();
    info.rx_channels = dev.num_channels(Direction::Rx).unwrap_or(0);
    info.tx_channels = dev.num_channels(Direction::Tx).unwrap_or(0);
    if info.rx_channels > 0 {
        let rx = Direction::Rx;
        info.frequency_ranges_hz = dev
            .frequency_range(rx, 0)
            .map(|r| r.iter().map(|r| [r.minimum, r.maximum]).collect())
            .unwrap_or_default();
        info.sample_rate_ranges_hz = dev
            .get_sample_rate_range(rx, 0)
            .map(|r| r.iter().map(|r| [r.minimum, r.maximum]).collect())
            .unwrap_or_default();
        info.gain_range_db = dev.gain_range(rx, 0).ok().map(|r| [r.minimum, r.maximum]);
        for name in dev.list_gains(rx, 0).unwrap_or_default() {
            if let Ok(r) = dev.gain_element_range(rx, 0, name.as_str()) {
                info.gain_elements.push(GainElement {
                    name,
                    min_db: r.minimum,
                    max_db: r.maximum,
                });
            }
        }
        info.antennas = dev.antennas(rx, 0).unwrap_or_default();
    }
    info.clock_sources = dev.list_clock_sources().unwrap_or_default();
    for key in dev.list_sensors().unwrap_or_default() {
        let value = dev
            .read_sensor(key.as_str())
            .unwrap_or_else(|e| format!("(unreadable: {})", e.message));
        info.sensors.insert(key, value);
    }
    if let Ok(hw) = dev.hardware_info() {
        info.hardware_info = hw
            .iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
    }
}
