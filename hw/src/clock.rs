//! Clock evidence outside SoapySDR: HackRF's `hackrf_clock` tool (read-only).

/// `hackrf_clock -i` CLKIN status for a `driver=hackrf` device, when the tool is
/// installed: `Some(true)` when it reports a clock signal at CLKIN. Read-only;
/// bounded to 5 s; any failure is simply "no evidence" (`None`).
pub fn hackrf_clkin_status(device_args: &str) -> Option<bool> {
    let kv = crate::radio::parse_args(device_args);
    let get = |key: &str| kv.get(key).map(String::as_str);
    if get("driver") != Some("hackrf") {
        return None;
    }
    let mut cmd = std::process::Command::new("hackrf_clock");
    cmd.arg("-i")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    if let Some(serial) = get("serial") {
        cmd.args(["-d", serial]);
    }
    let mut child = cmd.spawn().ok()?;
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < std::time::Duration::from_secs(5) => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    parse_hackrf_clkin(&String::from_utf8_lossy(&out.stdout))
}

/// Parse `hackrf_clock -i` output ("CLKIN status: clock signal detected" /
/// "CLKIN status: no clock signal detected").
fn parse_hackrf_clkin(text: &str) -> Option<bool> {
    text.lines()
        .map(str::to_ascii_lowercase)
        .find(|l| l.contains("clkin"))
        .and_then(|l| {
            if l.contains("no clock") || l.contains("not detected") {
                Some(false)
            } else if l.contains("detected") {
                Some(true)
            } else {
                None
            }
        })
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
    fn only_hackrf_devices_ask_hackrf_clock() {
        assert_eq!(hackrf_clkin_status("driver=rxsim,serial=x"), None);
        assert_eq!(hackrf_clkin_status("serial=x"), None);
    }
}
