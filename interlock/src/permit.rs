use crate::error::Error;
use crate::header::TaskId;
use crate::plan::{Step, TxToneStep};
use crate::policy::Policy;
use crate::records::{Approval, Authorization, AuthorizationKind};
use crate::risk::RiskLevel;
use crate::task::ValidTask;
use std::fmt;

/// Permission to key one transmitter for one `tx_tone` step, once.
///
/// Private fields, no `Clone`/`Copy`/`Default`/serde; the only constructor is
/// [`authorize`], which checks everything in DESIGN §3. `rxnode-hw` consumes
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
    let lo = step.frequency_hz - step.tone_offset_hz.abs();
    let hi = step.frequency_hz + step.tone_offset_hz.abs();
    if !tx
        .allowed_ranges_hz
        .iter()
        .any(|[a, b]| *a <= lo && hi <= *b)
    {
        return Err(Error::Policy(format!(
            "on-air span {lo} Hz .. {hi} Hz (tone, image and LO leakage) is not inside any tx.allowed_ranges_hz {:?}",
            tx.allowed_ranges_hz
        )));
    }
    if step.gain_db > tx.max_gain_db {
        return Err(Error::Policy(format!(
            "gain_db {} exceeds tx.max_gain_db {}",
            step.gain_db, tx.max_gain_db
        )));
    }
    if step.duration_s > tx.max_duration_s {
        return Err(Error::Policy(format!(
            "duration_s {} exceeds tx.max_duration_s {}",
            step.duration_s, tx.max_duration_s
        )));
    }
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
