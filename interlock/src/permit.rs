use crate::error::Error;
use crate::header::TaskId;
use crate::plan::Step;
use crate::policy::Policy;
use crate::records::{Approval, Authorization, AuthorizationKind};
use crate::risk::RiskLevel;
use crate::task::ValidTask;
use crate::TxToneStep;
use std::fmt;

/// Permission to key one transmitter for one `tx_tone` step, once.
///
/// Private fields, no `Clone`/`Copy`/`Default`/serde; the only constructor is
/// [`authorize`], which checks everything in docs/safety.md. `rxnode-hw` consumes
/// the permit to make a radio TX-capable.
///
/// A permit cannot be written as a literal:
///
/// ```compile_fail
/// use rxnode_interlock::TxPermit;
/// let p = TxPermit { task_id: todo!(), task_sha256: String::new(), device: String::new(),
///     frequency_hz: 1.0, sample_rate_hz: 1.0, tone_offset_hz: 0.0, gain_db: 0.0, duration_s: 1.0 };
/// ```
///
/// A permit cannot be cloned:
///
/// ```compile_fail
/// fn dup(p: &rxnode_interlock::TxPermit) -> rxnode_interlock::TxPermit { p.clone() }
/// ```
///
/// Nor made from nothing:
///
/// ```compile_fail
/// let p: rxnode_interlock::TxPermit = Default::default();
/// ```
#[must_use = "a TxPermit does nothing unless handed to the radio"]
pub struct TxPermit {
    task_id: TaskId,
    task_sha256: String,
    device: String,
    frequency_hz: f64,
    sample_rate_hz: f64,
    tone_offset_hz: f64,
    gain_db: f64,
    duration_s: f64,
}

impl fmt::Debug for TxPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TxPermit")
            .field("task_id", &self.task_id)
            .field("device", &self.device)
            .field("frequency_hz", &self.frequency_hz)
            .field("tone_offset_hz", &self.tone_offset_hz)
            .field("gain_db", &self.gain_db)
            .field("duration_s", &self.duration_s)
            .finish()
    }
}

impl TxPermit {
    /// The authorized task.
    pub fn task_id(&self) -> &TaskId {
        &self.task_id
    }
    /// SHA-256 of the authorized task text.
    pub fn task_sha256(&self) -> &str {
        &self.task_sha256
    }
    /// SoapySDR device args to transmit on.
    pub fn device(&self) -> &str {
        &self.device
    }
    /// LO frequency.
    pub fn frequency_hz(&self) -> f64 {
        self.frequency_hz
    }
    /// Sample rate.
    pub fn sample_rate_hz(&self) -> f64 {
        self.sample_rate_hz
    }
    /// Tone offset from the LO.
    pub fn tone_offset_hz(&self) -> f64 {
        self.tone_offset_hz
    }
    /// TX gain.
    pub fn gain_db(&self) -> f64 {
        self.gain_db
    }
    /// Time on air, at most.
    pub fn duration_s(&self) -> f64 {
        self.duration_s
    }
}

/// The one constructor of [`TxPermit`].
///
/// Requires: the task is RED with `RF_TX = YES`; the approval covers this exact
/// text; the authorization is `AUTHORIZE RF TX` for this task ID and text; step
/// `step_index` of the plan is a `tx_tone`; the local policy has a TX section
/// with at least one allowed range holding everything on air
/// (`frequency ± |tone_offset|`: tone, image, LO leakage), gain and duration
/// within its limits. The authorization is consumed.
pub fn authorize(
    task: &ValidTask,
    approval: &Approval,
    authorization: Authorization,
    step_index: usize,
    policy: &Policy,
) -> Result<TxPermit, Error> {
    let id = task.id().to_string();
    if task.risk() != RiskLevel::Red || !task.header().rf_tx || !task.header().hardware_access {
        return Err(Error::NotAuthorizable {
            task_id: id,
            risk: task.risk().to_string(),
            reason: "transmission needs a RED task with RF_TX = YES and HARDWARE_ACCESS = YES"
                .to_owned(),
        });
    }
    if !approval.covers(task) {
        return Err(Error::RecordMismatch {
            task_id: id,
            reason: "the approval does not cover this task text".to_owned(),
        });
    }
    if authorization.kind() != AuthorizationKind::RfTx
        || authorization.task_id() != task.id()
        || authorization.task_sha256() != task.sha256()
    {
        return Err(Error::RecordMismatch {
            task_id: id,
            reason: "the authorization is not AUTHORIZE RF TX for this task text".to_owned(),
        });
    }
    let step: &TxToneStep = match task.plan().and_then(|p| p.steps.get(step_index)) {
        Some(Step::TxTone(s)) => s,
        _ => {
            return Err(Error::RecordMismatch {
                task_id: id,
                reason: format!("plan step {} is not a tx_tone step", step_index + 1),
            })
        }
    };
    check_tx_step(step, policy)?;
    drop(authorization);
    Ok(TxPermit {
        task_id: task.id().clone(),
        task_sha256: task.sha256().to_owned(),
        device: step.device.clone(),
        frequency_hz: step.frequency_hz,
        sample_rate_hz: step.sample_rate_hz,
        tone_offset_hz: step.tone_offset_hz,
        gain_db: step.gain_db,
        duration_s: step.duration_s,
    })
}

