//! Text in a Markdown table cell of `RX_RESULT.md`, shared by the renderers
//! (`markdown`, `compare_md`) and the validator's twin check.

/// `s` as one Markdown table cell: backslashes and pipes escaped, line breaks
/// as spaces.
pub(crate) fn md_cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}
