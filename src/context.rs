//! The node's context: what every command needs, built once by `main` from the
//! command line (clap stays in the binary; nothing here knows about it).
use std::path::PathBuf;

/// Where tasks come from (docs/protocol.md defaults).
#[derive(Debug, Clone)]
pub struct TaskSource {
    /// Git remote to poll.
    pub remote: String,
    /// Watched branch on that remote.
    pub branch: String,
    /// Path of the task file inside the watched branch.
    pub task_path: String,
}

/// The global options every command sees.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// Use only the bundled simulated radio module `rxsim`.
    pub sim: bool,
    /// Print one JSON document instead of human text.
    pub json: bool,
    /// The RX checkout (a Git work tree).
    pub repo: PathBuf,
    /// The node policy file named on the command line or in `RXNODE_POLICY`.
    pub policy: Option<PathBuf>,
    /// Where tasks come from.
    pub source: TaskSource,
}

impl Ctx {
    /// The context for one process. A relative policy path is taken from the
    /// current directory, now; a `repo` inside an RX node's work tree stands for
    /// that node's checkout ([`checkout_of`](crate::store::paths::checkout_of)).
    pub fn new(
        sim: bool,
        json: bool,
        repo: PathBuf,
        policy: Option<PathBuf>,
        source: TaskSource,
    ) -> Ctx {
        let policy = policy.map(|p| {
            if p.is_absolute() {
                p
            } else {
                std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
            }
        });
        Ctx {
            sim,
            json,
            repo: crate::store::paths::checkout_of(&repo),
            policy,
            source,
        }
    }

    /// The checkout's local-state layout, with the node policy this process was given.
    pub(crate) fn paths(&self) -> crate::store::paths::Paths {
        crate::store::paths::Paths::new(&self.repo).with_policy(self.policy.clone())
    }

    /// The one door for output: stdout and stderr, in this process's `--json` mode.
    pub fn shell(&self) -> crate::Shell {
        crate::Shell::new(self.json)
    }

    /// The one reporter, the human report built as text: with `--json` the value
    /// as one pretty-printed JSON document, otherwise the text `human` makes of it;
    /// either is printed here and nowhere else.
    pub(crate) fn report<T: serde::Serialize>(
        &self,
        value: &T,
        human: impl FnOnce(&T) -> String,
    ) -> anyhow::Result<()> {
        self.report_with(value, |v| serde_json::to_string_pretty(v), human)
    }

    /// [`Ctx::report`] for a value whose JSON has a form of its own (a result
    /// file's exact bytes, one compact line).
    pub(crate) fn report_with<T>(
        &self,
        value: &T,
        json: impl FnOnce(&T) -> serde_json::Result<String>,
        human: impl FnOnce(&T) -> String,
    ) -> anyhow::Result<()> {
        if self.json {
            outln!(self.shell(), "{}", json(value)?)?;
        } else {
            self.shell().out(&human(value))?;
        }
        Ok(())
    }

    /// The report of a command's result as text: with `--json` the value as one
    /// pretty-printed JSON document and a newline, otherwise the text `human`
    /// writes for a person.
    pub(crate) fn report_text<T: serde::Serialize>(
        &self,
        value: &T,
        human: impl FnOnce(&T) -> String,
    ) -> anyhow::Result<String> {
        Ok(if self.json {
            format!("{}\n", serde_json::to_string_pretty(value)?)
        } else {
            human(value)
        })
    }

    /// [`Ctx::report_text`] written through the shell, a closed pipe (`| head`)
    /// ignored: the command's exit status then says how its work went (a
    /// capture's PASS 0, PARTIAL or FAIL 1), not whether anyone read it. Any other
    /// write error is returned.
    pub(crate) fn report_to_pipe<T: serde::Serialize>(
        &self,
        value: &T,
        human: impl FnOnce(&T) -> String,
    ) -> anyhow::Result<()> {
        self.report_to_pipe_or_stderr(false, value, human)
    }

    /// [`Ctx::report_to_pipe`], to standard error when `to_stderr` (standard output
    /// carries the samples of `capture --record -`).
    pub(crate) fn report_to_pipe_or_stderr<T: serde::Serialize>(
        &self,
        to_stderr: bool,
        value: &T,
        human: impl FnOnce(&T) -> String,
    ) -> anyhow::Result<()> {
        let text = self.report_text(value, human)?;
        let written = if to_stderr {
            self.shell().err(&text, true)
        } else {
            self.shell().out(&text)
        };
        match written {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg_attr(not(unix), allow(dead_code))]
    fn ctx(policy: Option<&str>) -> Ctx {
        Ctx::new(
            false,
            false,
            PathBuf::from("/lab/rx"),
            policy.map(PathBuf::from),
            TaskSource {
                remote: "origin".into(),
                branch: "video-development".into(),
                task_path: "docs/handoff/NEXT_RX_TASK.md".into(),
            },
        )
    }

    /// The policy location travels with the context: two contexts in one process
    /// keep their own (a process-wide setting kept only the first).
    #[cfg(unix)]
    #[test]
    fn each_context_carries_its_own_policy_path() {
        let a = ctx(Some("/etc/rxnode/a.json"));
        let b = ctx(None);
        let c = ctx(Some("/etc/rxnode/c.json"));
        assert_eq!(a.paths().policy(), PathBuf::from("/etc/rxnode/a.json"));
        assert_eq!(
            b.paths().policy(),
            PathBuf::from("/lab/rx/.local/rxnode-policy.json")
        );
        assert!(!b.paths().policy_is_explicit());
        assert_eq!(c.paths().policy(), PathBuf::from("/etc/rxnode/c.json"));
        assert!(c.paths().policy_is_explicit());
    }
}
