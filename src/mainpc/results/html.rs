//! `results report --html DIR`: a static site of what was fetched — an index of
//! the nodes and results, one page per result (its Markdown rendered, its
//! pictures, its verification) — no server and no script, openable from a file
//! share (docs/operator.md#the-fleet-page).
//!
//! Everything on a page came from other machines: every piece of text is
//! HTML-escaped, raw HTML in a result's Markdown is shown as text, links are
//! shown as text with their address (never followed), and each page forbids
//! scripts, frames and remote loads with a Content-Security-Policy.
use super::draw::{draw_result, Overwrite};
use super::fetched::{Fetched, Found};
use super::list::{rows, Filter};
use super::nodes::{fleet, NodeRow};
use super::tree::{adding_commits, find_results, read_small};
use crate::exit::Outcome;
use crate::result::{RESULT_JSON, RESULT_MD};
use anyhow::{Context, Result};
use pulldown_cmark::{html, CowStr, Event, Parser, Tag, TagEnd};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// What the report wrote.
#[derive(Debug, Serialize)]
struct Written {
    /// The index page.
    index: String,
    /// Nodes listed.
    nodes: usize,
    /// Result pages written.
    results: usize,
    /// Pictures drawn.
    pictures: usize,
    /// Results that did not verify.
    unverified: usize,
}

/// Characters of one word after which a page offers the browser a line break
/// (`<wbr>`): no word from elsewhere is wider than about this many characters.
const WORD_CHARS: usize = 20;

/// Text for an element's content: [`esc_attr`], and a `<wbr>` after every
/// [`WORD_CHARS`] characters of one word, so that a long word (a title or a note
/// without spaces) wraps instead of widening its table and the page.
pub(super) fn esc(s: &str) -> String {
    breakable(&esc_attr(s))
}

/// Escaped HTML text with a `<wbr>` after every [`WORD_CHARS`] characters that
/// are not white space: an entity (`&amp;`) counts as one character and is never
/// split, and no break goes before a combining mark (it stays on its letter).
fn breakable(html: &str) -> String {
    let mut o = String::with_capacity(html.len());
    let mut word = 0usize;
    let mut in_entity = false;
    for c in html.chars() {
        if in_entity {
            in_entity = c != ';';
        } else if c.is_whitespace() {
            word = 0;
        } else {
            if word >= WORD_CHARS && !rxnode_interlock::is_stacking_mark(c) {
                o.push_str("<wbr>");
                word = 0;
            }
            word += 1;
            in_entity = c == '&';
        }
        o.push(c);
    }
    o
}

/// `&`, `<`, `>`, `"` and `'` as entities; control and format characters as
/// their escaped form (as a terminal shows them).
pub(super) fn esc_attr(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    let mut e = rxnode_interlock::Escaper::default();
    for c in s.chars() {
        let flagged = e.escape(c) || super::text::non_printable(c);
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            '\n' | '\t' => o.push(c),
            c if flagged => o.push_str(&c.escape_unicode().to_string()),
            c => o.push(c),
        }
    }
    o
}

/// A result's Markdown as inert HTML: raw HTML becomes text, a link becomes its
/// text and address, an image its description.
pub(super) fn markdown_html(md: &str) -> String {
    let mut links: Vec<String> = Vec::new();
    // Characters of the word running on from the previous text or code.
    let mut word = 0usize;
    let events = Parser::new_ext(md, super::term_md::options()).flat_map(|ev| {
        if !matches!(
            ev,
            Event::Text(_) | Event::Code(_) | Event::Html(_) | Event::InlineHtml(_)
        ) {
            word = 0;
        }
        let out: Vec<Event<'_>> = match ev {
            Event::Html(t) | Event::InlineHtml(t) => {
                // The machine trailer is for the validator, not for a reader.
                if t.trim_start().starts_with("<!-- rxnode-result") {
                    vec![]
                } else {
                    broken_words(&visible(&t), &mut word)
                }
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                links.push(dest_url.to_string());
                vec![]
            }
            Event::End(TagEnd::Link) => match links.pop().filter(|u| !u.is_empty()) {
                Some(u) => vec![Event::Text(CowStr::from(format!(" <{u}>")))],
                None => vec![],
            },
            Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => vec![],
            Event::Text(t) => broken_words(&visible(&t), &mut word),
            Event::Code(t) => {
                let mut v = vec![Event::InlineHtml(CowStr::from("<code>"))];
                v.extend(broken_words(&visible(&t), &mut word));
                v.push(Event::InlineHtml(CowStr::from("</code>")));
                v
            }
            Event::Start(Tag::Table(a)) => vec![
                Event::InlineHtml(CowStr::from("<div class=\"wide\">")),
                Event::Start(Tag::Table(a)),
            ],
            Event::End(TagEnd::Table) => vec![
                Event::End(TagEnd::Table),
                Event::InlineHtml(CowStr::from("</div>")),
            ],
            other => vec![other],
        };
        out
    });
    let mut s = String::new();
    html::push_html(&mut s, events);
    without_empty_heads(&s)
}