/// How far a driver's actual TX LO may sit from the permit's, Hz: drivers round to
/// their synthesizer's step, and the TX path refuses to key a radio whose read-back
/// LO is further off. The policy's range check counts it on both sides of the span,
/// so a rounded LO never puts the tone outside the allowed range.
pub const TX_LO_TOLERANCE_HZ: f64 = 1.0;

/// Check a `tx_tone` step against the node's TX policy alone (no approval or
/// authorization involved): a pre-flight, so the operator is never asked to
/// authorize what the policy refuses. [`authorize`] applies the same check.
pub fn check_tx_step(step: &TxToneStep, policy: &Policy) -> Result<(), Error> {
    let Some(tx) = &policy.tx else {
        return Err(Error::Policy(
            "no tx section in the local policy: TX is refused".to_owned(),
        ));
    };
    if tx.allowed_ranges_hz.is_empty() {
        return Err(Error::Policy(
            "tx.allowed_ranges_hz is empty: TX is refused".to_owned(),
        ));
    }
    let all_finite = [
        step.frequency_hz,
        step.sample_rate_hz,
        step.tone_offset_hz,
        step.gain_db,
        step.duration_s,
    ]
    .iter()
    .all(|v| v.is_finite());
    if !all_finite
        || step.frequency_hz <= 0.0
        || step.duration_s <= 0.0
        || step.sample_rate_hz <= 0.0
    {
        return Err(Error::Policy(
            "tx_tone parameters must be finite and positive".to_owned(),
        ));
    }
    // Tone, image and LO leakage lie within LO ± |offset|; the LO itself may land
    // up to TX_LO_TOLERANCE_HZ off the asked frequency.
    let lo = step.frequency_hz - step.tone_offset_hz.abs() - TX_LO_TOLERANCE_HZ;
    let hi = step.frequency_hz + step.tone_offset_hz.abs() + TX_LO_TOLERANCE_HZ;
    if !tx
        .allowed_ranges_hz
        .iter()
        .any(|[a, b]| *a <= lo && hi <= *b)
    {
        return Err(Error::Policy(format!(
            "on-air span {lo} Hz .. {hi} Hz (tone, image and LO leakage, with ±{TX_LO_TOLERANCE_HZ} Hz for the driver's LO rounding) is not inside any tx.allowed_ranges_hz {:?}",
            tx.allowed_ranges_hz
        )));
    }
    check_tx_device(&step.device, tx)?;
    if crate::policy::exceeds(step.gain_db, tx.max_gain_db) {
        return Err(Error::Policy(format!(
            "gain_db {} exceeds tx.max_gain_db {}",
            step.gain_db, tx.max_gain_db
        )));
    }
    if crate::policy::exceeds(step.duration_s, tx.max_duration_s) {
        return Err(Error::Policy(format!(
            "duration_s {} exceeds tx.max_duration_s {}",
            step.duration_s, tx.max_duration_s
        )));
    }
    Ok(())
}

