//! Node status (docs/protocol.md#node-status): with the operator's consent in
//! the local policy (`"status": {"publish_every_s": N}`), the watcher keeps
//! the branch `rx-status/<NODE>` on its remote holding exactly one parentless
//! commit with `STATUS.json`, replaced at every heartbeat and whenever what it
//! says changes. Without that policy section nothing is ever pushed.
//!
//! `snapshot.rs` is what `STATUS.json` says (safe lines, the 4 KiB bound, the
//! publication scanner), `push.rs` the commit and the one forced push,
//! `worker.rs` the watcher's publisher thread, `record.rs` the last push.
mod push;
pub(crate) mod record;
pub(crate) mod snapshot;
mod worker;

use crate::context::TaskSource;
use crate::git::refspec::{status_refspec, StatusRefspec};
use crate::store::paths::Paths;
use serde::Serialize;
pub(crate) use worker::Worker;

/// Status publication, switched on and checked.
#[derive(Debug)]
pub(crate) struct Config {
    /// The node's name.
    pub(crate) node: String,
    /// Seconds between heartbeats.
    pub(crate) every_s: f64,
    /// The one refspec pushed.
    pub(crate) spec: StatusRefspec,
    /// The remote's name.
    pub(crate) remote: String,
    /// The radios the policy self-tests (listed `UNTESTED` until they have a record).
    pub(crate) policy_radios: Vec<String>,
}

/// What the node's policy and name say about status publication.
#[derive(Debug)]
pub(crate) enum Setting {
    /// No `status` section (the default): nothing is pushed.
    Off,
    /// On, with everything it needs.
    On(Config),
    /// The policy asks for it but it cannot be done; why, and the fix.
    Refused(String),
    /// The policy cannot be read, so nothing is published; why.
    PolicyUnreadable(String),
}

/// Read the policy and the node name. A policy that cannot be read publishes
/// nothing (the reason is returned, never guessed around).
pub(crate) fn setting(paths: &Paths, source: &TaskSource) -> Setting {
    let policy = match crate::store::policy::load(paths) {
        Ok((p, _)) => p,
        Err(e) => {
            return Setting::PolicyUnreadable(format!(
                "status publishing off: the policy cannot be read ({e:#})"
            ))
        }
    };
    let Some(st) = policy.status else {
        return Setting::Off;
    };
    let policy_radios = policy.health.map(|h| h.radios).unwrap_or_default();
    let node = match crate::store::node::load_name(paths) {
        Ok(Some(n)) => n,
        Ok(None) => {
            return Setting::Refused(
                "the policy asks to publish this node's status (status.publish_every_s), but this node has no name, \
                 so its status branch rx-status/<NODE> cannot be named; set one with `rxnode node set-name NAME`, \
                 or remove \"status\" from the policy"
                    .to_owned(),
            )
        }
        Err(e) => return Setting::Refused(format!("status publishing refused: {e:#}")),
    };
    match status_refspec(&node, &source.branch) {
        Ok(spec) => Setting::On(Config {
            node,
            every_s: st.publish_every_s,
            spec,
            remote: source.remote.clone(),
            policy_radios,
        }),
        Err(e) => Setting::Refused(e.0),
    }
}

/// The local view of status publication (`rxnode status`).
#[derive(Debug, Serialize)]
pub(crate) struct View {
    /// `off`, `on` or `refused`.
    pub(crate) publishing: &'static str,
    /// Why it is refused.
    pub(crate) refused: Option<String>,
    /// The remote ref (`refs/heads/rx-status/<NODE>`), when on.
    pub(crate) remote_ref: Option<String>,
    /// Seconds between heartbeats, when on.
    pub(crate) publish_every_s: Option<f64>,
    /// What would be published now, when on.
    pub(crate) would_publish: Option<snapshot::NodeStatus>,
    /// Why what would be published now would be refused by the scanner.
    pub(crate) would_be_refused: Option<String>,
    /// The last push.
    pub(crate) last_push: Option<record::PushRecord>,
}

/// The view for `rxnode status`; `watcher_running` says whether a watcher
/// (and so the publisher) runs now.
pub(crate) fn view(paths: &Paths, source: &TaskSource, watcher_running: bool) -> View {
    let last_push = record::load(paths);
    match setting(paths, source) {
        Setting::Off => View {
            publishing: "off",
            refused: None,
            remote_ref: None,
            publish_every_s: None,
            would_publish: None,
            would_be_refused: None,
            last_push,
        },
        Setting::Refused(why) | Setting::PolicyUnreadable(why) => View {
            publishing: "refused",
            refused: Some(why),
            remote_ref: None,
            publish_every_s: None,
            would_publish: None,
            would_be_refused: None,
            last_push,
        },
        Setting::On(cfg) => {
            let s = snapshot::build(
                paths,
                &snapshot::Inputs {
                    node: cfg.node.clone(),
                    every_s: cfg.every_s,
                    watcher: if watcher_running {
                        "running"
                    } else {
                        "stopped"
                    },
                    policy_radios: cfg.policy_radios.clone(),
                },
            );
            let (would_publish, would_be_refused) = match s.to_bytes() {
                Ok(b) => (serde_json::from_slice(&b).ok(), None),
                Err(e) => (None, Some(format!("{e:#}"))),
            };
            View {
                publishing: "on",
                refused: None,
                remote_ref: Some(cfg.spec.remote_ref().to_owned()),
                publish_every_s: Some(cfg.every_s),
                would_publish,
                would_be_refused,
                last_push,
            }
        }
    }
}
