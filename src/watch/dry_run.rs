//! `rxnode watch --dry-run --task-file FILE`: the decision flow on a local
//! file, with state, ledger and outbox in the dry-run area.
use super::io::Io;
use super::{say_in, Flow, WatchOptions};
use crate::context::Ctx;
use crate::exit::{bad_input, Outcome};
use crate::git::ops;
use crate::store::paths::Paths;
use crate::store::state::{self, TaskStatus};
use anyhow::Result;
use git2::Repository;

pub(super) fn dry_run(ctx: &Ctx, args: &WatchOptions) -> Result<Outcome> {
    let file = args
        .task_file
        .as_deref()
        .ok_or_else(|| bad_input("--dry-run needs --task-file FILE"))?;
    let real = ctx.paths();
    let paths = Paths {
        local: real.dry_run(),
        ..real.clone()
    };
    // Keep `git status` clean when run inside a checkout; no repository is needed.
    if let Ok(repo) = Repository::open(&ctx.repo) {
        let _ = ops::ensure_local_excluded(&repo);
    }
    say_in(
        ctx.shell(),
        format!(
            "dry run: no fetch, no radio, no commit, no push; writing only under {}",
            paths.local.display()
        ),
    );
    let bytes = crate::validate::read_task_file(file)?;
    let mut io = Io::new()?;
    let mut flow = Flow::dry(
        paths.clone(),
        &ctx.source,
        file.display().to_string(),
        &mut io,
    );
    flow.shell = ctx.shell();
    if let Err(issues) = crate::validate::check(&bytes, &flow.branch) {
        // Report every problem the way `validate` does, and record it in the dry-run area.
        for i in &issues {
            note!("{}: {i}", file.display());
        }
        flow.examine(&bytes, None, "")?;
        return Err(bad_input(format!(
            "{}: invalid task ({} error(s))",
            file.display(),
            issues.len()
        )));
    }
    let task = crate::validate::check(&bytes, &flow.branch)
        .map_err(|_| bad_input(format!("{}: invalid task", file.display())))?;
    let id = task.id().to_string();
    let sha = task.sha256().to_string();
    flow.say(real_watcher_view(&real, &id, &sha));
    forget_rehearsal(&paths, &id, &sha, flow.shell)?;
    let d = flow.examine(&bytes, None, "")?;
    if d.is_none() {
        let word = state::load(&paths)
            .ok()
            .and_then(|s| s.tasks.get(&id).map(|r| r.status.word()))
            .unwrap_or("recorded");
        flow.say(format!(
            "dry run: task {id} is already {word} in the dry-run area; nothing prompted \
             (remove {} to rehearse it again)",
            paths.local.display()
        ));
    }
    flow.say(format!(
        "dry run finished; state, ledger and outbox are under {}",
        paths.local.display()
    ));
    Ok(Outcome::Done)
}

/// What the real watcher of this checkout would do with this task, read from
/// the node's own state (read-only): a dry run rehearses the real decision.
fn real_watcher_view(real: &Paths, id: &str, sha: &str) -> String {
    let rec = match state::load(real) {
        Ok(s) => s.tasks.get(id).cloned(),
        Err(e) => {
            return format!(
                "dry run: the node's own state cannot be read ({e:#}); the real watcher would stop on it"
            )
        }
    };
    match rec {
        None => format!("dry run: task {id} is new to this node; the real watcher would prompt it"),
        Some(r) if r.task_sha256 != sha => format!(
            "dry run: the real watcher would REFUSE this text: task {id} is already {} on this node \
             with another text; a revised task needs a new TASK_ID",
            r.status.word()
        ),
        Some(r) if r.status == TaskStatus::Pending => format!(
            "dry run: task {id} is pending on this node; the real watcher would prompt it again"
        ),
        Some(r) => format!(
            "dry run: task {id} is already {} on this node; the real watcher would not prompt it again",
            r.status.word()
        ),
    }
}

/// A task the dry-run area holds only as pending (prompted, never decided)
/// is a rehearsal: an edited file under the same ID rehearses afresh instead
/// of being refused there as a changed text.
fn forget_rehearsal(paths: &Paths, id: &str, sha: &str, shell: crate::Shell) -> Result<()> {
    state::update(paths, |s| {
        let stale = s
            .tasks
            .get(id)
            .is_some_and(|r| r.status == TaskStatus::Pending && r.task_sha256 != sha);
        if stale {
            s.tasks.remove(id);
            say_in(shell, format!(
                "dry run: task {id} was only pending in the dry-run area with another text; rehearsing this text afresh"
            ));
        }
        Ok(())
    })
}
