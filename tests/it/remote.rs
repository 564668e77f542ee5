//! Radios on other hosts. A real `SoapySDRServer` (Debian `soapyremote-server`)
//! serves the bundled rxsim module — and only it — on a free loopback port; rxnode and
//! `SoapySDRUtil` reach it through the SoapyRemote client module
//! (`soapysdr0.8-module-remote`) as `driver=remote,remote=tcp://127.0.0.1:PORT,…`.
//!
//! The server needs avahi-daemon on the system D-Bus: `scripts/remote-services.sh`
//! starts both (as root in CI). A test that cannot start the server FAILS with the
//! reason; none passes by skipping.
//!
//! Also here: the native CS16 → SigMF `ci16_le` recording path, validated by the
//! `sigmf` Python package and checked with numpy (pip install sigmf numpy).
use crate::util::{free_port, read_lines, run_fed, show, spawn_fed, text, unix_now, Lab};
use serde_json::Value;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

mod calibration;
mod capture;
mod health;
mod plans;
mod recording;

/// The system D-Bus and avahi-daemon, started once per test binary.
fn services() {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    let r = DONE.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/remote-services.sh");
        let out = Command::new("bash")
            .arg(&script)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} failed (SoapySDRServer needs avahi-daemon on the system D-Bus; run it as root): {}{}",
                script.display(),
                text(&out.stdout),
                text(&out.stderr)
            ))
        }
    });
    if let Err(e) = r {
        panic!("{e}");
    }
}

/// Module files and an empty SoapySDR root shared by the tests of this binary.
struct Modules {
    _dir: tempfile::TempDir,
    /// The bundled rxsim module as `rxnode --sim` installs it.
    rxsim: PathBuf,
    /// The SoapyRemote client module of the system.
    remote: PathBuf,
    /// A SoapySDR root with no modules, so nothing else loads.
    empty_root: PathBuf,
}

fn modules() -> &'static Modules {
    static M: OnceLock<Modules> = OnceLock::new();
    M.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let empty_root = dir.path().join("empty-root");
        std::fs::create_dir_all(&empty_root).unwrap();
        // `rxnode --sim` writes the embedded module to $XDG_CACHE_HOME/rxnode/.
        let out = crate::util::rxnode_bin()
            .args(["--sim", "inventory", "--dry-run", "--json"])
            .env("XDG_CACHE_HOME", &cache)
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        expect_exit!(out, 0, "rxnode --sim inventory");
        let rxsim = std::fs::read_dir(cache.join("rxnode"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("librxsim-"))
            })
            .expect("rxnode --sim installed librxsim-*.so");
        Modules {
            _dir: dir,
            rxsim,
            remote: remote_module(),
            empty_root,
        }
    })
}

/// libremoteSupport.so from the Debian package (any multiarch dir) or /usr/local.
fn remote_module() -> PathBuf {
    let mut dirs = vec![
        PathBuf::from("/usr/lib/SoapySDR/modules0.8"),
        PathBuf::from("/usr/local/lib/SoapySDR/modules0.8"),
    ];
    if let Ok(rd) = std::fs::read_dir("/usr/lib") {
        for e in rd.flatten() {
            dirs.push(e.path().join("SoapySDR/modules0.8"));
        }
    }
    dirs.iter()
        .map(|d| d.join("libremoteSupport.so"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "the SoapyRemote client module libremoteSupport.so is not installed \
                 (apt-get install soapysdr0.8-module-remote; scripts/setup.sh does it)"
            )
        })
}

