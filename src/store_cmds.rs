//! The commands over the node's local store: `rxnode state rebuild`, `rxnode node
//! set-name NAME`, `rxnode node show`. The store does the work and returns what it
//! did; these print it (JSON with `--json`).
use crate::context::Ctx;
use crate::exit::{bad_input, Outcome};
use crate::store::node::{
    check_name, load_file, set_name, set_name_fix, set_publish_ref, PublishRef,
};
use crate::store::paths::Paths;
use crate::store::rebuild::{rebuild, Rebuild};
use anyhow::Result;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// `rxnode state rebuild`.
pub fn cmd_rebuild(ctx: &Ctx) -> Result<Outcome> {
    let paths = ctx.paths();
    match rebuild(&paths)? {
        Rebuild::Consistent => {
            let out = one_line(&RebuildReport::Consistent {
                reason: "consistent",
                rebuilt: false,
            })?;
            ctx.report(&out, |_| {
                format!(
                    "{} agrees with the ledger and the outboxes; nothing rebuilt\n",
                    paths.state().display()
                )
            })?;
        }
        Rebuild::Rebuilt {
            counts,
            kept,
            notes,
        } => Rebuilt {
            counts,
            kept,
            notes,
        }
        .report(ctx, &paths)?,
    }
    Ok(Outcome::Done)
}

/// A value as one line of JSON (what `state rebuild --json` has always printed),
/// handed to the reporter as raw JSON so that it prints these very bytes.
fn one_line<T: serde::Serialize>(value: &T) -> Result<Box<RawValue>> {
    Ok(RawValue::from_string(serde_json::to_string(value)?)?)
}

/// `state rebuild --json`: the state rebuilt and what it holds then, or why not.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum RebuildReport<'a> {
    /// Nothing to rebuild.
    Consistent {
        /// Why: `consistent`.
        reason: &'static str,
        /// Always false.
        rebuilt: bool,
    },
    /// The state was written anew.
    Rebuilt {
        /// Tasks by status, after the rebuild.
        counts: &'a BTreeMap<&'static str, usize>,
        /// Files moved aside.
        kept_aside: &'a [String],
        /// What the rebuild noted.
        notes: &'a [String],
        /// Always true.
        rebuilt: bool,
    },
}

/// `node set-name --json`, `node set-publish-ref --json`, `node show --json`.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum NodeReport<'a> {
    /// `set-name`: the new name and the one before, if any.
    Named {
        name: &'a str,
        previous: Option<&'a str>,
    },
    /// `set-publish-ref`: the branch now published to, the layout before and now.
    Layout {
        branch: &'a str,
        previous: &'a str,
        publish_ref: &'a str,
    },
    /// `show`: the name and branch (none before a name is set) and the layout.
    Shown {
        branch: Option<&'a str>,
        name: Option<&'a str>,
        publish_ref: &'a str,
    },
}

/// What a rebuild did, as printed.
struct Rebuilt {
    counts: BTreeMap<&'static str, usize>,
    kept: Vec<String>,
    notes: Vec<String>,
}

impl Rebuilt {
    fn report(&self, ctx: &Ctx, paths: &Paths) -> Result<()> {
        let Rebuilt {
            counts,
            kept,
            notes,
        } = self;
        let out = one_line(&RebuildReport::Rebuilt {
            counts,
            kept_aside: kept,
            notes,
            rebuilt: true,
        })?;
        ctx.report(&out, |_| self.render(paths))
    }

    /// The human report.
    fn render(&self, paths: &Paths) -> String {
        let Rebuilt {
            counts,
            kept,
            notes,
        } = self;
        let mut text = String::new();
        let _ = writeln!(
            text,
            "rebuilt {} from the ledger and the outboxes: {} task(s), {} approved, {} completed, {} deferred, {} published",
            paths.state().display(),
            counts["tasks"],
            counts["approved"],
            counts["completed"],
            counts["deferred"],
            counts["published"]
        );
        for k in kept {
            let _ = writeln!(text, "  kept aside: {k}");
        }
        for n in notes {
            let _ = writeln!(text, "  note: {n}");
        }
        text
    }
}

/// `rxnode node set-name NAME [--new-key]`.
pub fn cmd_set_name(ctx: &Ctx, name: &str, new_key: bool) -> Result<Outcome> {
    check_name(name).map_err(bad_input)?;
    let old = set_name(&ctx.paths(), name, new_key)?;
    let report = NodeReport::Named {
        name,
        previous: old.as_deref(),
    };
    ctx.report(&report, |_| match &old {
        Some(o) if o != name => {
            format!("node renamed {o} → {name}; results already published under {o} stay there\n")
        }
        _ => format!("node name: {name}\n"),
    })?;
    Ok(Outcome::Done)
}

/// `rxnode node set-publish-ref shared|own`.
pub fn cmd_set_publish_ref(ctx: &Ctx, layout: PublishRef) -> Result<Outcome> {
    let paths = ctx.paths();
    let old = set_publish_ref(&paths, layout)?;
    let name = load_file(&paths)?.map(|f| f.name).unwrap_or_default();
    let branch = layout.branch(&name);
    ctx.report(
        &NodeReport::Layout {
            branch: &branch,
            previous: old.as_str(),
            publish_ref: layout.as_str(),
        },
        |_| {
            let mut t = format!("this node publishes to {branch} ({})\n", what(layout));
            if old != layout {
                let _ = writeln!(
                    t,
                    "any result already published to {} stays there; the main PC's `rxnode results` reads both",
                    old.branch(&name)
                );
            }
            t
        },
    )?;
    Ok(Outcome::Done)
}

/// A layout in words.
fn what(layout: PublishRef) -> &'static str {
    match layout {
        PublishRef::Shared => "shared by every node; `rxnode node set-publish-ref own` gives this node a ref of its own",
        PublishRef::Own => "this node's own ref: its pushes never wait on another node's; `rxnode node set-publish-ref shared` goes back to rx-node",
    }
}

/// `rxnode node show`.
pub fn cmd_show(ctx: &Ctx) -> Result<Outcome> {
    let paths = ctx.paths();
    let file = load_file(&paths)?;
    let name = file.as_ref().map(|f| f.name.clone());
    let layout = file.as_ref().map(|f| f.publish_ref).unwrap_or_default();
    let branch = name.as_deref().map(|n| layout.branch(n));
    ctx.report(
        &NodeReport::Shown {
            branch: branch.as_deref(),
            name: name.as_deref(),
            publish_ref: layout.as_str(),
        },
        |_| match (&name, &branch) {
            (Some(n), Some(b)) => format!("node name: {n}\npublishes to: {b} ({})\n", what(layout)),
            _ => format!("this node has no name; {}\n", set_name_fix(&paths)),
        },
    )?;
    Ok(Outcome::Done)
}
