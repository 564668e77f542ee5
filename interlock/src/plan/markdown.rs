//! Finding the plan in a task's Markdown as CommonMark reads it (the way GitHub,
//! GitLab and any CommonMark viewer show the task to a reviewer): the plan is
//! the one fenced code block at the top level of the document whose info string
//! starts with the word `rx-plan`. Anything else that looks like a plan fence — a
//! run of three or more backticks or tildes followed by `rx-plan` — is refused with
//! its line and why it is not a plan (indented code, an HTML block or comment, a
//! list item, a block quote, inside another code block, running text, a second
//! block): what the node runs is exactly what a reader of the task sees, and a text
//! that a reader could take either way is not run at all (docs/protocol.md#2-the-plan).
use crate::error::Issue;
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag};
use std::ops::Range;

/// The info word of the plan block.
const PLAN_WORD: &str = "rx-plan";

/// The one plan block of a task text.
pub(crate) struct PlanBlock {
    /// 1-based line of the opening fence.
    pub line: usize,
    /// The block's content, as CommonMark reads it.
    pub json: String,
}

/// A top-level block of the document: its byte range, what it is, and its
/// content when it is a fenced code block.
struct Block {
    range: Range<usize>,
    kind: Kind,
}

enum Kind {
    /// A fenced code block: its info string's first word and its text.
    Fenced {
        word: String,
        text: String,
    },
    Indented,
    Html,
    List,
    Quote,
    /// A paragraph, heading, table or anything else holding running text.
    Text,
}

/// Line (1-based) of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The top-level blocks of `text` as CommonMark parses it (no extensions).
fn top_level_blocks(text: &str) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut depth = 0usize;
    for (ev, range) in Parser::new_ext(text, Options::empty()).into_offset_iter() {
        match ev {
            Event::Start(tag) => {
                if depth == 0 {
                    let kind = match tag {
                        Tag::CodeBlock(CodeBlockKind::Fenced(info)) => Kind::Fenced {
                            word: info.split_whitespace().next().unwrap_or("").to_owned(),
                            text: String::new(),
                        },
                        Tag::CodeBlock(CodeBlockKind::Indented) => Kind::Indented,
                        Tag::HtmlBlock => Kind::Html,
                        Tag::List(_) => Kind::List,
                        Tag::BlockQuote(_) => Kind::Quote,
                        _ => Kind::Text,
                    };
                    blocks.push(Block { range, kind });
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Text(t) if depth == 1 => {
                if let Some(Block {
                    kind: Kind::Fenced { text, .. },
                    ..
                }) = blocks.last_mut()
                {
                    text.push_str(&t);
                }
            }
            _ => {}
        }
    }
    blocks
}

/// Byte offsets of the lines holding something that looks like a plan fence: a run
/// of three or more `` ` `` or `~`, then optional spaces or tabs, then `rx-plan`
/// (any case). Each line once, at the offset of the look-alike.
fn lookalike_fences(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut line_start = 0usize;
    for line in text.split_inclusive('\n') {
        let b = line.as_bytes();
        let mut i = 0usize;
        while i < b.len() {
            let c = b[i];
            if c != b'`' && c != b'~' {
                i += 1;
                continue;
            }
            let run = b[i..].iter().take_while(|x| **x == c).count();
            let mut j = i + run;
            if run >= 3 {
                while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                    j += 1;
                }
                let rest = &b[j..];
                if rest.len() >= PLAN_WORD.len()
                    && rest[..PLAN_WORD.len()].eq_ignore_ascii_case(PLAN_WORD.as_bytes())
                {
                    let shown = String::from_utf8_lossy(&b[i..j + PLAN_WORD.len()]).into_owned();
                    out.push((line_start + i, shown));
                    break;
                }
            }
            i += run;
        }
        line_start += line.len();
    }
    out
}

/// Whether the fenced block at `range` ends with a closing fence (CommonMark runs an
/// unclosed fence to the end of the document).
fn is_closed(text: &str, range: &Range<usize>) -> bool {
    let src = &text[range.start.min(text.len())..range.end.min(text.len())];
    let mut lines = src.lines();
    let Some(open) = lines.next().map(str::trim_start) else {
        return false;
    };
    let Some(ch) = open.chars().next() else {
        return false;
    };
    let open_len = open.chars().take_while(|c| *c == ch).count();
    let Some(last) = src.lines().rfind(|l| !l.trim().is_empty()) else {
        return false;
    };
    let last = last.trim();
    src.lines().count() > 1 && last.chars().count() >= open_len && last.chars().all(|c| c == ch)
}

