//! A child on a real pseudo-terminal: its stdin, stdout and stderr are the
//! terminal's slave side, so `isatty` holds and `tcflush` reaches a real input
//! queue; the test types into the master side and reads what the child drew.
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct Pty {
    master: File,
    seen: Arc<Mutex<Vec<u8>>>,
    /// Set when the reader has read everything the child drew (EOF or EIO).
    drained: Arc<std::sync::atomic::AtomicBool>,
    pub child: Child,
}

impl Pty {
    /// Spawn `cmd` with a fresh pseudo-terminal as its stdin, stdout and stderr.
    pub fn spawn(cmd: &mut Command) -> Pty {
        Pty::spawn_typed(cmd, "")
    }

    /// [`Pty::spawn`], with `typed` already typed at the terminal before the
    /// child starts (so before it can have drawn anything).
    pub fn spawn_typed(cmd: &mut Command, typed: &str) -> Pty {
        Pty::spawn_in(cmd, typed, true)
    }

    /// [`Pty::spawn`] on a terminal in non-canonical mode (`stty -icanon min 1`,
    /// as a full-screen program that crashed leaves it): a read takes every byte
    /// typed so far, several lines at once.
    pub fn spawn_noncanonical(cmd: &mut Command) -> Pty {
        Pty::spawn_in(cmd, "", false)
    }

    fn spawn_in(cmd: &mut Command, typed: &str, canonical: bool) -> Pty {
        // SAFETY: plain libc calls on a descriptor this function owns; each result is checked.
        let master = unsafe {
            let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(fd >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
            assert_eq!(libc::grantpt(fd), 0, "grantpt");
            assert_eq!(libc::unlockpt(fd), 0, "unlockpt");
            File::from_raw_fd(fd)
        };
        let mut name = [0 as libc::c_char; 256];
        // SAFETY: the buffer is as long as the length given.
        let r = unsafe { libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()) };
        assert_eq!(r, 0, "ptsname_r");
        // SAFETY: ptsname_r wrote a NUL-terminated path into the buffer.
        let path = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
            .to_str()
            .unwrap()
            .to_owned();
        let open = || {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .unwrap()
        };
        let (i, o, e) = (open(), open(), open());
        if !canonical {
            // SAFETY: tcgetattr/tcsetattr on the slave descriptor `i` owns; a zeroed
            // termios is filled by tcgetattr before use; each result is checked.
            unsafe {
                let mut t: libc::termios = std::mem::zeroed();
                assert_eq!(libc::tcgetattr(i.as_raw_fd(), &mut t), 0, "tcgetattr");
                t.c_lflag &= !libc::ICANON;
                t.c_cc[libc::VMIN] = 1;
                t.c_cc[libc::VTIME] = 0;
                assert_eq!(
                    libc::tcsetattr(i.as_raw_fd(), libc::TCSANOW, &t),
                    0,
                    "tcsetattr"
                );
            }
        }
        (&master).write_all(typed.as_bytes()).unwrap();
        let child = cmd
            .stdin(Stdio::from(i))
            .stdout(Stdio::from(o))
            .stderr(Stdio::from(e))
            .spawn()
            .unwrap();
        // The command still holds the slave descriptors it was given; dropped here,
        // the child is the last holder, so the reader sees EIO when it exits.
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let drained = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut reader = master.try_clone().unwrap();
        let (into, done) = (seen.clone(), drained.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with EIO once the child (the last slave holder) is gone.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                into.lock().unwrap().extend_from_slice(&buf[..n]);
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        Pty {
            master,
            seen,
            drained,
            child,
        }
    }

    /// Type `s` at the terminal.
    pub fn type_text(&mut self, s: &str) {
        self.master.write_all(s.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// Everything the child drew so far (and the terminal's echo), lossy.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    /// How many times `needle` is on the screen.
    pub fn count(&self, needle: &str) -> usize {
        self.screen().matches(needle).count()
    }

    /// Wait until the child exits, then until everything it drew before it exited
    /// has been read (the screen is whole: a message written just before the exit
    /// is on it); its exit status. Panics with the screen after `secs`.
    pub fn exited(&mut self, secs: u64) -> std::process::ExitStatus {
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(secs),
                "did not exit within {secs} s; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader ends at EIO once no process holds the terminal; a grandchild
        // that still does keeps it open, so this wait is bounded too.
        while !self.drained.load(std::sync::atomic::Ordering::SeqCst)
            && t0.elapsed() < Duration::from_secs(secs)
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        status
    }

    /// Wait until `needle` is on the screen `n` times; panics with the screen after `secs`.
    pub fn wait_for(&self, needle: &str, n: usize, secs: u64) {
        let t0 = Instant::now();
        while self.count(needle) < n {
            assert!(
                t0.elapsed() < Duration::from_secs(secs),
                "{needle:?} not shown {n} time(s) within {secs} s; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
