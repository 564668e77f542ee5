//! `rxnode watch --dry-run --task-file FILE`: the decision flow on a local
//! file, with state, ledger and outbox in the dry-run area.
use super::io::Io;
use super::{say, Flow, WatchOptions};
use crate::context::Ctx;
use crate::exit::{bad_input, Outcome};
use crate::git::ops;
use crate::store::paths::Paths;
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
    say(format!(
        "dry run: no fetch, no radio, no commit, no push; writing only under {}",
        paths.local.display()
    ));
    let bytes = crate::validate::read_task_file(file)?;
    let mut io = Io::new()?;
    let mut flow = Flow::dry(
        paths.clone(),
        &ctx.source,
        file.display().to_string(),
        &mut io,
    );
    if let Err(issues) = crate::validate::check(&bytes, &flow.branch) {
        // Report every problem the way `validate` does, and record it in the dry-run area.
        for i in &issues {
            eprintln!("{}: {i}", file.display());
        }
        flow.examine(&bytes, None, "")?;
        return Err(bad_input(format!(
            "{}: invalid task ({} error(s))",
            file.display(),
            issues.len()
        )));
    }
    let d = flow.examine(&bytes, None, "")?;
    if d.is_none() {
        say("dry run: already decided in the dry-run area (see its state); nothing prompted");
    }
    say(format!(
        "dry run finished; state, ledger and outbox are under {}",
        paths.local.display()
    ));
    Ok(Outcome::Done)
}
