//! The CA certificates of HTTPS remotes: libgit2 starts without them and they are
//! loaded before the first connection that may use TLS (src/git/ops/tls.rs). A real
//! `openssl s_server` on loopback with a certificate made here stands in for an
//! HTTPS Git server; it answers any request with a web page, so a fetch that got
//! past TLS fails on the content type instead.
use crate::util::{free_port, git, text, Lab, BRANCH};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `openssl s_server` with a self-signed certificate for 127.0.0.1 (also its own CA,
/// `cert`); killed when dropped.
struct TlsServer {
    child: Child,
    port: u16,
    cert: std::path::PathBuf,
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run openssl (scripts/setup.sh --tests): {e}"));
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        text(&out.stderr)
    );
}

fn tls_server(dir: &Path) -> TlsServer {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
    );
    let port = free_port();
    let child = Command::new("openssl")
        .args(["s_server", "-quiet", "-www", "-cert", "server.pem"])
        .args(["-key", "server.key", "-accept"])
        .arg(format!("127.0.0.1:{port}"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start openssl s_server: {e}"));
    let server = TlsServer {
        child,
        port,
        cert: dir.join("server.pem"),
    };
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "openssl s_server did not listen on 127.0.0.1:{port} within 20 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

/// `watch --once` of the lab's checkout with `origin` at `url`, and `SSL_CERT_FILE`
/// set to `ca_file` when given (else whatever this machine has).
fn watch_once_at(lab: &Lab, url: &str, ca_file: Option<&Path>) -> Output {
    git(&lab.rx, &["remote", "set-url", "origin", url]);
    let mut c = lab.rxnode();
    c.args(["watch", "--once", "--no-prompt"]);
    if let Some(f) = ca_file {
        c.env("SSL_CERT_FILE", f);
    }
    c.stdin(Stdio::null()).output().unwrap()
}

/// A server whose certificate this machine does not trust is refused at the TLS
/// handshake, and the error names the certificate and the URL: deferring the CA
/// bundle loads nothing less and turns no check off.
#[test]
fn an_https_remote_with_an_untrusted_certificate_is_refused_naming_it() {
    let lab = Lab::new();
    let server = tls_server(lab.dir.path());
    let url = format!("https://127.0.0.1:{}/origin.git", server.port);
    let out = watch_once_at(&lab, &url, None);
    let se = text(&out.stderr);
    assert!(!out.status.success(), "{se}");
    assert!(
        se.contains("the SSL certificate is invalid")
            && se.contains(&format!("the TLS certificate of {url} did not verify")),
        "{se}"
    );
    assert!(!se.contains("content-type"), "got past TLS: {se}");
}

/// The same server with its certificate as the CA bundle (`SSL_CERT_FILE`): the
/// handshake verifies — the bundle left out of libgit2's start was loaded before
/// the connection — and the fetch fails only on what the web server sends back.
#[test]
fn an_https_remote_signed_by_the_ca_bundle_passes_verification() {
    let lab = Lab::new();
    let server = tls_server(lab.dir.path());
    let url = format!("https://127.0.0.1:{}/origin.git", server.port);
    let out = watch_once_at(&lab, &url, Some(&server.cert));
    let se = text(&out.stderr);
    assert!(!out.status.success(), "{se}");
    assert!(
        se.contains("invalid content-type") && !se.contains("certificate"),
        "{se}"
    );
}

/// A `file://` origin is polled and its task found, and the CA bundle is never
/// opened: `SSL_CERT_FILE` names a FIFO nobody writes to, so reading it would
/// block the poll for ever.
#[cfg(unix)]
#[test]
fn a_file_url_poll_finds_the_task_without_reading_the_ca_bundle() {
    let lab = Lab::new();
    let task = Lab::task("T_FILE_URL", &lab.main_head(), &[]);
    let commit = lab.post(&task);
    let fifo = lab.dir.path().join("ca-bundle.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo {}", fifo.display());
    git(
        &lab.rx,
        &[
            "remote",
            "set-url",
            "origin",
            &crate::util::file_url(&lab.origin),
        ],
    );
    let mut child = lab
        .rxnode()
        .args(["watch", "--once", "--no-prompt"])
        .env("SSL_CERT_FILE", &fifo)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "watch --once of a file:// origin still runs after 60 s (blocked opening the CA bundle?): {}",
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    expect_exit!(out, 0);
    let so = text(&out.stdout);
    assert!(so.contains("T_FILE_URL"), "{so}");
    assert_eq!(lab.state()["remote_marker"], commit.as_str());
    let tracking = git(
        &lab.rx,
        &["rev-parse", &format!("refs/remotes/origin/{BRANCH}")],
    );
    assert_eq!(tracking.trim(), commit);
}
