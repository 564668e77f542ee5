//! Exit codes (docs/protocol.md) carried through `anyhow` as marker errors.
use std::fmt;
use std::process::ExitCode;

/// Bad usage or invalid input: exit 2.
#[derive(Debug)]
pub struct BadInput(pub String);

/// Refused by the safety interlock or policy: exit 3.
#[derive(Debug)]
pub struct Refused(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.starts_with("refused") {
            f.write_str(&self.0)
        } else {
            write!(f, "refused: {}", self.0)
        }
    }
}
impl std::error::Error for BadInput {}
impl std::error::Error for Refused {}

/// Bad input in one named field of a library request (`sample_rate_hz`): exit 2.
/// The library names the field; a command names it as its caller typed it (a flag)
/// with [`BadField::named`] before printing.
#[derive(Debug)]
pub struct BadField {
    /// The request's field, as the library calls it.
    pub field: &'static str,
    /// What is wrong, as it follows the name (`" 0 must be a finite number > 0"`).
    pub problem: String,
}

impl BadField {
    /// The message with the field called `name`.
    pub fn named(&self, name: &str) -> String {
        format!("{name}{}", self.problem)
    }
}
impl fmt::Display for BadField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.named(self.field))
    }
}
impl std::error::Error for BadField {}

/// An error for exit status 2 naming the request's field it is about.
pub fn bad_field(field: &'static str, problem: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(BadField {
        field,
        problem: problem.into(),
    })
}

/// An error for exit status 2.
pub fn bad_input(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(BadInput(msg.into()))
}

/// An error for exit status 3.
pub fn refused(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Refused(msg.into()))
}

/// Map an error to its exit status: a `Refused` anywhere in the chain wins, then `BadInput`.
pub fn code_for(err: &anyhow::Error) -> ExitCode {
    ExitCode::from(status_for(err))
}

/// The exit status of [`code_for`] as a number (3 refused, 2 bad input, 1 failed).
pub fn status_for(err: &anyhow::Error) -> u8 {
    if err.chain().any(|e| e.downcast_ref::<Refused>().is_some()) {
        3
    } else if err
        .chain()
        .any(|e| e.downcast_ref::<BadInput>().is_some() || e.downcast_ref::<BadField>().is_some())
    {
        2
    } else {
        1
    }
}

/// Whether the error is a closed pipe on the output (`rxnode man | head -1`): not a
/// failure of the command, so it ends quietly with status 0.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// An error as one line for people: the whole chain (`{:#}`), without the Git
/// library's internal codes (`; class=Config (7); code=NotFound (-3)`), which
/// say nothing to an operator; the message before them says what went wrong.
pub fn error_text(err: &anyhow::Error) -> String {
    strip_git_codes(&format!("{err:#}"))
}

fn strip_git_codes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = ["; class=", "; code="]
            .iter()
            .filter_map(|m| rest.find(m))
            .min();
        let Some(at) = next else {
            out.push_str(rest);
            return out;
        };
        // `; class=Word (n)`: only that exact shape is dropped.
        let tail = &rest[at..];
        let shape = tail.find(')').filter(|&close| {
            let inner = &tail[..close];
            inner.contains(" (")
                && inner.rsplit(" (").next().is_some_and(|n| {
                    n.trim_start_matches('-')
                        .chars()
                        .all(|c| c.is_ascii_digit())
                })
        });
        match shape {
            Some(close) => {
                out.push_str(&rest[..at]);
                rest = &rest[at + close + 1..];
            }
            None => {
                out.push_str(&rest[..at + 2]);
                rest = &rest[at + 2..];
            }
        }
    }
}

/// An error as one JSON object for `--json` (docs/protocol.md, exit status):
/// `{"error": {"message", "fix"}, "exit": N}`; `fix` is the text after the message's
/// `fix: ` (null when it names none).
pub fn error_json(err: &anyhow::Error) -> serde_json::Value {
    let text = error_text(err);
    let (message, fix) = match text.find("fix: ") {
        Some(at) => (
            text[..at]
                .trim_end_matches([' ', ';', ',', '—', '-', '('])
                .to_string(),
            Some(text[at + 5..].trim_end_matches(')').trim().to_string()),
        ),
        None => (text.clone(), None),
    };
    serde_json::json!({"error": {"message": message, "fix": fix}, "exit": status_for(err)})
}

/// A command's successful outcome: usually 0, but `validate` of an invalid
/// file reports its findings and still exits 2.
pub enum Outcome {
    /// Exit 0.
    Done,
    /// Exit with this code after the command printed its own report.
    Code(u8),
}

#[cfg(test)]
mod git_code_tests {
    use super::*;

    /// git2's internal class and code never reach the operator; the message does.
    #[test]
    fn git_library_codes_are_dropped_from_error_text() {
        let e =
            anyhow::anyhow!("remote 'nosuch' does not exist; class=Config (7); code=NotFound (-3)")
                .context("fetch failed");
        assert_eq!(
            error_text(&e),
            "fetch failed: remote 'nosuch' does not exist"
        );
        let plain = anyhow::anyhow!("a; code=x but not a git code");
        assert_eq!(error_text(&plain), "a; code=x but not a git code");
    }
}
