//! A result's Markdown as a person reads it on a terminal: headings underlined,
//! tables aligned in columns, lists with bullets, code indented, the machine
//! trailer (an HTML comment) left out. Every piece of text is made
//! [`terminal_safe`] before it is measured or printed: a result comes from
//! another machine, and no escape sequence in it ever reaches the terminal.
use super::text::terminal_safe;
use pulldown_cmark::{Alignment, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::fmt::Write as _;
use unicode_width::UnicodeWidthStr;

/// The Markdown extensions results use (tables; strikethrough is harmless).
pub(super) fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH
}

/// A table being collected: its alignments, rows of cells, and whether the
/// first row is the header.
#[derive(Default)]
struct Table {
    align: Vec<Alignment>,
    rows: Vec<Vec<String>>,
    cell: String,
}

/// Where text goes while a block is open.
#[derive(Default)]
struct Out {
    text: String,
    /// The current line (paragraph, heading or list item) being written.
    line: String,
    table: Option<Table>,
    /// Nesting of lists: `None` bullets, `Some(n)` the next number.
    lists: Vec<Option<u64>>,
    /// Addresses of the open links.
    links: Vec<String>,
}

impl Out {
    fn push(&mut self, s: &str) {
        let s = terminal_safe(s);
        match &mut self.table {
            Some(t) => t.cell.push_str(&s.replace('\n', " ")),
            None => self.line.push_str(&s),
        }
    }

    /// End the current block: its line, then one blank line.
    fn flush(&mut self, indent: &str) {
        let line = std::mem::take(&mut self.line);
        let line = line.trim_end();
        if !line.is_empty() {
            for l in line.lines() {
                let _ = writeln!(self.text, "{indent}{l}");
            }
        }
    }

    fn blank(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with("\n\n") {
            self.text.push('\n');
        }
    }
}

/// `md` rendered for a terminal (see the module docs).
pub(super) fn render(md: &str) -> String {
    let mut o = Out::default();
    for ev in Parser::new_ext(md, options()) {
        match ev {
            Event::Start(Tag::Heading { .. }) => o.blank(),
            Event::End(TagEnd::Heading(level)) => {
                let title = std::mem::take(&mut o.line).trim().to_owned();
                let rule = if level == HeadingLevel::H1 {
                    '═'
                } else {
                    '─'
                };
                let w = UnicodeWidthStr::width(title.as_str()).max(3);
                let _ = writeln!(o.text, "{title}\n{}", rule.to_string().repeat(w));
            }
            // Inside a list item a paragraph is the item's own line.
            Event::Start(Tag::Paragraph) if o.lists.is_empty() => o.blank(),
            Event::End(TagEnd::Paragraph) if o.lists.is_empty() => o.flush(""),
            Event::Start(Tag::List(first)) => {
                if o.lists.is_empty() {
                    o.blank();
                } else {
                    let indent = "  ".repeat(o.lists.len());
                    o.flush(&indent);
                }
                o.lists.push(first);
            }
            Event::End(TagEnd::List(_)) => {
                o.lists.pop();
            }
            Event::Start(Tag::Item) => {
                let depth = o.lists.len().saturating_sub(1);
                let mark = match o.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_owned(),
                };
                o.line = format!("{}{mark}", "  ".repeat(depth));
            }
            Event::End(TagEnd::Item) => o.flush(""),
            Event::Start(Tag::CodeBlock(_)) => {
                o.blank();
            }
            Event::End(TagEnd::CodeBlock) => {
                o.flush("    ");
            }
            Event::Start(Tag::BlockQuote(_)) => o.blank(),
            Event::End(TagEnd::BlockQuote(_)) => o.flush("│ "),
            Event::Start(Tag::Table(align)) => {
                o.blank();
                o.table = Some(Table {
                    align,
                    ..Table::default()
                });
            }
            Event::Start(Tag::TableHead | Tag::TableRow) => {
                if let Some(t) = &mut o.table {
                    t.rows.push(Vec::new());
                }
            }
            Event::End(TagEnd::TableCell) => {
                if let Some(t) = &mut o.table {
                    let c = std::mem::take(&mut t.cell).trim().to_owned();
                    if let Some(r) = t.rows.last_mut() {
                        r.push(c);
                    }
                }
            }
            Event::End(TagEnd::Table) => {
                if let Some(t) = o.table.take() {
                    o.text.push_str(&table(&t));
                }
            }
            Event::Start(Tag::Link { dest_url, .. }) => o.links.push(dest_url.to_string()),
            Event::End(TagEnd::Link) => {
                // The address after the link's text (shown, never followed).
                if let Some(url) = o.links.pop().filter(|u| !u.is_empty()) {
                    o.push(&format!(" <{url}>"));
                }
            }
            Event::Text(t) | Event::Code(t) => o.push(&t),
            // The author's line breaks are kept: results put one figure per line.
            Event::SoftBreak => o.push("\n"),
            Event::HardBreak => o.push("\n"),
            Event::Rule => {
                o.blank();
                o.text.push_str(&"─".repeat(40));
                o.text.push('\n');
            }
            // The machine trailer and any other HTML: not for a person's terminal.
            Event::Html(_) | Event::InlineHtml(_) => {}
            Event::TaskListMarker(done) => o.push(if done { "[x] " } else { "[ ] " }),
            Event::FootnoteReference(t) => o.push(&format!("[{t}]")),
            _ => {}
        }
    }
    o.flush("");
    // Whatever slipped through (nothing should): escaped, never raw.
    terminal_safe(o.text.trim_end()) + "\n"
}