/// `h` without the header rows whose every cell is empty (a key–value table in
/// Markdown has one, which a page would draw as a blank grey row).
fn without_empty_heads(h: &str) -> String {
    const OPEN: &str = "<thead><tr>";
    const CLOSE: &str = "</tr></thead>";
    let mut out = String::with_capacity(h.len());
    let mut rest = h;
    while let Some(i) = rest.find(OPEN) {
        let after = &rest[i + OPEN.len()..];
        let Some(j) = after.find(CLOSE) else {
            break;
        };
        let cells = &after[..j];
        let empty = cells.split("</th>").all(|c| {
            c.is_empty()
                || (c.starts_with("<th") && c.ends_with('>') && c.matches('>').count() == 1)
        });
        out.push_str(&rest[..i]);
        if !empty {
            out.push_str(&rest[i..i + OPEN.len() + j + CLOSE.len()]);
        }
        rest = &after[j + CLOSE.len()..];
    }
    out.push_str(rest);
    out
}

/// `text` as text events with a `<wbr>` between them after every [`WORD_CHARS`]
/// characters that are not white space (`word`: those already run on), as
/// [`esc`] breaks the page's own text.
fn broken_words(text: &str, word: &mut usize) -> Vec<Event<'static>> {
    let mut out = Vec::new();
    let mut piece = String::new();
    for c in text.chars() {
        if c.is_whitespace() {
            *word = 0;
        } else {
            if *word >= WORD_CHARS && !rxnode_interlock::is_stacking_mark(c) {
                out.push(Event::Text(CowStr::from(std::mem::take(&mut piece))));
                out.push(Event::InlineHtml(CowStr::from("<wbr>")));
                *word = 0;
            }
            *word += 1;
        }
        piece.push(c);
    }
    out.push(Event::Text(CowStr::from(piece)));
    out
}

