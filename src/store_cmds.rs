//! The commands over the node's local store: `rxnode state rebuild`, `rxnode node
//! set-name NAME`, `rxnode node show`. The store does the work and returns what it
//! did; these print it (JSON with `--json`).
use crate::context::Ctx;
use crate::exit::{bad_input, Outcome};
use crate::store::node::{check_name, load_file, set_name, set_publish_ref, PublishRef};
use crate::store::paths::Paths;
use crate::store::rebuild::{rebuild, Rebuild};
use anyhow::Result;
use serde_json::json;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// `rxnode state rebuild`.
pub fn cmd_rebuild(ctx: &Ctx) -> Result<Outcome> {
    let paths = ctx.paths();
    match rebuild(&paths)? {
        Rebuild::Consistent => {
            let out = one_line(&json!({"rebuilt": false, "reason": "consistent"}))?;
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
fn one_line(value: &serde_json::Value) -> Result<Box<RawValue>> {
    Ok(RawValue::from_string(value.to_string())?)
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
        let out = one_line(
            &json!({"rebuilt": true, "counts": counts, "kept_aside": kept, "notes": notes}),
        )?;
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

/// `rxnode node set-name NAME`.
pub fn cmd_set_name(ctx: &Ctx, name: &str) -> Result<Outcome> {
    check_name(name).map_err(bad_input)?;
    let old = set_name(&ctx.paths(), name)?;
    ctx.report(&json!({"name": name, "previous": old}), |_| match &old {
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
        &json!({"publish_ref": layout.as_str(), "previous": old.as_str(), "branch": branch}),
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
        &json!({"name": name, "publish_ref": layout.as_str(), "branch": branch}),
        |_| match (&name, &branch) {
            (Some(n), Some(b)) => format!("node name: {n}\npublishes to: {b} ({})\n", what(layout)),
            _ => "this node has no name; set one with `rxnode node set-name NAME`\n".to_owned(),
        },
    )?;
    Ok(Outcome::Done)
}