/// Check a `tx_tone` step's on-air span with the radio's measured clock error
/// (its kept calibration): a radio whose clock runs `ppm` fast puts its LO and,
/// through its sample clock, its tone offset `ppm` higher than asked, so what
/// must lie inside one `tx.allowed_ranges_hz` is the asked span moved by that
/// error, widened by three times its uncertainty and by the LO rounding
/// ([`TX_LO_TOLERANCE_HZ`]). [`check_tx_step`] judges the asked span; a radio
/// with no measurement is judged by that alone.
pub fn check_tx_clock_error(
    step: &TxToneStep,
    policy: &Policy,
    ppm: f64,
    uncertainty_ppm: f64,
) -> Result<(), Error> {
    let Some(tx) = &policy.tx else {
        return Err(Error::Policy(
            "no tx section in the local policy: TX is refused".to_owned(),
        ));
    };
    if !ppm.is_finite() || !uncertainty_ppm.is_finite() || uncertainty_ppm < 0.0 {
        return Err(Error::Policy(format!(
            "the radio's measured clock error {ppm} ± {uncertainty_ppm} ppm is not a number: where its tone lands is not known, TX is refused"
        )));
    }
    let off = step.tone_offset_hz.abs();
    let scale = 1.0 + ppm * 1e-6;
    let spread = (step.frequency_hz + off) * 3.0 * uncertainty_ppm * 1e-6;
    let lo = (step.frequency_hz - off) * scale - spread - TX_LO_TOLERANCE_HZ;
    let hi = (step.frequency_hz + off) * scale + spread + TX_LO_TOLERANCE_HZ;
    if tx
        .allowed_ranges_hz
        .iter()
        .any(|[a, b]| *a <= lo && hi <= *b)
    {
        return Ok(());
    }
    Err(Error::Policy(format!(
        "with this radio's measured clock error of {ppm:+.3} ± {uncertainty_ppm:.3} ppm (its kept calibration) the on-air span is {lo:.0} Hz .. {hi:.0} Hz (tone, image and LO leakage moved by the error, ± 3σ and the LO rounding), not inside any tx.allowed_ranges_hz {:?}",
        tx.allowed_ranges_hz
    )))
}

/// The step judged on a radio whose clock error was never measured: the on-air
/// span (tone, image and LO leakage, and the LO rounding) moved by up to
/// `tx.unmeasured_clock_ppm` either way must fit in one allowed range. A radio
/// that was never measured may be off by its crystal's whole tolerance.
pub fn check_tx_unmeasured_clock(step: &TxToneStep, policy: &Policy) -> Result<(), Error> {
    let Some(tx) = &policy.tx else {
        return Err(Error::Policy(
            "no tx section in the local policy: TX is refused".to_owned(),
        ));
    };
    let b = tx.unmeasured_clock_ppm;
    if !(b.is_finite() && b >= 0.0) {
        return Err(Error::Policy(format!(
            "tx.unmeasured_clock_ppm {b} is not a number of ppm: TX is refused"
        )));
    }
    let off = step.tone_offset_hz.abs();
    let lo = (step.frequency_hz - off) * (1.0 - b * 1e-6) - TX_LO_TOLERANCE_HZ;
    let hi = (step.frequency_hz + off) * (1.0 + b * 1e-6) + TX_LO_TOLERANCE_HZ;
    if tx
        .allowed_ranges_hz
        .iter()
        .any(|[a, c]| *a <= lo && hi <= *c)
    {
        return Ok(());
    }
    Err(Error::Policy(format!(
        "this radio's clock error was never measured: allowing for up to ±{b} ppm \
         (tx.unmeasured_clock_ppm) the on-air span is {lo:.0} Hz .. {hi:.0} Hz (tone, image \
         and LO leakage, and the LO rounding), not inside any tx.allowed_ranges_hz {:?}; \
         measure the radio first (rxnode clkin calibrate) or move the tone away from the \
         range's edge",
        tx.allowed_ranges_hz
    )))
}