/// A table as aligned columns: the header underlined, cells padded to the
/// widest in their column (display width, so `µ`, `±` and `—` line up).
fn table(t: &Table) -> String {
    let cols = t.rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut width = vec![0usize; cols];
    for r in &t.rows {
        for (i, c) in r.iter().enumerate() {
            width[i] = width[i].max(UnicodeWidthStr::width(c.as_str()));
        }
    }
    let header_empty = t
        .rows
        .first()
        .is_some_and(|r| r.iter().all(String::is_empty));
    let mut out = String::new();
    for (n, r) in t.rows.iter().enumerate() {
        if n == 0 && header_empty {
            continue;
        }
        let mut line = String::new();
        for (i, w) in width.iter().enumerate() {
            let c = r.get(i).map(String::as_str).unwrap_or("");
            let pad = w.saturating_sub(UnicodeWidthStr::width(c));
            let right = matches!(t.align.get(i), Some(Alignment::Right));
            if i > 0 {
                line.push_str("  ");
            }
            if right {
                line.push_str(&" ".repeat(pad));
                line.push_str(c);
            } else {
                line.push_str(c);
                line.push_str(&" ".repeat(pad));
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
        if n == 0 {
            let total = width.iter().sum::<usize>() + 2 * cols.saturating_sub(1);
            let _ = writeln!(out, "{}", "─".repeat(total));
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tables are aligned columns with the header underlined (no `|---|`), the
    /// heading is underlined, the trailer comment is gone, lists get bullets.
    #[test]
    fn a_result_reads_as_aligned_text() {
        let md = "# RX result: T1 — Clock\n\n| | |\n|---|---|\n| Status | PASS |\n| Risk level | YELLOW |\n\n\
                  ## Peaks\n\n| # | Frequency | Level (dBFS) |\n|---|---|---:|\n| 1 | 100.100000 MHz | -20.1 |\n| 22 | 88 MHz | -9.0 |\n\n\
                  - one\n- two\n\nSome *notes* with `code`.\n\n<!-- rxnode-result schema_version=1 -->\n";
        let t = render(md);
        assert!(t.starts_with("RX result: T1 — Clock\n═════"), "{t}");
        assert!(
            !t.contains('|') && !t.contains("---") && !t.contains("<!--"),
            "{t}"
        );
        assert!(t.contains("Status      PASS\nRisk level  YELLOW\n"), "{t}");
        assert!(t.contains("Peaks\n─────\n"), "{t}");
        // The level column is right-aligned; every row the same width.
        assert!(t.contains("#   Frequency       Level (dBFS)\n"), "{t}");
        assert!(t.contains("1   100.100000 MHz         -20.1\n"), "{t}");
        assert!(t.contains("22  88 MHz                  -9.0\n"), "{t}");
        assert!(t.contains("• one\n• two\n"), "{t}");
        assert!(t.contains("Some notes with code."), "{t}");
    }

    /// Escape sequences, bidi overrides and C1 controls in any cell, heading,
    /// link or code are escaped, never raw.
    #[test]
    fn hostile_text_is_escaped_everywhere() {
        let md =
            "# T\u{1b}]0;pwned\u{7}\n\n| a | b\u{202e} |\n|---|---|\n| \u{1b}[2J | \u{9b}31m |\n\n\
                  [x\u{1b}[1m](http://e/\u{1b}[0m)\n\n```\n\u{1b}[31mred\n```\n";
        let t = render(md);
        for bad in ['\u{1b}', '\u{7}', '\u{202e}', '\u{9b}', '\u{0}'] {
            assert!(!t.contains(bad), "{bad:?} in {t:?}");
        }
        assert!(t.contains("\\u{1b}[2J"), "{t}");
        assert!(t.contains("\\u{202e}"), "{t}");
    }
}