/// A running `SoapySDRServer` on 127.0.0.1 with rxsim as its only module.
struct Server {
    child: Option<Child>,
    port: u16,
    log: PathBuf,
    /// The server-side rxsim event log (`RXSIM_EVENT_LOG` of the server process).
    events: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        services();
        let m = modules();
        let mut last = String::new();
        // A port found free may be taken before the server binds it: try a few.
        for _ in 0..3 {
            let dir = tempfile::tempdir().unwrap();
            let port = free_port();
            let log = dir.path().join("server.log");
            let events = dir.path().join("rxsim-events.log");
            let out = std::fs::File::create(&log).unwrap();
            let err = out.try_clone().unwrap();
            let child = Command::new("SoapySDRServer")
                .arg(format!("--bind=127.0.0.1:{port}"))
                .env("SOAPY_SDR_PLUGIN_PATH", &m.rxsim)
                .env("SOAPY_SDR_ROOT", &m.empty_root)
                .env("RXSIM_EVENT_LOG", &events)
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err)
                .spawn()
                .unwrap_or_else(|e| {
                    panic!(
                        "cannot start SoapySDRServer ({e}): apt-get install soapyremote-server \
                         (scripts/setup.sh does it)"
                    )
                });
            let mut s = Server {
                child: Some(child),
                port,
                log,
                events,
                _dir: dir,
            };
            match s.wait_ready() {
                Ok(()) => return s,
                Err(e) => last = e,
            }
        }
        panic!("SoapySDRServer did not start with rxsim on 127.0.0.1: {last}");
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Ready once it listens, has registered with avahi, and is still alive.
    fn wait_ready(&mut self) -> Result<(), String> {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(15) {
            if let Some(st) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                return Err(format!(
                    "SoapySDRServer exited ({st}):\n{}",
                    self.log_text()
                ));
            }
            let log = self.log_text();
            if log.contains("Exiting prematurely") {
                return Err(format!("SoapySDRServer gave up:\n{log}"));
            }
            if log.contains("Press Ctrl+C to stop the server")
                && TcpStream::connect(("127.0.0.1", self.port)).is_ok()
            {
                // Avahi trouble shows right after the banner: give it a moment.
                std::thread::sleep(Duration::from_millis(300));
                let log = self.log_text();
                let alive = self
                    .child
                    .as_mut()
                    .is_some_and(|c| matches!(c.try_wait(), Ok(None)));
                if alive && !log.contains("Exiting prematurely") {
                    return Ok(());
                }
                return Err(format!("SoapySDRServer stopped after start-up:\n{log}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!(
            "SoapySDRServer not ready on 127.0.0.1:{} after 15 s:\n{}",
            self.port,
            self.log_text()
        ))
    }

    fn url(&self) -> String {
        format!("tcp://127.0.0.1:{}", self.port)
    }

    /// Device args of the served rxsim with its model args `extra`.
    fn device(&self, extra: &str) -> String {
        let mut a = format!("driver=remote,remote={},remote:driver=rxsim", self.url());
        if !extra.is_empty() {
            a.push(',');
            a.push_str(extra);
        }
        a
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn events(&self) -> Vec<String> {
        read_lines(&self.events)
    }

    /// Send `sig` to the server process (SIGSTOP freezes it, SIGCONT resumes it).
    #[cfg(unix)]
    fn signal(&self, sig: libc::c_int) {
        let pid = self.child.as_ref().expect("server running").id();
        crate::util::signal(pid, sig);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// rxnode as a SoapySDR client with only the SoapyRemote module (no `--sim`).
fn client_env(c: &mut Command) -> &mut Command {
    let m = modules();
    c.env("SOAPY_SDR_PLUGIN_PATH", &m.remote)
        .env("SOAPY_SDR_ROOT", &m.empty_root)
        .env_remove("RXNODE_SIM")
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
}

fn client() -> Command {
    let mut c = crate::util::rxnode_bin();
    client_env(&mut c);
    c
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", show(o)))
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} is not a number in {v}"))
}

/// `rxnode capture --json` with `extra` arguments.
fn capture(cmd: &mut Command, device: &str, extra: &[&str]) -> Output {
    cmd.args(["capture", "--json", "--device", device])
        .args(["--frequency-hz", "100e6", "--gain-db", "20"])
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The host's socket-buffer caps allow a SoapyRemote UDP window of `bytes`, or the test
/// stops here with the one line that fixes the machine: the window is the host's
/// setting (`scripts/socket-caps.sh`, docs/hardware.md "Serving a radio"), not
/// something rxnode controls, and a capped window would fail the test further on with
/// a less helpful message.
fn require_socket_caps(bytes: u64) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let cap = |k: &str| -> u64 {
        std::fs::read_to_string(format!("/proc/sys/net/core/{k}"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    };
    let (r, w) = (cap("rmem_max"), cap("wmem_max"));
    assert!(
        r >= bytes && w >= bytes,
        "host socket-buffer caps too small for a {bytes}-byte SoapyRemote window \
         (net.core.rmem_max={r}, wmem_max={w}); fix, as root on this host: \
         sysctl -w net.core.rmem_max=104857600 net.core.wmem_max=104857600"
    );
}