/// The branch must not be able to move the transmitter to another host. A
/// TX device names its driver (without one SoapySDR may open any matching radio,
/// including one a SoapyRemote server on the network offers), and a radio served by
/// SoapyRemote transmits only when the local policy lists its server.
fn check_tx_device(device: &str, tx: &crate::TxPolicy) -> Result<(), Error> {
    // As SoapySDR's KwargsFromString reads it: a part without `=` is a key with an
    // empty value, and a key given twice takes its *last* value; so a repeated key
    // could pass this check with one value and open the radio with another.
    let kv = crate::reach::kwargs(device);
    for (i, (k, _)) in kv.iter().enumerate() {
        if kv[..i].iter().any(|(e, _)| e == k) {
            return Err(Error::Policy(format!(
                "tx_tone device {device:?} gives the key {k:?} more than once: SoapySDR would \
                 use the last value, not the one checked here"
            )));
        }
    }
    let get = |key: &str| kv.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let Some(driver) = get("driver").filter(|d| !d.is_empty()) else {
        return Err(Error::Policy(format!(
            "tx_tone device {device:?} names no driver=: SoapySDR could open any matching radio, \
             also one served from another host; name the driver (e.g. driver=hackrf)"
        )));
    };
    let remote = driver == "remote"
        || kv
            .iter()
            .any(|(k, _)| *k == "remote" || k.starts_with("remote:"));
    if !remote {
        return check_network_radio(device, &kv, tx);
    }
    let Some(server) = get("remote").filter(|s| !s.is_empty()) else {
        return Err(Error::Policy(format!(
            "tx_tone device {device:?} is a SoapyRemote radio without remote=tcp://HOST:PORT: \
             the client would transmit on whatever server it discovers"
        )));
    };
    if !tx.allowed_remote_servers.iter().any(|s| s == server) {
        return Err(Error::Policy(format!(
            "tx_tone on the remote radio at {server} is refused: tx.allowed_remote_servers {:?} does not list it",
            tx.allowed_remote_servers
        )));
    }
    Ok(())
}

