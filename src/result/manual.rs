//! The result of a manual task (no `rx-plan`): the operator did the work by hand and
//! says how it went (`rxnode mark-completed ID --status S --note TEXT`). Both result
//! files are rendered from one value and checked by the result validator before they
//! replace the outbox's, so what `publish` sends always agrees with itself.
use super::files::write_result_files;
use super::model::{overall_status, Check, RxResult, Status, RESULT_JSON};
use super::validate::validate_result_files;
use crate::exit::bad_input;
use anyhow::{Context, Result};
use std::path::Path;

/// The folder where the new result files of the task whose outbox is `outbox` are
/// rendered and validated before they replace the old ones:
/// `.tmp-<ID>.mark-completed` beside the outbox, among the outbox folder's other
/// temporary folders, which nothing reads. Never inside the outbox, where every
/// entry must be a regular file: a `mark-completed` killed while staging left a
/// folder there, and every later command refused the checkout for it ("outbox
/// file … is not a regular file").
pub(crate) fn staging(outbox: &Path) -> std::path::PathBuf {
    let id = outbox
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    outbox.with_file_name(format!(".tmp-{id}.mark-completed"))
}

/// Why the result of task `id` cannot be taken as it is because a `mark-completed
/// --status` of it began and did not end: its staging folder ([`staging`]) is still
/// there. A kill (SIGKILL, power loss) between the two moves into the outbox left
/// the operator's `RX_RESULT.md` beside the approval's `RX_RESULT.json` (refused as
/// files that disagree); a kill before them left the approval's `NOT RUN` pair, which
/// is not what the operator said. Either way the fix is the same command again, which
/// writes both files and removes the folder. `None` when there is no such folder; a
/// `mark-completed` of the task at work right now (it holds the run lock) is said
/// as such.
pub(crate) fn interrupted_completion(
    paths: &crate::store::paths::Paths,
    id: &rxnode_interlock::TaskId,
) -> Option<String> {
    let folder = staging(&paths.outbox(id));
    std::fs::symlink_metadata(&folder).ok()?;
    let shown = format!(".local/rx_agent_outbox/.tmp-{id}.mark-completed");
    if let Some(h) = crate::store::lock::run_holder(paths).filter(|h| {
        crate::store::lock::holder_alive(h) && h.command == format!("mark-completed {id}")
    }) {
        return Some(format!(
            "task {id}: `rxnode mark-completed {id}` is writing its result now ({} is held by {h}); \
             nothing is published — publish it once that command has ended",
            paths.run_lock().display()
        ));
    }
    Some(format!(
        "task {id}: a `rxnode mark-completed {id} --status …` did not finish (it was killed, or the \
         machine lost power, before both result files were in place: {shown} is still there), so the \
         outbox's result files are not the result you gave; nothing is taken from them — give \
         `rxnode mark-completed {id} --status PASS|FAIL|PARTIAL|SKIP --note TEXT` again: it writes \
         both files and removes that folder"
    ))
}

/// Every file [`complete`] creates under the outbox folder, for the check that Git
/// ignores each before it is created.
pub(crate) fn files_created(outbox: &Path) -> Vec<std::path::PathBuf> {
    let staging = staging(outbox);
    let mut files: Vec<_> = [super::model::RESULT_MD, RESULT_JSON]
        .iter()
        .flat_map(|n| [staging.join(n), outbox.join(n)])
        .collect();
    files.push(staging);
    files
}

/// Longest note kept in the result (it is one line of the check's detail).
pub(crate) const MAX_NOTE_CHARS: usize = 1000;

/// The statuses an operator may give a manual task: what happened, never `BLOCKED`
/// or `NOT RUN` (those describe work that did not happen, which the skeleton says).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManualStatus {
    /// Done, and it worked.
    Pass,
    /// Done, and it did not.
    Fail,
    /// Done in part.
    Partial,
    /// Deliberately not done.
    Skip,
}

