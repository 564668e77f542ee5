//! The watcher's status publisher: a thread of its own, so a slow or failing
//! push never delays a poll or a prompt. It publishes at every heartbeat and
//! as soon as what the status says changes (a new pending task, a refusal, a
//! run starting or ending, a radio's health) — noticed by a cheap look at the
//! files it is made of, whoever wrote them. A failed push is retried at the
//! next heartbeat.
use super::record::{self, PushRecord};
use super::snapshot::{self, Inputs};
use super::{push, Config};
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

/// Shortest time between two pushes made because something changed.
const MIN_GAP: Duration = Duration::from_millis(200);
/// Longest look between two checks for a change.
const MAX_TICK: Duration = Duration::from_millis(500);

/// The running publisher; [`Worker::stop`] publishes `stopped` and ends it.
pub(crate) struct Worker {
    stop: mpsc::Sender<()>,
    done: mpsc::Receiver<()>,
}

impl Worker {
    /// Start publishing for the checkout at `paths`.
    pub(crate) fn start(paths: Paths, cfg: Config) -> Result<Worker> {
        // The push record is created under .local/ later: ignored by Git first.
        crate::store::trust::check_created(&paths, &record::created(&paths))?;
        let repo = git2::Repository::open(&paths.repo)
            .with_context(|| format!("cannot open {}", paths.repo.display()))?;
        let (stop_tx, stop_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("rxnode-status".into())
            .spawn(move || {
                run(&paths, &repo, &cfg, &stop_rx);
                let _ = done_tx.send(());
            })
            .context("cannot start the status publisher")?;
        Ok(Worker {
            stop: stop_tx,
            done: done_rx,
        })
    }

    /// Publish a last status saying the watcher stopped, waiting at most `wait`.
    pub(crate) fn stop(self, wait: Duration) {
        let _ = self.stop.send(());
        if self.done.recv_timeout(wait).is_err() {
            tracing::warn!("the last status push did not finish within {wait:?}");
        }
    }
}

/// What the files a status is made of look like now (length and time of
/// change); a different value means the status may say something new.
fn fingerprint(paths: &Paths) -> Vec<Option<(u64, SystemTime)>> {
    let look = |p: std::path::PathBuf| {
        std::fs::metadata(p)
            .ok()
            .map(|m| (m.len(), m.modified().unwrap_or(SystemTime::UNIX_EPOCH)))
    };
    vec![
        look(paths.state()),
        look(paths.ledger()),
        look(paths.stop()),
        look(crate::store::progress::path(paths)),
        look(crate::store::health::path(paths)),
        look(crate::store::calibration::path(paths)),
    ]
}

fn run(paths: &Paths, repo: &git2::Repository, cfg: &Config, stop: &mpsc::Receiver<()>) {
    let every = Duration::from_secs_f64(cfg.every_s);
    let tick = (every / 4).min(MAX_TICK);
    let mut rec = PushRecord {
        remote_ref: cfg.spec.remote_ref().to_owned(),
        ..Default::default()
    };
    let inputs = |watcher| Inputs {
        node: cfg.node.clone(),
        every_s: cfg.every_s,
        watcher,
        policy_radios: cfg.policy_radios.clone(),
    };
    let mut next_beat = Instant::now();
    let mut seen = None;
    let mut last_key: Option<String> = None;
    let mut last_push: Option<Instant> = None;
    loop {
        match stop.recv_timeout(tick) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                let s = snapshot::build(paths, &inputs("stopped"));
                publish(paths, repo, cfg, &s, &mut rec);
                return;
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        let due = now >= next_beat;
        let fp = fingerprint(paths);
        if !due && seen.as_ref() == Some(&fp) {
            continue;
        }
        seen = Some(fp);
        let s = snapshot::build(paths, &inputs("running"));
        let key = s.key();
        let changed = last_key.as_deref() != Some(key.as_str());
        // Between heartbeats only news is pushed, and not while pushes fail
        // (those wait for the next heartbeat).
        let news = changed && rec.failures_in_a_row == 0;
        let too_soon = last_push.is_some_and(|t| now.duration_since(t) < MIN_GAP);
        if !due && !news {
            continue;
        }
        if !due && too_soon {
            seen = None; // look again at the next tick
            continue;
        }
        last_key = publish(paths, repo, cfg, &s, &mut rec).then_some(key);
        last_push = Some(now);
        next_beat = now + every;
    }
}

/// One publication: the bytes (trimmed, scanned), the commit, the push, the
/// record. Whether it landed.
fn publish(
    paths: &Paths,
    repo: &git2::Repository,
    cfg: &Config,
    s: &snapshot::NodeStatus,
    rec: &mut PushRecord,
) -> bool {
    let outcome = (|| -> Result<String> {
        let bytes = s.to_bytes()?;
        let commit = push::build(repo, &cfg.spec, &cfg.node, &bytes)?;
        push::push(repo, &cfg.remote, &cfg.spec)?;
        Ok(commit.to_string())
    })()
    .map_err(|e| format!("{e:#}"));
    if let Err(e) = &outcome {
        if rec.failures_in_a_row == 0 {
            note!("rxnode: status push failed (retried at the next heartbeat): {e}");
        }
        tracing::info!("status push failed: {e}");
    } else if rec.failures_in_a_row > 0 {
        note!("rxnode: status push works again");
    }
    let landed = outcome.is_ok();
    if let Err(e) = record::note(paths, rec, outcome) {
        tracing::warn!("status push not recorded: {e:#}");
    }
    landed
}