/// A `tx_tone` on a radio its driver reaches over the network transmits only when
/// the local policy lists that exact `key=value` in `tx.allowed_remote_servers`
/// (e.g. `"addr=192.168.10.2"`), as a SoapyRemote server is listed by its URL.
fn check_network_radio(
    device: &str,
    kv: &[(&str, &str)],
    tx: &crate::TxPolicy,
) -> Result<(), Error> {
    for (k, v) in kv {
        if !crate::reach::is_network_arg(k, v) {
            continue;
        }
        let arg = format!("{k}={v}");
        if !tx.allowed_remote_servers.contains(&arg) {
            return Err(Error::Policy(format!(
                "tx_tone device {device:?} reaches a radio over the network ({arg}); refused: \
                 tx.allowed_remote_servers {:?} does not list {arg:?}",
                tx.allowed_remote_servers
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::verify_authorization;
    use crate::testutil::*;
    use crate::{validate_task, ValidateOptions};
    use proptest::prelude::*;

    const AT: &str = "2026-01-01T00:00:00+00:00";

    fn policy(ranges: &[[f64; 2]], gain: f64, dur: f64) -> Policy {
        Policy {
            rx: Default::default(),
            tx: Some(crate::TxPolicy {
                allowed_ranges_hz: ranges.to_vec(),
                max_gain_db: gain,
                max_duration_s: dur,
                allowed_remote_servers: Vec::new(),
                unmeasured_clock_ppm: crate::TxPolicy::DEFAULT_UNMEASURED_CLOCK_PPM,
            }),
            ..Default::default()
        }
    }

    fn ism() -> Policy {
        policy(&[[433.05e6, 434.79e6]], 10.0, 2.0)
    }

    /// A hostile task cannot move the transmitter to another host.
    #[test]
    fn tx_on_a_remote_radio_needs_its_server_in_the_policy() {
        let step = |device: &str| TxToneStep {
            device: device.to_owned(),
            frequency_hz: 433.92e6,
            sample_rate_hz: 1e6,
            tone_offset_hz: 50e3,
            gain_db: 0.0,
            duration_s: 0.5,
        };
        let mut pol = ism();
        check_tx_step(&step("driver=hackrf,serial=1"), &pol).unwrap();
        for (dev, needle) in [
            ("serial=1", "names no driver="),
            ("driver=,serial=1", "names no driver="),
            ("driver=remote", "without remote=tcp://HOST:PORT"),
            (
                "driver=remote,remote:driver=hackrf",
                "without remote=tcp://HOST:PORT",
            ),
            (
                "driver=remote,remote=tcp://10.0.0.9:55132,remote:driver=hackrf",
                "tcp://10.0.0.9:55132 is refused",
            ),
            (
                "driver=hackrf,remote=tcp://10.0.0.9:55132",
                "tcp://10.0.0.9:55132 is refused",
            ),
        ] {
            match check_tx_step(&step(dev), &pol) {
                Err(Error::Policy(m)) => assert!(m.contains(needle), "{dev}: {m}"),
                other => panic!("{dev}: {other:?}"),
            }
        }
        // Radios their own drivers reach over the network: the same rule.
        for (dev, arg) in [
            ("driver=uhd,addr=203.0.113.9", "addr=203.0.113.9"),
            ("driver=uhd,addr0=203.0.113.9", "addr0=203.0.113.9"),
            ("driver=uhd,mgmt_addr=203.0.113.9", "mgmt_addr=203.0.113.9"),
            ("driver=plutosdr,uri=ip:203.0.113.9", "uri=ip:203.0.113.9"),
            ("driver=plutosdr,uri=203.0.113.9", "uri=203.0.113.9"),
            (
                "driver=hackrf,url=tcp://203.0.113.9:1234",
                "url=tcp://203.0.113.9:1234",
            ),
        ] {
            match check_tx_step(&step(dev), &pol) {
                Err(Error::Policy(m)) => {
                    assert!(
                        m.contains("over the network") && m.contains(arg),
                        "{dev}: {m}"
                    )
                }
                other => panic!("{dev}: {other:?}"),
            }
        }
        check_tx_step(&step("driver=plutosdr,uri=usb:1.2.5"), &pol).unwrap();
        if let Some(tx) = &mut pol.tx {
            tx.allowed_remote_servers = vec!["addr=203.0.113.9".into()];
        }
        check_tx_step(&step("driver=uhd,addr=203.0.113.9"), &pol).unwrap();
        assert!(check_tx_step(&step("driver=uhd,addr=203.0.113.10"), &pol).is_err());
        if let Some(tx) = &mut pol.tx {
            tx.allowed_remote_servers = vec!["tcp://10.0.0.9:55132".into()];
        }
        check_tx_step(
            &step("driver=remote, remote=tcp://10.0.0.9:55132,remote:driver=hackrf"),
            &pol,
        )
        .unwrap();
        assert!(check_tx_step(&step("driver=remote,remote=tcp://10.0.0.9:55133"), &pol).is_err());
        let p = Policy::from_json(
            r#"{"tx": {"allowed_ranges_hz": [[1, 2]], "max_gain_db": 0, "max_duration_s": 1,
                "allowed_remote_servers": ["tcp://h:1"]}}"#,
        )
        .unwrap();
        assert_eq!(p.tx.unwrap().allowed_remote_servers, ["tcp://h:1"]);
    }

    fn go(task: &ValidTask, pol: &Policy) -> Result<TxPermit, Error> {
        let a = Approval::new(task, "c", AT);
        let auth = verify_authorization(task, &a, "AUTHORIZE RF TX", AT)?;
        authorize(task, &a, auth, 0, pol)
    }

    fn tx_with(step: &str) -> ValidTask {
        ok(&render(
            &fields("YES", "NO", "YES"),
            &plan(&format!(r#"{{"steps": [{step}]}}"#)),
        ))
    }

    #[test]
    fn the_one_passing_case() {
        let t = tx_task();
        let p = go(&t, &ism()).unwrap();
        assert_eq!(p.task_id().as_str(), "T_1");
        assert_eq!(p.task_sha256(), t.sha256());
        assert_eq!(p.device(), "driver=hackrf");
        assert_eq!(p.frequency_hz(), 433.92e6);
        assert_eq!(p.sample_rate_hz(), 2.0e6);
        assert_eq!(p.tone_offset_hz(), 50e3);
        assert_eq!(p.gain_db(), 0.0);
        assert_eq!(p.duration_s(), 1.0);
        assert!(format!("{p:?}").contains("433920000"));
    }

    #[test]
    fn not_red_tx() {
        // RED other (declared) with a plan that has no tx_tone cannot get RF TX.
        let red_other = ok(&render(
            &set(fields("YES", "YES", "NO"), "RISK_LEVEL", Some("RED")),
            &plan(&format!(r#"{{"steps": [{RX_STEP}]}}"#)),
        ));
        let a = Approval::new(&red_other, "c", AT);
        let auth = verify_authorization(&red_other, &a, "AUTHORIZE T_1", AT).unwrap();
        assert!(matches!(
            authorize(&red_other, &a, auth, 0, &ism()),
            Err(Error::NotAuthorizable { .. })
        ));
    }

    #[test]
    fn approval_must_cover_text() {
        let t = tx_task();
        let other =
            validate_task(&format!("{}x\n", t.text()), &ValidateOptions::default()).unwrap();
        let a_other = Approval::new(&other, "c", AT);
        let a = Approval::new(&t, "c", AT);
        let auth = verify_authorization(&t, &a, "AUTHORIZE RF TX", AT).unwrap();
        assert!(matches!(
            authorize(&t, &a_other, auth, 0, &ism()),
            Err(Error::RecordMismatch { reason, .. }) if reason.contains("approval")
        ));
    }

    #[test]
    fn authorization_must_be_for_this_text() {
        let t = tx_task();
        let other =
            validate_task(&format!("{}x\n", t.text()), &ValidateOptions::default()).unwrap();
        let a_other = Approval::new(&other, "c", AT);
        let auth_other = verify_authorization(&other, &a_other, "AUTHORIZE RF TX", AT).unwrap();
        let a = Approval::new(&t, "c", AT);
        assert!(matches!(
            authorize(&t, &a, auth_other, 0, &ism()),
            Err(Error::RecordMismatch { reason, .. }) if reason.contains("authorization")
        ));
    }

    #[test]
    fn step_must_be_tx_tone() {
        let t = ok(&render(
            &fields("YES", "YES", "YES"),
            &plan(&format!(r#"{{"steps": [{RX_STEP}, {TX_STEP}]}}"#)),
        ));
        let a = Approval::new(&t, "c", AT);
        let auth = verify_authorization(&t, &a, "AUTHORIZE RF TX", AT).unwrap();
        assert!(matches!(
            authorize(&t, &a, auth, 0, &ism()),
            Err(Error::RecordMismatch { reason, .. }) if reason.contains("step 1 is not a tx_tone")
        ));
        let auth = verify_authorization(&t, &a, "AUTHORIZE RF TX", AT).unwrap();
        assert!(matches!(
            authorize(&t, &a, auth, 9, &ism()),
            Err(Error::RecordMismatch { .. })
        ));
        let auth = verify_authorization(&t, &a, "AUTHORIZE RF TX", AT).unwrap();
        assert!(authorize(&t, &a, auth, 1, &ism()).is_ok());
        // A RED TX task with no plan at all.
        let manual = ok(&render(&fields("YES", "NO", "YES"), "manual\n"));
        let a = Approval::new(&manual, "c", AT);
        let auth = verify_authorization(&manual, &a, "AUTHORIZE RF TX", AT).unwrap();
        assert!(authorize(&manual, &a, auth, 0, &ism()).is_err());
    }

    #[test]
    fn no_policy_or_no_range_refuses() {
        let t = tx_task();
        let none = Policy::default();
        assert!(matches!(go(&t, &none), Err(Error::Policy(m)) if m.contains("no tx section")));
        let empty = policy(&[], 10.0, 2.0);
        assert!(matches!(go(&t, &empty), Err(Error::Policy(m)) if m.contains("empty")));
    }

    #[test]
    fn gain_and_duration_limits() {
        let t = tx_task();
        assert!(
            go(&t, &policy(&[[433.05e6, 434.79e6]], 0.0, 1.0)).is_ok(),
            "equal is allowed"
        );
        assert!(
            matches!(go(&t, &policy(&[[433.05e6, 434.79e6]], -0.5, 2.0)),
            Err(Error::Policy(m)) if m.contains("tx.max_gain_db"))
        );
        assert!(
            matches!(go(&t, &policy(&[[433.05e6, 434.79e6]], 10.0, 0.99)),
            Err(Error::Policy(m)) if m.contains("tx.max_duration_s"))
        );
    }

    #[test]
    fn on_air_span_edges() {
        // Tone at 433.92e6 ± 50e3 → 433.87e6 .. 433.97e6, and the LO may land 1 Hz off.
        let t = tx_task();
        assert!(
            go(&t, &policy(&[[433.87e6 - 1.0, 433.97e6 + 1.0]], 10.0, 2.0)).is_ok(),
            "the span with the LO's rounding fits"
        );
        for r in [
            // A tone placed exactly on the range's edge: a driver rounding its LO
            // by up to 1 Hz would put it outside.
            [433.87e6, 433.97e6],
            [433.87e6 - 1.0, 433.97e6],
            [433.87e6, 433.97e6 + 1.0],
            [433.0e6, 433.9e6],
        ] {
            assert!(
                matches!(go(&t, &policy(&[r], 10.0, 2.0)), Err(Error::Policy(m)) if m.contains("not inside")),
                "{r:?}"
            );
        }
        // Span across two adjacent ranges does not fit in one.
        assert!(go(
            &t,
            &policy(&[[433.0e6, 433.92e6], [433.92e6, 434.0e6]], 10.0, 2.0)
        )
        .is_err());
        // A second range that fits is enough.
        assert!(go(&t, &policy(&[[1e6, 2e6], [433.0e6, 434.0e6]], 10.0, 2.0)).is_ok());
        // A negative offset: image on the other side, same span.
        let neg = tx_with(&TX_STEP.replace("50e3", "-50e3"));
        assert!(go(
            &neg,
            &policy(&[[433.87e6 - 1.0, 433.97e6 + 1.0]], 10.0, 2.0)
        )
        .is_ok());
        assert!(
            go(&neg, &policy(&[[433.92e6, 434.0e6]], 10.0, 2.0)).is_err(),
            "image below LO must be allowed too"
        );
        // Zero offset: only the LO.
        let zero = tx_with(&TX_STEP.replace("50e3", "0"));
        assert!(go(
            &zero,
            &policy(&[[433.92e6 - 1.0, 433.92e6 + 1.0]], 10.0, 2.0)
        )
        .is_ok());
        assert!(go(&zero, &policy(&[[433.92e6, 433.92e6 + 1.0]], 10.0, 2.0)).is_err());
    }

    /// A radio measured +20 ppm fast puts a tone 5 kHz under the range's top edge
    /// 3.7 kHz over it; measured −20 ppm, or not at all, it stays inside; an
    /// uncertainty that could reach the edge counts against it.
    /// The tone 434.785 MHz (LO 434.78 MHz + 5 kHz), 5 kHz under the edge of
    /// [`ism`]'s range.
    fn edge_step() -> TxToneStep {
        match tx_with(
            &TX_STEP
                .replace("433.92e6", "434.78e6")
                .replace("50e3", "5e3"),
        )
        .plan()
        .map(|p| p.steps[0].clone())
        {
            Some(Step::TxTone(t)) => t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_measured_clock_error_moves_the_span_it_is_judged_by() {
        let step = edge_step();
        let pol = ism();
        assert!(check_tx_step(&step, &pol).is_ok());
        assert!(check_tx_clock_error(&step, &pol, 0.0, 0.0).is_ok());
        assert!(check_tx_clock_error(&step, &pol, -20.0, 0.01).is_ok());
        // 434.785 MHz × 20e-6 = 8.7 kHz: past 434.79 MHz.
        assert!(matches!(
            check_tx_clock_error(&step, &pol, 20.0, 0.01),
            Err(Error::Policy(m)) if m.contains("measured clock error of +20.000 ± 0.010 ppm")
        ));
        // 10 ppm moves it 4.35 kHz (650 Hz inside); 3 × 0.6 ppm more (780 Hz) crosses the edge.
        assert!(check_tx_clock_error(&step, &pol, 10.0, 0.01).is_ok());
        assert!(check_tx_clock_error(&step, &pol, 10.0, 0.3).is_ok());
        assert!(check_tx_clock_error(&step, &pol, 10.0, 0.6).is_err());
        assert!(check_tx_clock_error(&step, &pol, f64::NAN, 0.0).is_err());
        assert!(check_tx_clock_error(&step, &pol, 1.0, f64::INFINITY).is_err());
    }

    /// A radio never measured is judged with its span moved by up to
    /// `tx.unmeasured_clock_ppm` either way; 0 judges it at its nominal frequency.
    #[test]
    fn an_unmeasured_radio_is_judged_by_its_crystals_whole_tolerance() {
        let step = edge_step();
        let mut pol = ism();
        // 434.785 MHz × 20e-6 = 8.7 kHz: past 434.79 MHz.
        assert!(matches!(
            check_tx_unmeasured_clock(&step, &pol),
            Err(Error::Policy(m)) if m.contains("never measured") && m.contains("±20 ppm")
        ));
        // 434.775 MHz − 20 ppm is still above 433.05 MHz: only the upper edge counts.
        assert!(pol.tx.is_some());
        if let Some(t) = pol.tx.as_mut() {
            t.unmeasured_clock_ppm = 11.0;
        }
        assert!(check_tx_unmeasured_clock(&step, &pol).is_ok());
        if let Some(t) = pol.tx.as_mut() {
            t.unmeasured_clock_ppm = 12.0;
        }
        assert!(check_tx_unmeasured_clock(&step, &pol).is_err());
        if let Some(t) = pol.tx.as_mut() {
            t.unmeasured_clock_ppm = 0.0;
        }
        assert!(check_tx_unmeasured_clock(&step, &pol).is_ok());
        if let Some(t) = pol.tx.as_mut() {
            t.unmeasured_clock_ppm = f64::NAN;
        }
        assert!(check_tx_unmeasured_clock(&step, &pol).is_err());
    }

    proptest! {
        #![proptest_config(crate::testutil::proptest_config(256, "permit"))]
        /// Random tasks, phrases and policies: a permit exists only when every
        /// condition of docs/safety.md holds.
        #[test]
        fn permit_only_when_everything_holds(
            hw in proptest::bool::weighted(0.8), rx in any::<bool>(), tx in proptest::bool::weighted(0.8),
            declared_red in any::<bool>(),
            freq in 1e6f64..6e9, off in -1e6f64..1e6, gain in -10f64..80.0, dur in 0.01f64..20.0,
            phrase in prop_oneof![4 => Just("AUTHORIZE RF TX".to_string()), 1 => Just("AUTHORIZE T_1".to_string()),
                                  1 => Just("authorize rf tx".to_string()), 1 => Just("AUTHORIZE RF TX ".to_string()),
                                  1 => "[ -~]{0,20}"],
            has_tx in proptest::bool::weighted(0.8),
            ranges in proptest::collection::vec((1e6f64..6e9, 0f64..1e8), 0..3),
            max_gain in -10f64..80.0, max_dur in 0.01f64..20.0,
            step_index in prop_oneof![3 => Just(0usize), 1 => Just(1usize)],
            cover in prop_oneof![Just(None), Just(Some(1.0f64)), Just(Some(0.0f64)), Just(Some(-1.0f64))],
        ) {
            let mut f = fields(if hw {"YES"} else {"NO"}, if rx {"YES"} else {"NO"}, if tx {"YES"} else {"NO"});
            if declared_red { f = set(f, "RISK_LEVEL", Some("RED")); }
            let step = format!(
                r#"{{"op": "tx_tone", "device": "driver=rxsim", "frequency_hz": {freq:e}, "sample_rate_hz": 4e6, "tone_offset_hz": {off:e}, "gain_db": {gain:e}, "duration_s": {dur:e}}}"#
            );
            let text = render(&f, &plan(&format!(r#"{{"steps": [{step}]}}"#)));
            let Ok(task) = validate_task(&text, &ValidateOptions::default()) else {
                // Invalid tasks never reach authorize; a tx_tone needs RF_TX = YES and HARDWARE_ACCESS = YES.
                prop_assert!(!(hw && tx));
                return Ok(());
            };
            // Compare with the values as parsed from the task text (decimal round trip).
            let Some(Step::TxTone(st)) = task.plan().and_then(|p| p.steps.first()) else {
                return Err(TestCaseError::fail("the plan's step is a tx_tone"));
            };
            let (freq, off, gain, dur) = (st.frequency_hz, st.tone_offset_hz, st.gain_db, st.duration_s);
            let mut ranges: Vec<[f64; 2]> = ranges.iter().map(|(lo, w)| [*lo, lo + w + 1.0]).collect();
            // Often add a range around the on-air span: just wider, exact, or just too narrow.
            if let Some(m) = cover {
                let (lo, hi) = (freq - off.abs() - TX_LO_TOLERANCE_HZ, freq + off.abs() + TX_LO_TOLERANCE_HZ);
                ranges.push([lo - m, hi + m]);
            }
            let pol = Policy { rx: Default::default(), tx: has_tx.then(|| crate::TxPolicy {
                allowed_ranges_hz: ranges.clone(), max_gain_db: max_gain, max_duration_s: max_dur,
                allowed_remote_servers: Vec::new(),
                unmeasured_clock_ppm: crate::TxPolicy::DEFAULT_UNMEASURED_CLOCK_PPM }), ..Default::default() };
            let approval = Approval::new(&task, "c", AT);
            let result = verify_authorization(&task, &approval, &phrase, AT)
                .and_then(|auth| authorize(&task, &approval, auth, step_index, &pol));
            let (lo, hi) = (freq - off.abs() - TX_LO_TOLERANCE_HZ, freq + off.abs() + TX_LO_TOLERANCE_HZ);
            let expected = task.risk() == RiskLevel::Red && tx && hw
                && phrase == "AUTHORIZE RF TX"
                && step_index == 0
                && has_tx
                && ranges.iter().any(|[a, b]| *a <= lo && hi <= *b)
                && gain <= max_gain && dur <= max_dur;
            prop_assert_eq!(result.is_ok(), expected, "{:?}", result.err());
        }
    }
}
