//! Clock evidence outside SoapySDR: HackRF's `hackrf_clock` tool (read-only).

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long `hackrf_clock -i` may take, start to exit.
const LIMIT: Duration = Duration::from_secs(5);

/// The most of the tool's stdout that is read. `hackrf_clock -i` prints one
/// short line; a tool that prints more than this is not giving evidence.
const OUTPUT_CAP: usize = 64 * 1024;

// The two status lines `hackrf_clock -i` prints, exactly as
// greatscottgadgets/hackrf `host/hackrf-tools/src/hackrf_clock.c` writes them:
// `printf("CLKIN status: %s\n", clkin_status ? "clock signal detected" :
// "no clock signal detected")`.
/// `hackrf_clock -i`: a clock signal at CLKIN.
const DETECTED: &str = "CLKIN status: clock signal detected";
/// `hackrf_clock -i`: no clock signal at CLKIN.
const NOT_DETECTED: &str = "CLKIN status: no clock signal detected";

/// `hackrf_clock -i` CLKIN status for a `driver=hackrf` device, when the tool is
/// installed: `Some(true)` when it reports a clock signal at CLKIN. Read-only;
/// bounded to 5 s; any failure is simply "no evidence" (`None`).
pub fn hackrf_clkin_status(device_args: &str) -> Option<bool> {
    let kv = crate::radio::parse_args(device_args);
    let get = |key: &str| kv.get(key).map(String::as_str);
    if get("driver") != Some("hackrf") {
        return None;
    }
    clkin_status_from(Path::new("hackrf_clock"), get("serial"), LIMIT)
}

/// Run `program -i [-d SERIAL]` and read its CLKIN status line.
///
/// `None` ("no evidence") when the program cannot be started, does not close
/// its stdout and exit within `limit` (it is then killed and reaped), prints
/// more than `OUTPUT_CAP` bytes (killed as soon as that is known), or prints
/// no exact status line. stdout is read on its own thread while the program
/// runs, so a chatty program cannot block on a full pipe.
///
/// The exit status is not looked at: `hackrf_clock` prints the status line
/// only after `hackrf_get_clkin_status()` succeeded, and the one non-zero exit
/// that can follow it (with `-i` alone) is a failed `hackrf_close()`, which
/// does not make the reading wrong.
pub(crate) fn clkin_status_from(
    program: &Path,
    serial: Option<&str>,
    limit: Duration,
) -> Option<bool> {
    let deadline = Instant::now() + limit;
    let mut cmd = Command::new(program);
    cmd.arg("-i")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(serial) = serial {
        cmd.args(["-d", serial]);
    }
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            tracing::debug!(program = %program.display(), error = %e, "hackrf_clock: not started");
            return None;
        }
    };
    let Some(stdout) = child.stdout.take() else {
        stop(child);
        return None;
    };
    // The reader ends at EOF or one byte past the cap. Nobody joins it: after a
    // timeout it may still be blocked on a pipe that a grandchild of the
    // program holds open, and it ends by itself when that pipe closes.
    let (tx, rx) = mpsc::sync_channel(1);
    let reader = std::thread::Builder::new()
        .name("hackrf_clock stdout".into())
        .spawn(move || {
            let mut out = Vec::new();
            let read = stdout
                .take(OUTPUT_CAP as u64 + 1)
                .read_to_end(&mut out)
                .map(|_| out);
            let _ = tx.send(read);
        });
    if reader.is_err() {
        stop(child);
        return None;
    }
    let out = match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(Ok(out)) if out.len() <= OUTPUT_CAP => out,
        Ok(Ok(_)) => {
            tracing::debug!(
                cap = OUTPUT_CAP,
                "hackrf_clock: output over the cap, killed"
            );
            stop(child);
            return None;
        }
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "hackrf_clock: reading its output failed");
            stop(child);
            return None;
        }
        Err(_) => {
            tracing::debug!(?limit, "hackrf_clock: no end of output in time, killed");
            stop(child);
            return None;
        }
    };
    // stdout is closed; the exit normally follows at once.
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                tracing::debug!(?limit, "hackrf_clock: no exit in time, killed");
                stop(child);
                return None;
            }
        }
    }
    parse_hackrf_clkin(&String::from_utf8_lossy(&out))
}

