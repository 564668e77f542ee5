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
    if err.chain().any(|e| e.downcast_ref::<Refused>().is_some()) {
        ExitCode::from(3)
    } else if err.chain().any(|e| e.downcast_ref::<BadInput>().is_some()) {
        ExitCode::from(2)
    } else {
        ExitCode::from(1)
    }
}

/// A command's successful outcome: usually 0, but `validate` of an invalid
/// file reports its findings and still exits 2.
pub enum Outcome {
    /// Exit 0.
    Done,
    /// Exit with this code after the command printed its own report.
    Code(u8),
}
