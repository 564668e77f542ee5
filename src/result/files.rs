//! The result files of one task: `RX_RESULT.json` and `RX_RESULT.md`, both
//! rendered from one [`RxResult`] (the model, [`super::model`]) through
//! [`super::markdown`], each written atomically.
use super::markdown::render_markdown_for;
use super::model::{RxResult, RESULT_JSON, RESULT_MD};
use crate::store::fsutil::write_atomic;
use anyhow::Result;
use rxnode_interlock::{Approval, ValidTask};
use std::path::Path;

/// Write `RX_RESULT.json` and `RX_RESULT.md` into `dir`, both from `r`, each atomically.
pub(crate) fn write_result_files(dir: &Path, r: &RxResult) -> Result<()> {
    place_result_files(dir, r, write_atomic)
}

/// [`write_result_files`] through `place` (one atomic write per file). The
/// Markdown is placed first and the JSON last: the JSON is what the next
/// command reads to learn whether a killed run's result was written
/// (`super::interrupted`), so a kill between the two leaves the JSON that was
/// there before (the approval's `NOT RUN`), and the run is finished as
/// interrupted, both files rewritten — never a new JSON beside the old
/// Markdown, a pair `publish` refuses for good ("the files disagree").
fn place_result_files(
    dir: &Path,
    r: &RxResult,
    mut place: impl FnMut(&Path, &[u8]) -> Result<()>,
) -> Result<()> {
    let json = r.to_json_bytes();
    let md = render_markdown_for(r, &json);
    place(&dir.join(RESULT_MD), md.as_bytes())?;
    place(&dir.join(RESULT_JSON), &json)?;
    Ok(())
}

/// The `NOT RUN` result skeleton, rendered from one value (JSON and Markdown agree).
pub(crate) fn write_skeleton(
    paths: &crate::store::paths::Paths,
    dir: &Path,
    task: &ValidTask,
    commit: &str,
    approval: &Approval,
    signature: Option<&crate::result::SignatureRecord>,
) -> Result<()> {
    let mut r = RxResult::manual_skeleton(task, commit, Some(approval));
    if let Some(a) = &mut r.approval {
        a.signature = signature.cloned();
    }
    r.node.name = crate::store::node::name_for_result(paths);
    write_result_files(dir, &r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::test_util::{ran, task, COMMIT};
    use crate::result::validate_result_files;

    /// The approval's `NOT RUN` pair in `dir`, as the watcher leaves it.
    fn approved(dir: &Path) {
        let t = task(true);
        let a = Approval::new(&t, COMMIT, "2026-01-01T10:00:00+00:00");
        write_result_files(dir, &RxResult::manual_skeleton(&t, COMMIT, Some(&a))).unwrap();
    }

    /// A run killed after the first of its two result files was placed (the
    /// other never written): what is left must read as "not written", so the
    /// next command finishes the run as interrupted and rewrites both, and never
    /// as a written result whose Markdown is still the approval's `NOT RUN`.
    #[test]
    fn a_kill_between_the_result_files_leaves_the_not_run_json_for_the_interrupted_finish() {
        let d = tempfile::TempDir::new().unwrap();
        approved(d.path());
        assert!(!crate::result::interrupted::result_written(d.path()));
        let mut placed = 0;
        let killed = place_result_files(d.path(), &ran(d.path()), |p, b| {
            placed += 1;
            if placed == 2 {
                anyhow::bail!("killed before {}", p.display());
            }
            write_atomic(p, b)
        });
        assert!(killed.is_err());
        assert!(
            !crate::result::interrupted::result_written(d.path()),
            "the first file placed was the JSON: it says written beside the NOT RUN Markdown"
        );
        // Written whole, the pair agrees and reads as written.
        write_result_files(d.path(), &ran(d.path())).unwrap();
        assert!(crate::result::interrupted::result_written(d.path()));
        let p = validate_result_files(&d.path().join(RESULT_JSON), d.path());
        assert!(p.is_empty(), "{p:#?}");
    }
}