impl ManualStatus {
    fn status(self) -> Status {
        match self {
            ManualStatus::Pass => Status::Pass,
            ManualStatus::Fail => Status::Fail,
            ManualStatus::Partial => Status::Partial,
            ManualStatus::Skip => Status::Skip,
        }
    }
}

/// The operator's note as one line: lines joined with " / ", control characters
/// refused (they would reach a terminal on the main PC), at most
/// [`MAX_NOTE_CHARS`] characters.
fn one_line(note: &str) -> Result<String> {
    if let Some(c) = note
        .chars()
        .find(|c| c.is_control() && *c != '\n' && *c != '\r' && *c != '\t')
    {
        return Err(crate::exit::bad_field(
            "note",
            format!(": control character U+{:04X} is not allowed", u32::from(c)),
        ));
    }
    let line = note
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
        .replace('\t', " ");
    if line.chars().count() > MAX_NOTE_CHARS {
        return Err(crate::exit::bad_field(
            "note",
            format!(
                ": {} characters, at most {MAX_NOTE_CHARS}",
                line.chars().count()
            ),
        ));
    }
    Ok(line)
}

/// Write the manual task's result in `outbox` (`RX_RESULT.json` + `.md` from one
/// value) with `status` and `note`, finished `now`. The files are rendered in a
/// folder beside them, validated there, and only then moved into place: a result
/// the validator refuses never replaces the old one.
pub(crate) fn complete(
    outbox: &Path,
    checkout: &Path,
    status: ManualStatus,
    note: Option<&str>,
    now: &str,
) -> Result<()> {
    let json_path = outbox.join(RESULT_JSON);
    let bytes = crate::store::fsutil::read(&json_path)
        .with_context(|| format!("cannot read {}", json_path.display()))?;
    let mut r: RxResult = serde_json::from_slice(&bytes).map_err(|e| {
        bad_input(format!(
            "{}: not a result rxnode wrote: {e}",
            json_path.display()
        ))
    })?;
    let manual = r.captures.is_empty()
        && r.sweeps.is_empty()
        && r.freq_cal.is_empty()
        && r.tx.is_none()
        && r.checks.iter().all(|c| c.name == "manual task");
    if !manual {
        return Err(bad_input(format!(
            "task {} has an rx-plan: its result comes from `rxnode run`, not from --status",
            r.task_id
        )));
    }
    let detail = match note.map(one_line).transpose()? {
        Some(n) if !n.is_empty() => n,
        _ => format!(
            "done by hand; the operator marked it {}",
            status.status().as_str()
        ),
    };
    r.checks = vec![Check::new("manual task", status.status(), detail)];
    r.status = overall_status(&r.checks);
    // The work was done between the approval and now.
    if r.timeline.started_at.is_none() {
        r.timeline.started_at = Some(
            r.approval
                .as_ref()
                .map(|a| a.at.clone())
                .unwrap_or_else(|| now.to_string()),
        );
    }
    r.timeline.completed_at = Some(now.to_string());
    // A clock stepped back since the approval: the operator's result is kept,
    // with the completion's time for the unknown start.
    if let Some(e) = r.timeline.order_after_clock_step(super::model::Keep::End) {
        r.errors.push(e);
    }
    let staging = staging(outbox);
    // A folder left by a process killed here holds nothing that counts (the run
    // lock the caller holds keeps a second `mark-completed` out meanwhile).
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir(&staging)
        .with_context(|| format!("cannot stage the result in {}", staging.display()))?;
    let staged = stage_and_move(&staging, outbox, checkout, &r);
    let _ = std::fs::remove_dir_all(&staging);
    staged
}

