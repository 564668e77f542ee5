//! The bundled `rxsim` SoapySDR module and `use_sim()`.
//!
//! The module is compiled by `build.rs` and embedded in this library, so
//! `rxnode --sim` works from any directory and after `cargo install`.
use crate::Error;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The compiled rxsim module.
static RXSIM_MODULE: &[u8] = include_bytes!(env!("RXSIM_MODULE"));

/// Set once anything in this crate has called into SoapySDR.
static SOAPY_TOUCHED: AtomicBool = AtomicBool::new(false);
static INSTALLED: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Record that SoapySDR has been used (modules are loaded once per process).
pub(crate) fn touch() {
    SOAPY_TOUCHED.store(true, Ordering::SeqCst);
}

/// Whether this process uses the bundled simulated radio (`use_sim` was called).
pub fn sim_in_use() -> bool {
    INSTALLED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_some()
}

/// Use only the bundled simulated radio module `rxsim`.
///
/// Writes the embedded module (if missing or changed, by SHA-256) to a per-user
/// cache folder, then points `SOAPY_SDR_PLUGIN_PATH` at that one file and
/// `SOAPY_SDR_ROOT` at an empty folder, so system modules are not loaded.
/// Call it before anything touches SoapySDR (modules load once per process);
/// calling it again is harmless. Returns the module path.
pub fn use_sim() -> Result<PathBuf, Error> {
    let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = installed.as_ref() {
        return Ok(p.clone());
    }
    if SOAPY_TOUCHED.load(Ordering::SeqCst) {
        return Err(Error::SimTooLate);
    }
    let hash = hex::encode(Sha256::digest(RXSIM_MODULE));
    let dir = cache_dir();
    mkdir(&dir)?;
    let module = dir.join(format!("librxsim-{}.{}", &hash[..16], module_ext()));
    let current = rxnode_dsp::read_regular(&module)
        .map(|b| hex::encode(Sha256::digest(&b)) == hash)
        .unwrap_or(false);
    if !current {
        let tmp = dir.join(format!(".librxsim-{}.tmp", std::process::id()));
        rxnode_dsp::write_regular(&tmp, RXSIM_MODULE).map_err(|source| Error::SimInstall {
            path: tmp.clone(),
            source,
        })?;
        std::fs::rename(&tmp, &module).map_err(|source| Error::SimInstall {
            path: module.clone(),
            source,
        })?;
        tracing::debug!(path = %module.display(), "installed the rxsim module");
    }
    let root = dir.join("empty-soapy-root");
    mkdir(&root)?;
    std::env::set_var("SOAPY_SDR_PLUGIN_PATH", &module);
    std::env::set_var("SOAPY_SDR_ROOT", &root);
    *installed = Some(module.clone());
    Ok(module)
}

fn mkdir(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::SimInstall {
        path: dir.to_path_buf(),
        source,
    })
}

fn module_ext() -> &'static str {
    if cfg!(windows) {
        "dll"
    } else if cfg!(target_os = "macos") {
        "dylib"
    } else {
        "so"
    }
}

/// `$XDG_CACHE_HOME/rxnode`, `~/.cache/rxnode`, `%LOCALAPPDATA%\rxnode`, or a temp folder.
fn cache_dir() -> PathBuf {
    let nonempty = |v: &str| {
        std::env::var_os(v)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    };
    if cfg!(windows) {
        if let Some(d) = nonempty("LOCALAPPDATA") {
            return d.join("rxnode");
        }
    } else if let Some(d) = nonempty("XDG_CACHE_HOME") {
        return d.join("rxnode");
    } else if let Some(h) = nonempty("HOME") {
        return h.join(".cache").join("rxnode");
    }
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "user".to_owned());
    std::env::temp_dir().join(format!("rxnode-cache-{user}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_module_is_a_shared_object() {
        assert!(RXSIM_MODULE.len() > 1000);
        #[cfg(target_os = "linux")]
        assert_eq!(&RXSIM_MODULE[..4], b"\x7fELF");
    }

    #[test]
    fn cache_dir_is_named_for_rxnode() {
        let d = cache_dir();
        assert!(d.to_string_lossy().contains("rxnode"), "{}", d.display());
    }
}