/// Kill and reap, so no zombie is left behind.
fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Parse `hackrf_clock -i` output: a line that is exactly
/// "CLKIN status: clock signal detected" (`true`) or
/// "CLKIN status: no clock signal detected" (`false`). Anything else is not
/// evidence, and neither is output holding both lines.
fn parse_hackrf_clkin(text: &str) -> Option<bool> {
    let mut verdict = None;
    for line in text.lines() {
        let seen = match line {
            DETECTED => true,
            NOT_DETECTED => false,
            _ => continue,
        };
        if verdict.is_some_and(|v| v != seen) {
            return None;
        }
        verdict = Some(seen);
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hackrf_clock_output_is_read() {
        assert_eq!(
            parse_hackrf_clkin("Found HackRF\nCLKIN status: clock signal detected\n"),
            Some(true)
        );
        assert_eq!(
            parse_hackrf_clkin("CLKIN status: no clock signal detected\n"),
            Some(false)
        );
        assert_eq!(parse_hackrf_clkin("hackrf_clock: error\n"), None);
        assert_eq!(parse_hackrf_clkin(""), None);
    }

    #[test]
    fn only_the_exact_status_lines_count() {
        // The tool's own lines, also with Windows line ends and no final newline.
        assert_eq!(
            parse_hackrf_clkin("CLKIN status: clock signal detected\r\n"),
            Some(true)
        );
        assert_eq!(
            parse_hackrf_clkin("CLKIN status: no clock signal detected"),
            Some(false)
        );
        // Lookalikes are not evidence.
        for text in [
            "clkin status: clock signal detected\n",
            "CLKIN status: clock signal detected (maybe)\n",
            " CLKIN status: clock signal detected\n",
            "CLKIN: detected\n",
            "CLKIN status: not detected\n",
            "\t-i, --clkin: get CLKIN status\n",
            "hackrf_get_clkin_status() failed: HACKRF_ERROR_LIBUSB (-1000)\n",
        ] {
            assert_eq!(parse_hackrf_clkin(text), None, "{text:?}");
        }
        // Both answers at once is no answer.
        assert_eq!(
            parse_hackrf_clkin(
                "CLKIN status: clock signal detected\nCLKIN status: no clock signal detected\n"
            ),
            None
        );
    }

    #[test]
    fn only_hackrf_devices_ask_hackrf_clock() {
        assert_eq!(hackrf_clkin_status("driver=rxsim,serial=x"), None);
        assert_eq!(hackrf_clkin_status("serial=x"), None);
    }

    /// The process side, against fake `hackrf_clock` scripts. PATH is never
    /// touched: each test passes its script's path.
    #[cfg(unix)]
    mod process {
        use super::super::*;
        use std::path::PathBuf;

        /// A fake tool `dir/name` running `body` under `/bin/sh`, mode 0o755.
        ///
        /// The file is written by a short-lived `sh`, never through a file
        /// descriptor of this process: a write descriptor open here while
        /// another test thread forks would leak into that child until it execs,
        /// and executing the script would then fail with ETXTBSY
        /// (rust-lang/rust#114554).
        fn fake_tool(dir: &Path, name: &str, body: &str) -> PathBuf {
            use std::io::Write;
            let path = dir.join(name);
            let mut sh = Command::new("/bin/sh")
                .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
                .arg(&path)
                .stdin(Stdio::piped())
                .spawn()
                .expect("spawn sh");
            let mut stdin = sh.stdin.take().expect("sh stdin");
            stdin
                .write_all(format!("#!/bin/sh\n{body}\n").as_bytes())
                .expect("write the script");
            drop(stdin);
            assert!(sh.wait().expect("wait for sh").success());
            path
        }

        /// `dir` as a shell-quoted word for script bodies.
        fn quoted(dir: &Path) -> String {
            let s = dir.to_str().expect("temp dir path is UTF-8");
            assert!(!s.contains('\''));
            format!("'{s}'")
        }

        const SHORT: Duration = Duration::from_millis(300);
        const ROOMY: Duration = Duration::from_secs(10);

        /// (a) detected → true, (b) no signal → false, (c) garbage → no evidence.
        #[test]
        fn the_status_line_decides() {
            for (body, want) in [
                ("echo 'CLKIN status: clock signal detected'", Some(true)),
                ("echo 'CLKIN status: no clock signal detected'", Some(false)),
                (
                    "echo 'hackrf_clock - HackRF clock configuration utility'; echo '¿CLKIN? detected'",
                    None,
                ),
            ] {
                let dir = tempfile::tempdir().expect("tempdir");
                let tool = fake_tool(dir.path(), "hackrf_clock", body);
                assert_eq!(clkin_status_from(&tool, None, ROOMY), want, "{body}");
            }
        }

        #[test]
        fn failing_tool_is_no_evidence() {
            let dir = tempfile::tempdir().expect("tempdir");
            let silent = fake_tool(dir.path(), "silent", "exit 1");
            assert_eq!(clkin_status_from(&silent, None, ROOMY), None);
            // What hackrf_clock prints when no HackRF is plugged in.
            let no_device = fake_tool(
                dir.path(),
                "no_device",
                "echo 'hackrf_open() failed: HACKRF_ERROR_NOT_FOUND (-5)'; exit 1",
            );
            assert_eq!(clkin_status_from(&no_device, None, ROOMY), None);
        }

        #[test]
        fn status_then_failed_close_still_counts() {
            // hackrf_clock.c: the status is printed, then a failed
            // hackrf_close() makes it exit with EXIT_FAILURE.
            let dir = tempfile::tempdir().expect("tempdir");
            let tool = fake_tool(
                dir.path(),
                "hackrf_clock",
                "echo 'CLKIN status: no clock signal detected'\n\
                 echo 'hackrf_close() failed: HACKRF_ERROR_LIBUSB (-1000)'\n\
                 exit 1",
            );
            assert_eq!(clkin_status_from(&tool, None, ROOMY), Some(false));
        }

        #[test]
        fn hung_tool_is_killed_at_the_limit() {
            let dir = tempfile::tempdir().expect("tempdir");
            let pid_file = dir.path().join("pid");
            let tool = fake_tool(
                dir.path(),
                "hackrf_clock",
                &format!("echo $$ > {}/pid\nexec sleep 30", quoted(dir.path())),
            );
            let started = Instant::now();
            assert_eq!(clkin_status_from(&tool, None, SHORT), None);
            let took = started.elapsed();
            assert!(took < SHORT + Duration::from_secs(1), "took {took:?}");
            let pid = std::fs::read_to_string(&pid_file).expect("the script wrote its pid");
            let pid = pid.trim();
            assert!(!pid.is_empty());
            // Killed and reaped: the pid no longer names a process (a zombie
            // would still answer `kill -0`).
            let alive = Command::new("/bin/sh")
                .args(["-c", "kill -0 \"$1\" 2>/dev/null", "sh", pid])
                .status()
                .expect("run kill -0");
            assert!(!alive.success(), "pid {pid} is still there");
        }

        #[test]
        fn a_megabyte_of_output_does_not_stall() {
            // 1 MiB, then the status line. The old code read stdout only after
            // the exit, so the tool blocked on the full pipe until the 5 s
            // bound. Now the output is read as it comes, and past the cap the
            // tool is killed at once: this much output is not hackrf_clock -i.
            let dir = tempfile::tempdir().expect("tempdir");
            let mut out = vec![b'x'; 1 << 20];
            out.extend_from_slice(b"\nCLKIN status: clock signal detected\n");
            std::fs::write(dir.path().join("out"), &out).expect("write the output");
            let tool = fake_tool(
                dir.path(),
                "hackrf_clock",
                &format!("exec cat {}/out", quoted(dir.path())),
            );
            let started = Instant::now();
            assert_eq!(clkin_status_from(&tool, None, ROOMY), None);
            let took = started.elapsed();
            assert!(took < Duration::from_secs(3), "took {took:?}");
        }

        #[test]
        fn output_up_to_the_cap_is_read_and_one_byte_more_is_not() {
            let dir = tempfile::tempdir().expect("tempdir");
            let line = format!("\n{DETECTED}\n");
            let mut at_cap = vec![b'x'; OUTPUT_CAP - line.len()];
            at_cap.extend_from_slice(line.as_bytes());
            assert_eq!(at_cap.len(), OUTPUT_CAP);
            let mut over = vec![b'x'; OUTPUT_CAP - line.len() + 1];
            over.extend_from_slice(line.as_bytes());
            std::fs::write(dir.path().join("at_cap.out"), &at_cap).expect("write");
            std::fs::write(dir.path().join("over.out"), &over).expect("write");
            let at = fake_tool(
                dir.path(),
                "at_cap",
                &format!("exec cat {}/at_cap.out", quoted(dir.path())),
            );
            let past = fake_tool(
                dir.path(),
                "over",
                &format!("exec cat {}/over.out", quoted(dir.path())),
            );
            assert_eq!(clkin_status_from(&at, None, ROOMY), Some(true));
            assert_eq!(clkin_status_from(&past, None, ROOMY), None);
        }

        #[test]
        fn serial_goes_after_dash_i_as_dash_d() {
            let dir = tempfile::tempdir().expect("tempdir");
            let tool = fake_tool(
                dir.path(),
                "hackrf_clock",
                &format!(
                    "printf '%s\\n' \"$@\" > {}/args\necho 'CLKIN status: clock signal detected'",
                    quoted(dir.path())
                ),
            );
            let args = dir.path().join("args");
            let serial = "0000000000000000a06063c8234e925f";
            assert_eq!(clkin_status_from(&tool, Some(serial), ROOMY), Some(true));
            assert_eq!(
                std::fs::read_to_string(&args).expect("args"),
                format!("-i\n-d\n{serial}\n")
            );
            assert_eq!(clkin_status_from(&tool, None, ROOMY), Some(true));
            assert_eq!(std::fs::read_to_string(&args).expect("args"), "-i\n");
        }

        #[test]
        fn missing_program_is_no_evidence() {
            let dir = tempfile::tempdir().expect("tempdir");
            let started = Instant::now();
            assert_eq!(
                clkin_status_from(&dir.path().join("hackrf_clock"), None, ROOMY),
                None
            );
            assert!(started.elapsed() < Duration::from_secs(1));
        }
    }
}
