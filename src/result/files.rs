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
    let json = r.to_json_bytes();
    let md = render_markdown_for(r, &json);
    write_atomic(&dir.join(RESULT_JSON), &json)?;
    write_atomic(&dir.join(RESULT_MD), md.as_bytes())?;
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