/// Why a look-alike at `at` inside `block` is not the plan.
fn why_not_a_plan(text: &str, at: usize, block: Option<&Block>) -> String {
    let Some(b) = block else {
        return "it is not a fenced code block of its own at the top level".to_owned();
    };
    let start = line_of(text, b.range.start);
    match &b.kind {
        Kind::Indented => "it is indented by 4 or more spaces: Markdown shows it as indented code \
             (text), not as a plan; write the fence at the start of the line"
            .to_owned(),
        Kind::Html => format!(
            "it is inside an HTML block or comment (from line {start}): Markdown does not show it \
             as a plan (an HTML comment is not shown at all)"
        ),
        Kind::List => format!(
            "it is inside a list (from line {start}): a plan must be a block of its own at the top \
             level, not in a list item"
        ),
        Kind::Quote => format!(
            "it is inside a block quote (from line {start}): a plan must be a block of its own at \
             the top level, not quoted"
        ),
        Kind::Text => format!(
            "it is part of running text (the paragraph from line {start}), not a fenced code block \
             of its own"
        ),
        Kind::Fenced { word, .. } => {
            if line_of(text, at) == start {
                format!(
                    "its info string is {word:?}, not exactly \"{PLAN_WORD}\": Markdown shows a code \
                     block that is not the plan"
                )
            } else if is_closed(text, &b.range) {
                format!(
                    "it is inside the fenced code block opened on line {start}: Markdown shows it \
                     as text, not as a plan"
                )
            } else {
                format!(
                    "it is inside the fenced code block opened on line {start}, which is never \
                     closed and so runs to the end of the file: Markdown shows it as text, not as \
                     a plan; close that block first"
                )
            }
        }
    }
}

/// The one plan block of `text` (the whole task text, byte-order mark removed),
/// or `None` for a manual task. Every look-alike that is not the plan, a second
/// plan block and an unclosed plan block are issues (field `rx-plan`).
pub(crate) fn find_plan_block(text: &str, issues: &mut Vec<Issue>) -> Option<PlanBlock> {
    let blocks = top_level_blocks(text);
    let plans: Vec<&Block> = blocks
        .iter()
        .filter(|b| matches!(&b.kind, Kind::Fenced { word, .. } if word == PLAN_WORD))
        .collect();
    let plan_lines: Vec<usize> = plans.iter().map(|b| line_of(text, b.range.start)).collect();
    for l in plan_lines.iter().skip(1) {
        issues.push(Issue::new(
            Some(*l),
            Some("rx-plan"),
            format!(
                "more than one rx-plan block ({} found; first on line {})",
                plans.len(),
                plan_lines[0]
            ),
        ));
    }
    for (at, shown) in lookalike_fences(text) {
        let line = line_of(text, at);
        if plan_lines.contains(&line) {
            continue;
        }
        let block = blocks.iter().find(|b| b.range.contains(&at));
        issues.push(Issue::new(
            Some(line),
            Some("rx-plan"),
            format!(
                "{shown:?} looks like a plan fence but is not the task's plan: {}; a task whose \
                 text could be read two ways is not run (the plan is one fenced rx-plan block at \
                 the top level: docs/protocol.md#2-the-plan)",
                why_not_a_plan(text, at, block)
            ),
        ));
    }
    let first = plans.first()?;
    let line = plan_lines[0];
    if !is_closed(text, &first.range) {
        issues.push(Issue::new(
            Some(line),
            Some("rx-plan"),
            "rx-plan block is not closed",
        ));
    }
    let Kind::Fenced { text: json, .. } = &first.kind else {
        return None;
    };
    Some(PlanBlock {
        line,
        json: json.clone(),
    })
}

