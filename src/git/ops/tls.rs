//! The CA certificates of HTTPS remotes, loaded when a remote may need them.
//!
//! On Linux and the BSDs libgit2 speaks TLS through OpenSSL, and at its
//! initialisation it reads the system's whole CA bundle into its one TLS
//! context (the file git2 finds with `openssl-probe`, about 140 certificates):
//! some 20 ms of CPU in every process, though a poll of a local or SSH remote
//! never opens a TLS connection. [`init`] initialises libgit2 with that one file
//! left out — the certificate directory and every other setting as before — and
//! [`ready`] / [`ready_for`] load the same file into the same context before
//! the first connection that may use TLS. An HTTPS remote is verified against
//! exactly the certificates it was verified against before; a process that only
//! talks to `file://`, local or SSH remotes never reads them
//! (docs/benchmarks.md#watcher-idle-and-poll-cost).
//!
//! Windows (WinHTTP) and macOS (Security framework) use the system's store and
//! have nothing to defer: there all three are no-ops (libgit2 initialises at its
//! first use, as before).

/// Initialise libgit2 with the CA bundle deferred. Call it once at start, while
/// the process has a single thread (it sets an environment variable for the
/// duration of libgit2's initialisation and puts it back).
pub fn init() {
    imp::init();
}

/// Load the deferred CA bundle, if there is one and it is not loaded yet, before
/// a connection to a remote whose URL is not known here.
pub(crate) fn ready() {
    imp::ready();
}

/// [`ready`] when `remote` may open a TLS connection ([`may_use_tls`] of its
/// URL or push URL, a remote without a URL included): a poll of a local, `file://`,
/// `git://` or SSH remote leaves the bundle unread.
pub(crate) fn ready_for(remote: &git2::Remote<'_>) {
    let urls = [remote.url(), remote.pushurl()];
    if remote.url().is_none() || urls.into_iter().flatten().any(may_use_tls) {
        ready();
    }
}

/// Whether libgit2 may open a TLS connection for `url`: every scheme but
/// `file://`, `git://` and SSH's (`ssh://`, `ssh+git://`, `git+ssh://`), so
/// `http://` (it may redirect to `https://`), `https://` and anything unknown.
/// A URL without `://` is a local path or an SSH `host:path` (libgit2 picks the
/// transport the same way).
pub(crate) fn may_use_tls(url: &str) -> bool {
    match url.find("://") {
        None => false,
        Some(i) => !matches!(
            url[..i].to_ascii_lowercase().as_str(),
            "file" | "git" | "ssh" | "ssh+git" | "git+ssh"
        ),
    }
}

#[cfg(all(unix, not(target_os = "macos"), not(target_os = "ios")))]
mod imp {
    use std::path::PathBuf;
    use std::sync::{Once, OnceLock};

    /// OpenSSL's variable for the CA bundle it loads into a new TLS context.
    const CERT_FILE_ENV: &str = "SSL_CERT_FILE";

    /// The CA bundle left out of libgit2's initialisation, to load on demand.
    static DEFERRED: OnceLock<PathBuf> = OnceLock::new();

    pub(super) fn init() {
        // What git2 itself finds (the same crate and version): an existing
        // SSL_CERT_FILE / SSL_CERT_DIR, else the first bundle and directory in
        // the usual places.
        let Some(file) = openssl_probe::probe().cert_file else {
            // No bundle found: libgit2 initialises at its first use and
            // OpenSSL loads its built-in default, as before.
            return;
        };
        // SAFETY (environment): called from `main` before any other thread
        // exists, so nothing reads the environment meanwhile. libgit2 creates
        // its TLS context during the `git2` call below and loads the file named
        // by SSL_CERT_FILE into it; `/dev/null` exists (git2's own probe keeps
        // it) and holds no certificate, so nothing is read. The variable is
        // then set to the bundle — what git2 sets it to — for child processes
        // (credential helpers) and OpenSSL's later readers alike.
        std::env::set_var(CERT_FILE_ENV, "/dev/null");
        // libgit2's default, set here for the initialisation it triggers.
        git2::opts::enable_caching(true);
        std::env::set_var(CERT_FILE_ENV, &file);
        let _ = DEFERRED.set(file);
    }

    pub(super) fn ready() {
        static LOAD: Once = Once::new();
        let Some(file) = DEFERRED.get() else {
            return;
        };
        LOAD.call_once(|| {
            // SAFETY: libgit2 adds the file's certificates to its TLS
            // context's store (OpenSSL locks the store). Every connection of
            // this process is made with callbacks from `git::ops`, which call
            // this first, so no handshake uses the context before the `Once`
            // has completed.
            if let Err(e) = unsafe { git2::opts::set_ssl_cert_file(file) } {
                // Before deferral OpenSSL ignored an unreadable bundle the same
                // way; a server is then checked against the directory alone.
                tracing::warn!(
                    "cannot load the CA certificates {}: {}",
                    file.display(),
                    e.message()
                );
            }
        });
    }
}

#[cfg(not(all(unix, not(target_os = "macos"), not(target_os = "ios"))))]
mod imp {
    pub(super) fn init() {}
    pub(super) fn ready() {}
}

#[cfg(test)]
mod tests {
    use super::may_use_tls;

    #[test]
    fn only_schemes_that_cannot_use_tls_leave_the_bundle_unread() {
        for url in [
            "/srv/git/rx.git",
            "./origin.git",
            "file:///srv/git/rx.git",
            "FILE:///srv/git/rx.git",
            "git@example.com:lab/rx.git",
            "ssh://git@example.com/lab/rx.git",
            "git+ssh://example.com/lab/rx.git",
            "ssh+git://example.com/lab/rx.git",
            "git://example.com/lab/rx.git",
        ] {
            assert!(!may_use_tls(url), "{url}");
        }
        for url in [
            "https://example.com/lab/rx.git",
            "HTTPS://example.com/lab/rx.git",
            "http://example.com/lab/rx.git",
            "https://user@example.com/lab/rx.git",
            "foo://example.com/lab/rx.git",
        ] {
            assert!(may_use_tls(url), "{url}");
        }
    }
}
