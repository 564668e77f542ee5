//! Which other hosts a device string makes this node reach, read as SoapySDR
//! reads it, and the node policy's verdict on a task's receive step that does
//! (docs/safety.md#a-tasks-reach-on-the-network). The branch decides nothing
//! about the network: a task names a radio of another host only when the local
//! policy lists it.
use crate::error::Error;
use crate::plan::Step;
use crate::policy::Policy;

/// Whitespace as SoapySDR's `KwargsFromString` trims it around keys and values
/// (C `isspace`): ASCII only, so a value that ends in another space character is
/// compared with it, as the driver reads it.
fn soapy_trim(s: &str) -> &str {
    s.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r'))
}

/// Device args as SoapySDR's `KwargsFromString` reads them, in order: a part
/// without `=` is a key with an empty value, a value runs to the next comma (it
/// may hold `=`), keys and values are trimmed, an empty key is dropped. A key
/// given twice appears twice here (SoapySDR keeps the last).
pub(crate) fn kwargs(device: &str) -> Vec<(&str, &str)> {
    device
        .split(',')
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .map(|(k, v)| (soapy_trim(k), soapy_trim(v)))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// Whether the device arg `key=value` reaches a radio over the network through its
/// own driver (not SoapyRemote): UHD's `addr=`/`addr0=`/`second_addr=`/`mgmt_addr=`,
/// PlutoSDR's `hostname=` and `uri=ip:…`, and any `ip=`, `host=`, `url=` or value
/// with `://`. Fails closed: an `uri=` that is not a local bus (`usb:`, `local:`,
/// `serial:`) counts as a network one.
pub(crate) fn is_network_arg(key: &str, value: &str) -> bool {
    let k = key.to_ascii_lowercase();
    // `addr0`, `mgmt_addr1`, …: the same key with a channel number.
    let base = k.trim_end_matches(|c: char| c.is_ascii_digit());
    matches!(
        base,
        "addr" | "second_addr" | "mgmt_addr" | "ip" | "host" | "hostname" | "url"
    ) || (k == "uri"
        && !["usb:", "local:", "serial:"]
            .iter()
            .any(|p| value.starts_with(p)))
        || value.contains("://")
}

/// One way a device string reaches another host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    /// The device arg as SoapySDR reads it (`remote=tcp://10.0.0.9:55132`,
    /// `addr=192.168.10.2`), or the discovery it starts.
    pub arg: String,
    /// What a policy's `allowed_remote_servers` lists to allow it: a SoapyRemote
    /// server by its URL, a network radio by its `key=value`; `None` for a search
    /// of the LAN, which no list allows.
    pub listed: Option<String>,
}

/// Every host `device` makes this node reach, in order, each once: SoapyRemote's
/// `remote=` (every value given: SoapySDR keeps the last, this fails closed), a
/// network radio's address ([`is_network_arg`]), and the search of the LAN for
/// SoapyRemote servers that args without `driver=`, or `driver=remote` without
/// `remote=`, start. `remote:KEY` args go to the server, which reaches on from
/// there; the server itself is the reach counted here.
pub fn reaches(device: &str) -> Vec<Reach> {
    let kv = kwargs(device);
    let mut out: Vec<Reach> = Vec::new();
    let mut add = |r: Reach| {
        if !out.contains(&r) {
            out.push(r);
        }
    };
    // SoapySDR keeps the last `driver`: that module alone is asked; with none,
    // every module, SoapyRemote's too, and it searches the LAN when no `remote=`.
    let driver = kv
        .iter()
        .rev()
        .find(|(k, _)| *k == "driver")
        .map(|(_, v)| *v);
    let remote_given = kv.iter().any(|(k, _)| *k == "remote");
    let remote_asked = matches!(driver, None | Some("") | Some("remote"));
    if remote_asked && !remote_given {
        add(Reach {
            arg: match driver {
                Some("remote") => "driver=remote without remote=".to_owned(),
                _ => "no driver=".to_owned(),
            },
            listed: None,
        });
    }
    for (k, v) in &kv {
        if *k == "remote" {
            add(Reach {
                arg: format!("remote={v}"),
                listed: Some((*v).to_owned()),
            });
        } else if !k.starts_with("remote:") && is_network_arg(k, v) {
            add(Reach {
                arg: format!("{k}={v}"),
                listed: Some(format!("{k}={v}")),
            });
        }
    }
    out
}

/// The devices a step opens (both of a `clkin_compare`).
fn devices_of(step: &Step) -> Vec<&str> {
    match step {
        Step::ClkinCompare(c) => c.devices.iter().map(String::as_str).collect(),
        other => other.device().into_iter().collect(),
    }
}

