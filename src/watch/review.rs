//! `rxnode review TASK_ID` and `rxnode mark-completed TASK_ID`.
use crate::context::Ctx;
use crate::exit::{bad_input, refused, Outcome};
use crate::git::ops;
use crate::store::ledger::{self, Entry};
use crate::store::lock::Lock;
use crate::store::paths::Paths;
use crate::store::state::{self, TaskStatus};
use crate::watch::io::Io;
use crate::watch::{Decision, Flow};
use anyhow::Result;
use rxnode_interlock::TaskId;

fn parse_id(id: &str) -> Result<String> {
    TaskId::parse(id)
        .map(|t| t.to_string())
        .map_err(|e| bad_input(format!("task ID {id:?}: {e}")))
}

/// Prompt again for a deferred or pending task (from the commit recorded in
/// state; no fetch). Holds the watcher lock while prompting.
pub fn cmd_review(ctx: &Ctx, task_id: &str) -> Result<Outcome> {
    let id = parse_id(task_id)?;
    let paths = Paths::new(&ctx.repo);
    let repo = ops::open(&ctx.repo)?;
    crate::store::trust::prepare(&paths)?;
    let _lock = Lock::acquire(&paths, "review")?;
    let mut io = Io::new()?;
    let mut flow = Flow::on_branch(paths.clone(), &repo, &ctx.source, &mut io);
    // (`reprompt` checks the status under the lock: nothing decided meanwhile
    // is prompted again.)
    match flow.reprompt(&id)? {
        Decision::Refused => Err(refused(format!(
            "task {id} was approved but its outbox could not be prepared; it stays pending"
        ))),
        Decision::NotForThisNode => Err(refused(format!(
            "task {id} is not for this node (TARGET_NODES); recorded, not prompted"
        ))),
        _ => Ok(Outcome::Done),
    }
}

/// Mark an approved (manually finished) task complete.
pub fn cmd_mark_completed(ctx: &Ctx, task_id: &str) -> Result<Outcome> {
    let id = parse_id(task_id)?;
    let paths = Paths::new(&ctx.repo);
    crate::store::trust::prepare(&paths)?;
    let done = state::update(&paths, |s| {
        let rec = s
            .tasks
            .get_mut(&id)
            .ok_or_else(|| bad_input(format!("task {id} is not known on this node")))?;
        match rec.status {
            TaskStatus::Completed => Ok(false),
            TaskStatus::Approved => {
                rec.status = TaskStatus::Completed;
                s.last_completed_task_id = Some(id.clone());
                Ok(true)
            }
            other => Err(refused(format!(
                "task {id} is {other:?}; only an approved task can be marked completed"
            ))),
        }
    })?;
    let sha = state::load(&paths)?
        .tasks
        .get(&id)
        .map(|r| (r.task_sha256.clone(), r.commit.clone()));
    if done {
        let mut e = Entry::new("marked_completed").task(&id);
        if let Some((sha, commit)) = &sha {
            e = e.sha(sha).commit(commit);
        }
        ledger::append(&paths, &e)?;
    }
    if ctx.json {
        println!(
            "{}",
            serde_json::json!({ "task_id": id, "completed": true, "changed": done })
        );
    } else if done {
        println!("task {id} marked completed");
    } else {
        println!("task {id} was already completed; nothing changed");
    }
    Ok(Outcome::Done)
}
