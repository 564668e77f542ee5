//! `--json watch` speaks JSON Lines (docs/protocol.md#7-exit-status): every line on
//! stdout is one object (a message, or a task shown for a decision), every line on
//! stderr a warning object; no text for a person reaches either stream.
use crate::util::{text, Lab, WATCH_PROMPT};
use serde::de::DeserializeOwned;
use serde::Deserialize;

/// What the watcher says on stdout.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Said {
    Message(String),
    Prompt { task_id: String, text: String },
}

/// What it says on stderr.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Warned {
    Warning { message: String },
}

/// Each non-empty line of `s` as a `T`, failing on the first line that is not one.
fn json_lines<T: DeserializeOwned>(s: &str) -> Vec<T> {
    s.lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l:?}")))
        .collect()
}

#[test]
fn json_watch_prints_one_object_per_line_prompt_and_approval_included() {
    let lab = Lab::new();
    let task = Lab::task("T_JSON_LINES", &lab.main_head(), &[]);
    let commit = lab.post(&task);
    let out = lab.run(&["--json", "watch", "--once", "--interval", "0.2"], "a\n");
    expect_exit!(out, 0);
    let said: Vec<Said> = json_lines(&text(&out.stdout));
    let card = said
        .iter()
        .find_map(|s| match s {
            Said::Prompt { task_id, text } if task_id == "T_JSON_LINES" => Some(text),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no prompt object: {said:?}"));
    assert!(
        card.contains("ID:      T_JSON_LINES") && card.contains(&commit),
        "{card}"
    );
    let messages: Vec<&str> = said
        .iter()
        .filter_map(|s| match s {
            Said::Message(m) => Some(m.as_str()),
            Said::Prompt { .. } => None,
        })
        .collect();
    assert!(messages.contains(&WATCH_PROMPT), "{messages:?}");
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("approved T_JSON_LINES; outbox: ")),
        "{messages:?}"
    );
    // Nothing empty, nothing echoed from the pipe, no `> ` for a person.
    assert!(
        !messages.iter().any(|m| m.is_empty() || *m == "a"),
        "{messages:?}"
    );
    let err = text(&out.stderr);
    assert!(!err.contains("> "), "{err}");
    let _: Vec<Warned> = json_lines(&err);
    assert!(lab.local().join("rx_agent_outbox/T_JSON_LINES").is_dir());
    // Without --json the same watcher speaks text (nothing new now).
    let out = lab.watch_once("");
    expect_exit!(out, 0);
    assert!(
        text(&out.stdout).contains("poll: nothing new"),
        "{}",
        text(&out.stdout)
    );
}

/// A task the watcher refuses is said as a warning object on stderr.
#[test]
fn json_watch_says_a_refusal_as_a_warning_object() {
    let lab = Lab::new();
    // EXPECTED_HEAD not an ancestor of the task commit: refused.
    let task = Lab::task(
        "T_JSON_REFUSED",
        "0123456789abcdef0123456789abcdef01234567",
        &[],
    );
    lab.post(&task);
    let out = lab.run(&["--json", "watch", "--once", "--interval", "0.2"], "");
    expect_exit!(out, 0);
    let _: Vec<Said> = json_lines(&text(&out.stdout));
    let warned: Vec<Warned> = json_lines(&text(&out.stderr));
    assert!(
        warned
            .iter()
            .any(|Warned::Warning { message }| message.contains("task T_JSON_REFUSED rejected")),
        "{warned:?}"
    );
}
