//! The result model (docs/protocol.md#5-results).
//!
//! One [`RxResult`] value is rendered to `RX_RESULT.json` (pretty JSON plus a
//! final newline) and `RX_RESULT.md`; the Markdown ends with a machine-checkable
//! trailer that binds it to the exact JSON bytes:
//!
//! ```text
//! <!-- rxnode-result schema_version=1 task_id=ID status="PASS" json_sha256=HEX -->
//! ```
//!
//! and its summary table carries a fixed `| Status | PASS |` row and one row per
//! check, so [`validate_result_files`] can prove the two files agree.
//!
//! [`model`] holds the value, [`markdown`] the Markdown, [`files`] writes the
//! pair from one value, [`plot`] the pictures and [`validate`] the validator and
//! the `validate-result` command.
mod abs_path;
mod capture_md;
mod compare_md;
mod files;
#[cfg(test)]
mod golden_tests;
mod interrupted;
mod manual;
mod markdown;
mod md_cell;
mod model;
pub(crate) mod pictures;
pub(crate) mod plot;
pub(crate) mod sections;
mod sweep_md;
#[cfg(test)]
mod test_util;
mod validate;

pub(crate) use compare_md::{fmt_ppb, render_compare_text};
pub(crate) use files::{write_result_files, write_skeleton};
pub(crate) use interrupted::{finish_and_say, finish_interrupted};
pub use manual::ManualStatus;
pub(crate) use manual::{
    check_as_is as check_manual_result, complete as complete_manual,
    files_created as manual_files_created, interrupted_completion,
};
pub use markdown::markdown_for_result_json;
pub(crate) use markdown::trailer_json_sha256;
pub(crate) use model::Keep;
#[cfg(test)]
pub(crate) use model::NodeInfo;
pub(crate) use model::{
    compare_png_name, spectrum_png_name, AuthorizationRecord, Check, RunClock, RxResult,
    SignatureRecord, LOG_META, RESULTS_DIR,
};
pub use model::{Status, RESULT_JSON, RESULT_MD};
pub(crate) use plot::write_freq_cal_png;
pub(crate) use plot::write_spectrum_pngs;
pub(crate) use validate::is_safe_relative;
pub use validate::{cmd_validate_result, validate_result_files};
#[cfg(test)]
pub(crate) use validate::{OPTIONAL_TOP_KEYS, TOP_KEYS};

/// The draft 2020-12 schema of what `T` writes, titled `title`: a field it always
/// writes is required, `null` included where its type allows it (a field it may
/// leave out is not).
pub(crate) fn written_schema<T: schemars::JsonSchema>(title: &str) -> serde_json::Value {
    let mut s = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Some(o) = s.as_object_mut() {
        o.insert("title".into(), title.into());
    }
    s
}