/// The node policy's verdict on where a task's receive step reaches: every host
/// its devices name ([`reaches`]) must be listed in `rx.allowed_remote_servers`
/// (or `tx.allowed_remote_servers`: a radio the node lets transmit may receive),
/// and a search of the LAN is refused whatever the lists say. A `tx_tone` step is
/// judged by [`crate::check_tx_step`] against `tx.allowed_remote_servers` alone.
pub fn check_reach(step: &Step, policy: &Policy) -> Result<(), Error> {
    if matches!(step, Step::TxTone(_)) {
        return Ok(());
    }
    let rx = &policy.rx.allowed_remote_servers;
    let tx: &[String] = policy
        .tx
        .as_ref()
        .map_or(&[], |t| t.allowed_remote_servers.as_slice());
    for device in devices_of(step) {
        for r in reaches(device) {
            let shown = crate::header::truncate(&r.arg, 120);
            let Some(listed) = r.listed else {
                return Err(Error::Policy(format!(
                    "device {device:?} ({shown}) makes SoapyRemote search the LAN and open \
                     whatever server answers: a task may not; fix: name the radio's driver= (and \
                     its server with remote=tcp://HOST:PORT, listed in rx.allowed_remote_servers)"
                )));
            };
            if !rx.iter().chain(tx).any(|a| *a == listed) {
                let want = crate::header::truncate(&listed, 120);
                return Err(Error::Policy(format!(
                    "device {device:?} reaches another host ({shown}); a task may use a radio of \
                     another host only when the node's policy lists it: rx.allowed_remote_servers \
                     {rx:?} does not list {want:?}; fix: add {want:?} to rx.allowed_remote_servers \
                     in the local policy if that host is yours, or use a radio of this node"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(d: &str) -> Vec<Option<String>> {
        reaches(d).into_iter().map(|r| r.listed).collect()
    }

    #[test]
    fn reaches_reads_args_as_soapysdr_does() {
        assert!(reaches("driver=rxsim,serial=a").is_empty());
        assert!(reaches("driver=hackrf").is_empty());
        assert!(reaches("driver=plutosdr,uri=usb:1.2.5").is_empty());
        assert_eq!(
            listed("driver=remote,remote=tcp://10.0.0.9:55132,remote:driver=rxsim"),
            [Some("tcp://10.0.0.9:55132".to_owned())]
        );
        assert_eq!(
            listed("driver=uhd,addr=192.168.10.2"),
            [Some("addr=192.168.10.2".to_owned())]
        );
        assert_eq!(
            listed("driver=plutosdr,hostname=pluto.example"),
            [Some("hostname=pluto.example".to_owned())]
        );
        assert_eq!(
            listed("driver=plutosdr,uri=ip:[fe80::1%eth0]"),
            [Some("uri=ip:[fe80::1%eth0]".to_owned())]
        );
        // Every value of a repeated key: SoapySDR keeps the last.
        assert_eq!(
            listed("driver=remote,remote=tcp://a:1, remote = tcp://b:2 "),
            [Some("tcp://a:1".to_owned()), Some("tcp://b:2".to_owned())]
        );
        // A value that ends in a non-ASCII space is read with it.
        assert_eq!(
            listed("driver=remote,remote=tcp://a:1\u{a0}"),
            [Some("tcp://a:1\u{a0}".to_owned())]
        );
        // The LAN searched: no driver, or driver=remote without remote=; the last
        // driver= is the one SoapySDR uses.
        assert_eq!(listed("serial=abc"), [None]);
        assert_eq!(listed("driver=remote,remote:driver=rxsim"), [None]);
        assert_eq!(listed("driver=rxsim,driver=remote"), [None]);
        assert_eq!(listed("driver=remote,driver="), [None]);
        assert!(reaches("driver=remote,driver=rxsim").is_empty());
        // An address a remote: key hands to the server is the server's reach.
        assert_eq!(
            listed("driver=remote,remote=tcp://s:1,remote:addr=10.1.1.1"),
            [Some("tcp://s:1".to_owned())]
        );
    }

    fn capture(device: &str) -> Step {
        let text = format!(
            r#"{{"op": "rx_capture", "device": {device:?}, "frequency_hz": 100e6,
            "sample_rate_hz": 2e6, "duration_s": 1}}"#
        );
        let mut v: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&text).unwrap_or_default();
        v.remove("op");
        Step::RxCapture(
            serde_json::from_value(serde_json::Value::Object(v)).unwrap_or_else(|e| panic!("{e}")),
        )
    }

    #[test]
    fn a_receive_step_reaches_only_hosts_the_policy_lists() {
        let mut p = Policy::default();
        for d in [
            "driver=remote,remote=tcp://203.0.113.7:55132,remote:driver=rxsim",
            "driver=uhd,addr=203.0.113.7",
            "driver=plutosdr,uri=ip:203.0.113.7",
            "driver=plutosdr,hostname=evil.example",
            "serial=abc",
            "driver=remote,remote:driver=rxsim",
        ] {
            let e = check_reach(&capture(d), &p).unwrap_err().to_string();
            assert!(e.contains("a task may"), "{d}: {e}");
            assert!(
                crate::check_step(&capture(d), &p).is_err(),
                "check_step must apply it: {d}"
            );
        }
        assert!(check_reach(&capture("driver=rxsim"), &p).is_ok());
        p.rx.allowed_remote_servers =
            vec!["tcp://203.0.113.7:55132".into(), "addr=203.0.113.7".into()];
        check_reach(
            &capture("driver=remote,remote=tcp://203.0.113.7:55132,remote:driver=rxsim"),
            &p,
        )
        .unwrap();
        check_reach(&capture("driver=uhd,addr=203.0.113.7"), &p).unwrap();
        // Listed one, given another too: the last wins in SoapySDR, both are judged.
        let e = check_reach(
            &capture(
                "driver=remote,remote=tcp://203.0.113.7:55132,remote=tcp://198.51.100.1:55132",
            ),
            &p,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("198.51.100.1"), "{e}");
        // Discovery is refused whatever is listed.
        assert!(check_reach(&capture("driver=remote,remote:driver=rxsim"), &p).is_err());
        // A server the TX list names may receive too.
        let q = Policy {
            tx: Some(crate::TxPolicy {
                allowed_ranges_hz: vec![[1e6, 2e6]],
                max_gain_db: 0.0,
                max_duration_s: 1.0,
                allowed_remote_servers: vec!["tcp://h:1".into()],
                unmeasured_clock_ppm: 20.0,
            }),
            ..Default::default()
        };
        check_reach(&capture("driver=remote,remote=tcp://h:1"), &q).unwrap();
    }
}