/// What in a Markdown text `body`, placed before other text (as `rxnode task new`
/// places the notes before the plan), would change how that text reads: a plan
/// fence of its own, or a block the body opens and never closes (a code fence, an
/// HTML comment or block) that would take in what follows. `(1-based line in
/// body, why)`; `None` when the body is self-contained.
pub fn body_changes_what_follows(body: &str) -> Option<(usize, String)> {
    if let Some((at, shown)) = lookalike_fences(body).into_iter().next() {
        return Some((
            line_of(body, at),
            format!(
                "holds a plan fence ({shown:?}): a task has one plan, and it is given apart \
                 from the notes"
            ),
        ));
    }
    const MARK: &str = "rxnode-end-of-notes";
    let body = body.trim_end();
    let text = format!("{body}\n\n{MARK}\n");
    let at = body.len() + 2;
    let blocks = top_level_blocks(&text);
    let holder = blocks.iter().find(|b| b.range.contains(&at))?;
    if holder.range.start == at && matches!(holder.kind, Kind::Text) {
        return None;
    }
    let line = line_of(&text, holder.range.start);
    let why = match &holder.kind {
        Kind::Fenced { .. } => "opens a fenced code block that is never closed: everything \
            after it (the plan too) would be shown as code and never run"
            .to_owned(),
        Kind::Html => "opens an HTML block or comment that is never closed: everything after \
            it (the plan too) would be hidden"
            .to_owned(),
        _ => "opens a block that the text after it would continue".to_owned(),
    };
    Some((line, why))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(t: &str) -> (Option<usize>, Vec<Issue>) {
        let mut issues = Vec::new();
        let p = find_plan_block(t, &mut issues);
        (p.map(|p| p.line), issues)
    }

    #[test]
    fn top_level_fences_are_plans_with_their_line() {
        let (p, i) = find("# t\n\n```rx-plan\n{}\n```\n");
        assert_eq!((p, i.len()), (Some(3), 0), "{i:?}");
        let (p, i) = find("# t\n\n~~~~ rx-plan extra\n{}\n~~~~\n");
        assert_eq!((p, i.len()), (Some(3), 0), "{i:?}");
        // Up to three spaces of indentation is still a top-level fence.
        let (p, i) = find("x\n\n   ```rx-plan\n{}\n   ```\n");
        assert_eq!((p, i.len()), (Some(3), 0), "{i:?}");
    }

    #[test]
    fn lookalikes_are_refused_with_the_reason() {
        for (t, line, why) in [
            ("x\n\n    ```rx-plan\n    {}\n    ```\n", 3, "indented by 4"),
            (
                "<!--\n```rx-plan\n{}\n```\n-->\n",
                2,
                "HTML block or comment",
            ),
            ("- a\n\n  ```rx-plan\n  {}\n  ```\n", 3, "inside a list"),
            ("> ```rx-plan\n> {}\n> ```\n", 1, "block quote"),
            ("````md\n```rx-plan\n{}\n```\n````\n", 2, "opened on line 1"),
            ("```\n\n```rx-plan\n{}\n", 3, "never closed"),
            (
                "```\n\n```rx-plan\n{}\n```\n",
                3,
                "opened on line 1: Markdown",
            ),
            ("write ```rx-plan blocks\n", 1, "running text"),
            ("```RX-PLAN\n{}\n```\n", 1, "info string is \"RX-PLAN\""),
        ] {
            let (p, i) = find(t);
            assert_eq!(p, None, "{t}");
            assert!(
                i.iter()
                    .any(|x| x.line == Some(line) && x.message.contains(why)),
                "{t}: {i:#?}"
            );
        }
    }

    #[test]
    fn a_body_that_would_take_in_the_plan_is_named() {
        assert_eq!(body_changes_what_follows("notes\n\n```sh\nls\n```\n"), None);
        assert_eq!(body_changes_what_follows("<!-- done -->\n"), None);
        let (l, why) = body_changes_what_follows("notes\n\n```\n").expect("open fence");
        assert_eq!(l, 3);
        assert!(why.contains("never closed"), "{why}");
        let (l, why) = body_changes_what_follows("a\n<!--\nhidden\n").expect("open comment");
        assert_eq!(l, 2);
        assert!(why.contains("HTML"), "{why}");
        let (l, why) = body_changes_what_follows("x\n~~~rx-plan\n").expect("plan fence");
        assert_eq!(l, 2);
        assert!(why.contains("plan fence"), "{why}");
    }

    #[test]
    fn two_plans_and_an_open_plan_are_issues() {
        let (p, i) = find("```rx-plan\n{}\n```\n\n```rx-plan\n{}\n```\n");
        assert_eq!(p, Some(1));
        assert!(i[0]
            .message
            .contains("more than one rx-plan block (2 found; first on line 1)"));
        let (_, i) = find("```rx-plan\n{}\n");
        assert!(i[0].message.contains("not closed"), "{i:?}");
        let (_, i) = find("````rx-plan\n{}\n```\n");
        assert!(i.iter().any(|x| x.message.contains("not closed")), "{i:?}");
    }
}