/// Render `r` in `staging`, validate it there, then move both files into `outbox`.
fn stage_and_move(staging: &Path, outbox: &Path, checkout: &Path, r: &RxResult) -> Result<()> {
    write_result_files(staging, r)?;
    let problems = validate_result_files(&staging.join(RESULT_JSON), checkout);
    if !problems.is_empty() {
        return Err(bad_input(format!(
            "the result would not validate, nothing was changed: {}",
            problems.join("; ")
        )));
    }
    for name in [super::model::RESULT_MD, RESULT_JSON] {
        std::fs::rename(staging.join(name), outbox.join(name))
            .with_context(|| format!("cannot move {name} into {}", outbox.display()))?;
    }
    Ok(())
}

/// The outbox's result files as they are: refused (naming every problem) when the
/// validator does not accept them, e.g. after a hand edit of one file only.
pub(crate) fn check_as_is(outbox: &Path, checkout: &Path) -> Result<()> {
    let problems = validate_result_files(&outbox.join(RESULT_JSON), checkout);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(bad_input(format!(
            "the outbox's result files do not validate (fix them, or let rxnode write both: \
             `rxnode mark-completed ID --status PASS|FAIL|PARTIAL|SKIP --note TEXT`): {}",
            problems.join("; ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mark-completed` killed (SIGKILL, power loss) while it stages a manual
    /// result leaves its staging folder with half of what it wrote. That must not
    /// make the node's files untrusted: every later command (status, publish,
    /// `mark-completed` again) refused the checkout for it ("outbox file
    /// …/.mark-completed.tmp is not a regular file") until a person moved it. The
    /// next `mark-completed` clears it and writes the result.
    #[test]
    fn a_staging_folder_left_by_a_killed_mark_completed_is_no_finding_and_is_cleared() {
        let d = tempfile::tempdir().unwrap();
        let paths = crate::store::paths::Paths::new(d.path());
        let id = rxnode_interlock::TaskId::parse("R_1").unwrap();
        let outbox = paths.outbox(&id);
        std::fs::create_dir_all(&outbox).unwrap();
        let t = super::super::test_util::task(false);
        write_result_files(&outbox, &RxResult::manual_skeleton(&t, "", None)).unwrap();
        let f = crate::store::trust::findings(&paths);
        assert!(f.is_empty(), "{f:?}");
        // What the kill leaves: every folder among the files `mark-completed`
        // creates, with a half-written file in it.
        let created = files_created(&outbox);
        let folders: Vec<&std::path::PathBuf> = created
            .iter()
            .filter(|p| created.iter().any(|q| q.parent() == Some(p.as_path())))
            .collect();
        assert!(!folders.is_empty(), "{created:?}");
        for f in &folders {
            std::fs::create_dir_all(f).unwrap();
            std::fs::write(f.join(".RX_RESULT.md.tmp-1"), b"# half").unwrap();
        }
        let f = crate::store::trust::findings(&paths);
        assert!(f.is_empty(), "{f:?}");
        complete(
            &outbox,
            d.path(),
            ManualStatus::Pass,
            Some("cable checked"),
            "2026-01-01T12:00:00+00:00",
        )
        .unwrap();
        assert!(folders.iter().all(|f| !f.exists()), "{folders:?}");
        check_as_is(&outbox, d.path()).unwrap();
    }

    /// `mark-completed --status PASS` killed (SIGKILL, power loss) between moving
    /// `RX_RESULT.md` and `RX_RESULT.json` into the outbox left the operator's
    /// Markdown beside the approval's JSON, and `publish` refused it without naming
    /// the fix. While the staging folder is there the task's result is refused
    /// naming `mark-completed <ID> --status` again; that command writes both files
    /// and removes the folder.
    #[test]
    fn a_mark_completed_killed_between_its_two_moves_is_refused_naming_the_command_again() {
        let d = tempfile::tempdir().unwrap();
        let paths = crate::store::paths::Paths::new(d.path());
        let id = rxnode_interlock::TaskId::parse("R_1").unwrap();
        let outbox = paths.outbox(&id);
        std::fs::create_dir_all(&outbox).unwrap();
        let t = super::super::test_util::task(false);
        write_result_files(&outbox, &RxResult::manual_skeleton(&t, "", None)).unwrap();
        assert_eq!(interrupted_completion(&paths, &id), None);
        // What the kill leaves: the staged pair, the Markdown already moved.
        let folder = staging(&outbox);
        std::fs::create_dir(&folder).unwrap();
        let mut done = RxResult::manual_skeleton(&t, "", None);
        done.checks = vec![Check::new("manual task", Status::Pass, "cable checked")];
        done.status = overall_status(&done.checks);
        write_result_files(&folder, &done).unwrap();
        std::fs::rename(
            folder.join(super::super::model::RESULT_MD),
            outbox.join(super::super::model::RESULT_MD),
        )
        .unwrap();
        assert!(check_as_is(&outbox, d.path()).is_err());
        let why = interrupted_completion(&paths, &id).expect("refused");
        assert!(
            why.contains("rxnode mark-completed R_1 --status PASS|FAIL|PARTIAL|SKIP")
                && why.contains(".tmp-R_1.mark-completed"),
            "{why}"
        );
        complete(
            &outbox,
            d.path(),
            ManualStatus::Pass,
            Some("cable checked"),
            "2026-01-01T12:00:00+00:00",
        )
        .unwrap();
        assert_eq!(interrupted_completion(&paths, &id), None);
        check_as_is(&outbox, d.path()).unwrap();
    }

    /// A note with a control character or over the length limit is refused naming the
    /// `note` field (the command tells it as `--note`), exit 2; a good one is one line.
    #[test]
    fn a_bad_note_is_refused_by_its_field() {
        let e = one_line("a\u{7}b").unwrap_err();
        let bad = e.downcast_ref::<crate::exit::BadField>().map(|b| b.field);
        assert_eq!(bad, Some("note"));
        assert_eq!(
            e.to_string(),
            "note: control character U+0007 is not allowed"
        );
        assert_eq!(crate::exit::error_json(&e).exit, 2);
        let long = "x".repeat(MAX_NOTE_CHARS + 1);
        let e = one_line(&long).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "note: {} characters, at most {MAX_NOTE_CHARS}",
                MAX_NOTE_CHARS + 1
            )
        );
        assert_eq!(one_line(" first \n\n\tsecond ").unwrap(), "first / second");
    }

    /// The wall clock stepped back between the approval and `mark-completed` (an
    /// approval at 10:00 by a clock an hour ahead, completed at 09:00 once NTP set
    /// it right): the result is written — never refused as "completed_at is
    /// before started_at" — with the completion's time for the unknown start and
    /// an error naming both readings.
    #[test]
    fn a_clock_stepped_back_since_the_approval_keeps_the_operators_result() {
        let d = tempfile::tempdir().unwrap();
        let outbox = d.path().join(".local/rx_agent_outbox/R_1");
        std::fs::create_dir_all(&outbox).unwrap();
        let t = crate::result::test_util::task(false);
        let a = rxnode_interlock::Approval::new(
            &t,
            crate::result::test_util::COMMIT,
            "2026-01-01T10:00:00+00:00",
        );
        let r = RxResult::manual_skeleton(&t, crate::result::test_util::COMMIT, Some(&a));
        write_result_files(&outbox, &r).unwrap();
        let now = "2026-01-01T09:00:00+00:00";
        complete(&outbox, d.path(), ManualStatus::Pass, Some("done"), now).unwrap();
        let back: RxResult =
            serde_json::from_slice(&std::fs::read(outbox.join(RESULT_JSON)).unwrap()).unwrap();
        assert_eq!(back.status, Status::Pass);
        assert_eq!(back.timeline.started_at.as_deref(), Some(now));
        assert_eq!(back.timeline.completed_at.as_deref(), Some(now));
        assert!(
            back.errors.iter().any(|e| e.contains("stepped back")
                && e.contains("2026-01-01T10:00:00+00:00")
                && e.contains(now)),
            "{:?}",
            back.errors
        );
        assert!(validate_result_files(&outbox.join(RESULT_JSON), d.path()).is_empty());
    }
}
