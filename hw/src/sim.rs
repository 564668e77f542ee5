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
    own_folder(&dir)?;
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

/// Refuse a cache folder another user could write to: the module is checked by
/// its hash and then loaded by its path, so whoever can replace the file in
/// between runs code in this process. On unix the folder must be a folder (not a
/// link) owned by this user; write access for group or others is taken away.
/// Elsewhere the folder is the user's own profile folder (`%LOCALAPPDATA%`).
fn own_folder(dir: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let refused = |why: String| Error::SimInstall {
            path: dir.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::PermissionDenied, why),
        };
        let m = std::fs::symlink_metadata(dir).map_err(|source| Error::SimInstall {
            path: dir.to_path_buf(),
            source,
        })?;
        if !m.file_type().is_dir() {
            return Err(refused("not a folder (a link?)".into()));
        }
        // SAFETY: geteuid has no arguments and cannot fail.
        let me = unsafe { libc::geteuid() };
        if m.uid() != me {
            return Err(refused(format!(
                "the folder belongs to uid {}, not to this user (uid {me}): another user could \
                 replace the simulated radio's module; set XDG_CACHE_HOME to a folder of yours",
                m.uid()
            )));
        }
        if m.mode() & 0o022 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(
                |source| Error::SimInstall {
                    path: dir.to_path_buf(),
                    source,
                },
            )?;
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
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
    cache_dir_from(|v| std::env::var_os(v), cfg!(windows))
}

/// [`cache_dir`] from the environment `var` gives. A relative path in a variable
/// counts as unset (the XDG base directory rule): it would put the module in
/// whatever folder rxnode was started from, a checkout's work tree included.
fn cache_dir_from(var: impl Fn(&str) -> Option<std::ffi::OsString>, windows: bool) -> PathBuf {
    let absolute = |v: &str| {
        var(v)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if windows {
        if let Some(d) = absolute("LOCALAPPDATA") {
            return d.join("rxnode");
        }
    } else if let Some(d) = absolute("XDG_CACHE_HOME") {
        return d.join("rxnode");
    } else if let Some(h) = absolute("HOME") {
        return h.join(".cache").join("rxnode");
    }
    let user = var("USER")
        .or_else(|| var("USERNAME"))
        .and_then(|u| u.into_string().ok())
        .unwrap_or_else(|| "user".to_owned());
    std::env::temp_dir().join(format!("rxnode-cache-{user}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A relative `XDG_CACHE_HOME` (or `HOME`) is not a folder of the user's: it
    /// counts as unset, so the module never lands in the folder rxnode was started
    /// from (it did: `XDG_CACHE_HOME=.cache` put `.cache/rxnode/librxsim-….so` in
    /// the checkout).
    #[test]
    fn a_relative_cache_variable_counts_as_unset() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |v: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == v)
                    .map(|(_, x)| std::ffi::OsString::from(x))
            }
        };
        let abs = |p: &str| PathBuf::from(p);
        assert_eq!(
            cache_dir_from(env(&[("XDG_CACHE_HOME", "/c"), ("HOME", "/h")]), false),
            abs("/c/rxnode")
        );
        assert_eq!(
            cache_dir_from(env(&[("XDG_CACHE_HOME", ".cache"), ("HOME", "/h")]), false),
            abs("/h/.cache/rxnode")
        );
        assert_eq!(
            cache_dir_from(
                env(&[("XDG_CACHE_HOME", "c"), ("HOME", "h"), ("USER", "op")]),
                false
            ),
            std::env::temp_dir().join("rxnode-cache-op")
        );
        assert_eq!(
            cache_dir_from(env(&[("LOCALAPPDATA", "rel"), ("USERNAME", "op")]), true),
            std::env::temp_dir().join("rxnode-cache-op")
        );
    }

    #[test]
    fn embedded_module_is_a_shared_object() {
        assert!(RXSIM_MODULE.len() > 1000);
        #[cfg(target_os = "linux")]
        assert_eq!(&RXSIM_MODULE[..4], b"\x7fELF");
    }

    /// The module's folder is this user's own: a link is refused (whoever made it
    /// chose where the module is loaded from), and write access for others is
    /// taken away before the module is checked and loaded.
    #[cfg(unix)]
    #[test]
    fn the_module_folder_is_private_and_never_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        own_folder(&open).unwrap();
        let mode = std::fs::metadata(&open).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&open, &link).unwrap();
        let e = own_folder(&link).unwrap_err().to_string();
        assert!(e.contains("not a folder"), "{e}");
    }

    #[test]
    fn cache_dir_is_named_for_rxnode() {
        let d = cache_dir();
        assert!(d.to_string_lossy().contains("rxnode"), "{}", d.display());
    }
}