/// Control and format characters shown escaped (pulldown-cmark escapes the markup).
fn visible(s: &str) -> String {
    let mut e = rxnode_interlock::Escaper::default();
    s.chars()
        .map(|c| {
            let flagged = e.escape(c) || super::text::non_printable(c);
            if c != '\n' && c != '\t' && flagged {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

// Every text on a page came from elsewhere and may be one long word (a title or a
// note without spaces, a hostile node's 20 000 characters): `esc` offers a line
// break every `WORD_CHARS` characters of a word, a table too wide all the same
// scrolls inside its own box (`.wide`), as a `pre` block does.
const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:80em;padding:0 1em;color:#222;overflow-wrap:break-word}\
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}code{background:#f4f4f4;padding:0 .2em}pre{background:#f4f4f4;padding:.6em;overflow-x:auto}\
img{max-width:100%;border:1px solid #ddd;margin:.5em 0}.PASS,.alive,.ok{color:#080;font-weight:bold}\
.FAIL,.silent,.bad{color:#b00;font-weight:bold}.PARTIAL,.BLOCKED,.stale,.stopped{color:#b60;font-weight:bold}\
nav{margin-bottom:1em}.problems{color:#b00}td.state{white-space:nowrap}.wide{overflow-x:auto}";

/// One page: a title, the style, no script allowed.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src 'self'; style-src 'unsafe-inline'\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        esc_attr(title)
    )
}

/// A class for a status or state word: only known words become classes.
fn class_of(word: &str) -> &'static str {
    match word {
        "PASS" => "PASS",
        "FAIL" => "FAIL",
        "PARTIAL" => "PARTIAL",
        "BLOCKED" => "BLOCKED",
        "alive" => "alive",
        "stale" => "stale",
        "silent" => "silent",
        "stopped" => "stopped",
        "unknown" => "unknown",
        _ => "other",
    }
}

/// A page's file name from the result's position and its folder (letters,
/// digits, `-` and `_` only).
fn slug(i: usize, f: &Found) -> String {
    let key: String = f
        .path
        .trim_start_matches("rx-results/")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    format!("r{i:04}-{key}")
}

/// `results report --html DIR`.
pub(super) fn cmd_report(
    f: &Fetched<'_>,
    filter: &Filter<'_>,
    limit: Option<usize>,
    dir: &Path,
    overwrite: Overwrite,
) -> Result<Outcome> {
    let nodes = fleet(f)?;
    let (list, total, _) = rows(f, limit, &|r| filter.keeps(r))?;
    // Every result at the tip of every results branch, and the commits that added them.
    let mut found: BTreeMap<(String, String), Found> = BTreeMap::new();
    let mut added: BTreeMap<String, BTreeMap<String, (git2::Oid, git2::Oid)>> = BTreeMap::new();
    for src in &f.sources {
        let tree = f.repo.find_commit(src.tip)?.tree()?;
        for x in find_results(f.repo, &tree, src, &f.budget)?.0 {
            found.insert((src.branch.clone(), x.path.clone()), x);
        }
        added.insert(src.branch.clone(), adding_commits(f.repo, src, &f.budget)?);
    }
    // Every page is named before anything is written: one already there is
    // refused (unless forced) and nothing is replaced; pictures likewise, page by page.
    let index = dir.join("index.html");
    overwrite.check(&index)?;
    for (i, r) in list.iter().enumerate() {
        if let Some(fd) = found.get(&(r.branch.clone(), r.path.clone())) {
            overwrite.check(&dir.join(format!("{}.html", slug(i, fd))))?;
        }
    }
    crate::store::fsutil::create_folder(dir)?;
    let no_commits = BTreeMap::new();
    let mut index_rows = String::new();
    let mut w = Written {
        index: index.display().to_string(),
        nodes: nodes.len(),
        results: 0,
        pictures: 0,
        unverified: 0,
    };
    for (i, r) in list.iter().enumerate() {
        let Some(fd) = found.get(&(r.branch.clone(), r.path.clone())) else {
            continue;
        };
        let name = slug(i, fd);
        let branch_added = added.get(&fd.source.branch).unwrap_or(&no_commits);
        let mut problems = super::verify::verify_one(f, fd.source.tip, fd, branch_added);
        problems.extend(r.problems.iter().cloned());
        let pics = result_page(f, fd, &name, dir, &problems, overwrite)?;
        w.results += 1;
        w.pictures += pics;
        w.unverified += usize::from(!problems.is_empty());
        let status = r.status.as_deref().unwrap_or("?");
        let _ = writeln!(
            index_rows,
            "<tr><td><a href=\"{name}.html\">{}</a></td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.task_id),
            esc(r.node.as_deref().unwrap_or("(unnamed)")),
            class_of(status),
            esc(status),
            esc(r.completed_at.as_deref().unwrap_or("?")),
            if problems.is_empty() {
                "<span class=\"ok\">verified</span>".to_owned()
            } else {
                format!("<span class=\"bad\">{} problem(s)</span>", problems.len())
            },
            pics
        );
    }
    let body = format!(
        "<h1>RX fleet</h1>\n<p>{} node(s); {} of {total} result(s) shown. Written by rxnode from the fetched results branches (<code>rx-node</code>, every <code>rx-results/NODE</code>) and status branches.</p>\n\
<h2>Nodes</h2>\n{}\n<h2>Results</h2>\n<div class=\"wide\"><table>\n<tr><th>Task</th><th>Node</th><th>Status</th><th>Completed</th><th>Verification</th><th>Pictures</th></tr>\n{index_rows}</table></div>\n",
        nodes.len(),
        w.results,
        nodes_table(&nodes)
    );
    rxnode_dsp::write_regular(&index, page("RX fleet", &body).as_bytes())
        .with_context(|| format!("cannot write {}", w.index))?;
    f.ctx.report(&w, |w| {
        super::text::terminal_safe(&format!(
            "wrote {} ({} node(s), {} result page(s), {} picture(s), {} not verified)\n",
            w.index, w.nodes, w.results, w.pictures, w.unverified
        ))
    })?;
    Ok(Outcome::Done)
}

/// The nodes: state, heartbeat, queue, radios and their health, last result, refusals, problems.
fn nodes_table(nodes: &[NodeRow]) -> String {
    if nodes.is_empty() {
        return "<p>No node has published a result or a status yet.</p>".into();
    }
    let s = |v: &Value, k: &str| esc(v.get(k).and_then(Value::as_str).unwrap_or("?"));
    let n_or = |v: Option<u64>| v.map_or("?".to_owned(), |x| x.to_string());
    let mut t = String::from(
        "<div class=\"wide\"><table>\n<tr><th>Node</th><th>State</th><th>Last heartbeat</th><th>Queue</th><th>Radios</th><th>Last result</th><th>Refusals</th><th>Problems</th></tr>\n",
    );
    for n in nodes {
        let radios: Vec<String> = n
            .radios
            .iter()
            .map(|r| format!("{}: {}", s(r, "device"), s(r, "health")))
            .collect();
        let refusals: Vec<String> = n
            .refusals
            .iter()
            .take(3)
            .map(|r| format!("{}: {}", s(r, "task_id"), s(r, "reason")))
            .collect();
        let _ = writeln!(
            t,
            "<tr><td class=\"name\">{}</td><td class=\"state {}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"problems\">{}</td></tr>",
            esc(n.node.as_deref().unwrap_or("(unnamed)")),
            class_of(n.state),
            esc(n.state),
            match (&n.last_heartbeat, n.age_s) {
                (Some(t), Some(a)) => format!("{} ({a:.0} s ago)", esc(t)),
                _ => "none".to_owned(),
            },
            if n.last_heartbeat.is_some() {
                format!(
                    "{} pending approval, {} deferred, {} approved",
                    n_or(n.pending_approval),
                    n_or(n.deferred),
                    n_or(n.approved)
                )
            } else {
                "unknown (no status)".to_owned()
            },
            if radios.is_empty() { "none reported".to_owned() } else { radios.join("<br>") },
            match (&n.last_task_id, &n.last_status) {
                (Some(id), st) => format!("{} {}", esc(id), esc(st.as_deref().unwrap_or("?"))),
                _ => "none".to_owned(),
            },
            if refusals.is_empty() { "none".to_owned() } else { refusals.join("<br>") },
            n.problems.iter().map(|p| esc(p)).collect::<Vec<_>>().join("<br>")
        );
    }
    t.push_str("</table></div>");
    t
}

/// Write `<name>.html` and its pictures under `<name>/`; returns how many pictures.
fn result_page(
    f: &Fetched<'_>,
    fd: &Found,
    name: &str,
    dir: &Path,
    problems: &[String],
    overwrite: Overwrite,
) -> Result<usize> {
    let js = read_small(f.repo, fd.tree, RESULT_JSON).ok();
    let v: Value = js
        .as_deref()
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or(Value::Null);
    let md = read_small(f.repo, fd.tree, RESULT_MD)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let drawn = if v.is_object() {
        draw_result(&dir.join(name), &v, overwrite)?
    } else {
        super::draw::Drawn::default()
    };
    let mut body = String::new();
    let status = v.get("status").and_then(Value::as_str).unwrap_or("?");
    let _ = writeln!(
        body,
        "<nav><a href=\"index.html\">← fleet</a></nav>\n<h1>{} from {}: <span class=\"{}\">{}</span></h1>",
        esc(&fd.task_id),
        esc(&fd.node_label(f.repo)),
        class_of(status),
        esc(status)
    );
    if problems.is_empty() {
        body.push_str("<p class=\"ok\">Verified: schema, Markdown/JSON agreement, LOG_META and the commit that added it.</p>\n");
    } else {
        body.push_str("<p class=\"bad\">Does not verify:</p>\n<ul class=\"problems\">\n");
        for p in problems {
            let _ = writeln!(body, "<li>{}</li>", esc(p));
        }
        body.push_str("</ul>\n");
    }
    if !drawn.files.is_empty() {
        body.push_str("<h2>Pictures</h2>\n");
    }
    for p in &drawn.files {
        let file = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let _ = writeln!(
            body,
            "<p><img src=\"{name}/{}\" alt=\"{}\"></p>",
            esc_attr(file),
            esc_attr(file)
        );
    }
    for p in &drawn.problems {
        let _ = writeln!(body, "<p class=\"problems\">{}</p>", esc(p));
    }
    body.push_str("<h2>Result</h2>\n");
    body.push_str(&markdown_html(&md));
    let _ = writeln!(body, "<p>Published in <code>{}</code>.</p>", esc(&fd.path));
    rxnode_dsp::write_regular(
        &dir.join(format!("{name}.html")),
        page(
            &format!("{} from {}", fd.task_id, fd.node_label(f.repo)),
            &body,
        )
        .as_bytes(),
    )
    .with_context(|| format!("cannot write {name}.html"))?;
    Ok(drawn.files.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hostile result's Markdown stays inert: tags, attributes, scripts and
    /// `javascript:` links come out as text; no element a browser would run.
    #[test]
    fn a_header_row_of_empty_cells_is_left_out_and_a_named_one_kept() {
        let h = markdown_html(
            "| | |\n|---|---|\n| Status | PASS |\n\n| A | B |\n|---|---|\n| 1 | 2 |\n",
        );
        assert_eq!(h.matches("<thead>").count(), 1, "{h}");
        assert!(
            h.contains("<th>A</th>") && h.contains("<td>Status</td>"),
            "{h}"
        );
        assert!(!h.contains("<th></th>"), "{h}");
    }

    #[test]
    fn hostile_markdown_is_inert_html() {
        let md = "# Hi <script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n\
                  | a | b |\n|---|---|\n| <b onclick=x>c</b> | [click](javascript:alert(3)) |\n\n\
                  ![p](http://evil/x.png)\n\n<iframe src=\"http://evil\"></iframe>\n\n\u{1b}[2J\n";
        let h = markdown_html(md);
        for bad in ["<script", "<img", "<iframe", "<b ", "href=", "\u{1b}"] {
            assert!(!h.contains(bad), "{bad} in {h}");
        }
        // The text as written, without the break opportunities long words are given.
        let text = h.replace("<wbr>", "");
        assert!(
            text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{h}"
        );
        assert!(h.contains("<table>") && h.contains("<td>"), "{h}");
        assert!(h.contains("click &lt;javascript:alert(3)&gt;"), "{h}");
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(esc("x\u{202e}y"), "x\\u{202e}y");
    }

    /// A long word gets a break opportunity every `WORD_CHARS` characters, never
    /// inside an entity nor before a combining mark; white space starts a new word.
    #[test]
    fn a_long_word_is_given_a_break_every_word_chars_never_inside_an_entity() {
        let a = "a".repeat(WORD_CHARS);
        assert_eq!(esc(&format!("{a}{a}b")), format!("{a}<wbr>{a}<wbr>b"));
        assert_eq!(esc(&format!("{a} {a}")), format!("{a} {a}"));
        let amp = "&".repeat(WORD_CHARS + 1);
        assert_eq!(
            esc(&amp),
            format!("{}<wbr>&amp;", "&amp;".repeat(WORD_CHARS))
        );
        let short = "a".repeat(WORD_CHARS - 1);
        assert_eq!(
            esc(&format!("{short}e\u{301}x")),
            format!("{short}e\u{301}<wbr>x")
        );
        let h = markdown_html(&format!("<div>\u{1b}[2J{a}</div>\n"));
        assert_eq!(h.matches("<wbr>").count(), 1, "{h}");
        assert!(!h.contains('\u{1b}') && !h.contains("<div"), "{h}");
        let mut word = 0;
        let pieces = broken_words(&format!("{a}{a}"), &mut word);
        assert_eq!(pieces.len(), 3, "{pieces:?}");
        assert_eq!(word, WORD_CHARS);
    }
}
