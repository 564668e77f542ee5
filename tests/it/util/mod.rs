//! The one shared util module of the integration tests: labs of temp Git
//! repositories, the `git` program, the rxnode binary as a child process, and
//! loopback ports that no two tests of this process share.
// Off unix the unix-only tests are left out, and some helpers go unused.
#![cfg_attr(not(unix), allow(dead_code, unused_imports))]
mod git;
mod lab;
mod net;
mod proc;
#[cfg(unix)]
mod pty;
mod sign;

#[cfg(unix)]
pub use self::proc::{signal, unwritable};
#[cfg(unix)]
pub use self::pty::Pty;
pub use self::{
    git::{
        file_url, git, git_out, git_stdout, git_try, push_oversized_commit, snapshot, start_daemon,
        start_daemon_on,
    },
    lab::{ledger_events, node_mac, Lab, BRANCH, TASK_PATH},
    net::{free_port, listener},
    proc::{
        expect_exit, read_lines, run_fed, run_fed_endless_line, runtime_dir, rxnode_bin,
        rxnode_cmd, sha256_file, show, spawn_fed, text, unix_now, Reaped, PROMPT, REVIEW_PROMPT,
        WATCH_PROMPT,
    },
    sign::{git_raw, Key},
};

/// `expect_exit!(out, code)` or `expect_exit!(out, code, "context {x}", …)`: the one
/// exit-code assertion of these tests (see `util::expect_exit`).
macro_rules! expect_exit {
    ($out:expr, $code:expr $(,)?) => {
        $crate::util::expect_exit(&$out, $code, "")
    };
    ($out:expr, $code:expr, $($context:tt)+) => {
        $crate::util::expect_exit(&$out, $code, &format!($($context)+))
    };
}
