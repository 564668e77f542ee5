//! The watched branch's history is a queue (docs/protocol.md "Every posted
//! task reaches the operator").
//!
//! A poll walks the first-parent history from the last examined commit (the
//! marker) to the fetched tip and collects, oldest first, every commit that
//! changed the task file: one *task version* each. Every version is checked
//! against the commit that holds it and leaves exactly one examination line in
//! the ledger:
//!
//! | line | when |
//! |---|---|
//! | `offered` | a valid new task, the branch's current one: queued and prompted |
//! | `superseded` | a valid new task that a later commit replaced before the operator saw it: still queued and prompted |
//! | `refused` | invalid, `EXPECTED_HEAD` not an ancestor, a known ID with a changed text, too large, not a file (with the reason) |
//! | `duplicate` | a text this node already knows (decided, queued, or refused before): not prompted again |
//! | `withdrawn` | the file was deleted while the task it held was pending or deferred: kept in state, never offered again |
//! | `task_file_deleted` | the file was deleted, but what it held was already decided or never seen |
//!
//! and, per poll, `history_rewritten` (the marker is no longer an ancestor of
//! the tip) and `not_examined` (versions beyond the bound, or a first start).
//!
//! The walk is in `history.rs`, the examination of each version in
//! `versions.rs`; what the queue keeps in state is declared with the rest of
//! the state file (`state.rs`: [`QueueState`]); this file holds the queue's
//! bounds and order over that state.
use crate::store::state::{QueueState, State, TaskRecord, TaskStatus};
pub(crate) use crate::store::state::{Rewrite, WalkFrom, WalkRecord, Withdrawal};
use std::collections::BTreeMap;

/// Versions examined per poll unless `--history-limit` says otherwise.
pub const DEFAULT_HISTORY_LIMIT: usize = 50;
/// The largest `--history-limit` accepted.
pub(crate) const MAX_HISTORY_LIMIT: usize = 10_000;
/// Commits one poll walks at most unless `--walk-limit` lowers it: whatever
/// the branch holds (a 200 000-commit push, two unrelated histories
/// force-pushed in turn), one poll stays within about 2 s of CPU and 200 MB
/// (docs/benchmarks.md); older history is reported as not examined and the
/// examined commit moves to the tip, so the next poll does not pay again.
pub const DEFAULT_WALK_LIMIT: usize = 5_000;

impl QueueState {
    /// Append `id` to the queue order (pruning IDs no longer pending, here and
    /// in `superseded`; the ledger keeps the history).
    pub(crate) fn enqueue(&mut self, id: &str, tasks: &BTreeMap<String, TaskRecord>) {
        self.order.retain(|i| {
            i != id
                && tasks
                    .get(i)
                    .is_some_and(|r| r.status == TaskStatus::Pending)
        });
        self.order.push(id.to_owned());
        self.superseded.retain(|i, _| {
            tasks
                .get(i)
                .is_some_and(|r| r.status == TaskStatus::Pending)
        });
    }
}

/// A commit ID as messages and `status` show it: its first 12 digits.
pub(crate) fn short(c: &str) -> &str {
    c.get(..12).unwrap_or(c)
}

/// Pending task IDs in queue order (commit order), then any pending task the
/// queue does not list (a state from an older rxnode), in ID order.
pub(crate) fn pending_in_order(st: &State) -> Vec<String> {
    let pending = |id: &String| {
        st.tasks
            .get(id)
            .is_some_and(|r| r.status == TaskStatus::Pending)
    };
    let mut out: Vec<String> = Vec::new();
    for id in &st.queue.order {
        if pending(id) && !out.contains(id) {
            out.push(id.clone());
        }
    }
    for id in st.ids_with(TaskStatus::Pending) {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::state::TaskRecord;

    fn rec(status: TaskStatus) -> TaskRecord {
        TaskRecord {
            status,
            task_sha256: "s".into(),
            commit: "c".into(),
            risk_level: None,
            title: None,
            first_seen: "t".into(),
            reason: None,
        }
    }

    #[test]
    fn pending_tasks_come_in_queue_order_then_unlisted_ones_by_id() {
        let mut st = State::default();
        for (id, s) in [
            ("A", TaskStatus::Pending),
            ("B", TaskStatus::Pending),
            ("C", TaskStatus::Approved),
            ("D", TaskStatus::Pending),
            ("E", TaskStatus::Withdrawn),
        ] {
            st.tasks.insert(id.into(), rec(s));
        }
        st.queue.order = vec!["D".into(), "C".into(), "B".into(), "E".into(), "D".into()];
        assert_eq!(pending_in_order(&st), ["D", "B", "A"]);
    }

    #[test]
    fn enqueue_appends_once_and_prunes_decided_ids() {
        let mut tasks = BTreeMap::new();
        tasks.insert("A".to_owned(), rec(TaskStatus::Approved));
        tasks.insert("B".to_owned(), rec(TaskStatus::Pending));
        tasks.insert("C".to_owned(), rec(TaskStatus::Pending));
        let mut q = QueueState {
            order: vec!["A".into(), "C".into(), "B".into()],
            ..Default::default()
        };
        q.enqueue("C", &tasks);
        assert_eq!(q.order, ["B", "C"]);
    }

    #[test]
    fn a_state_without_the_queue_loads_with_an_empty_one() {
        let st: State = serde_json::from_str(
            r#"{"schema_version":1,"last_seen_task_id":null,"last_completed_task_id":null,
            "deferred_task_ids":[],"approvals":{},"running":false,"watcher_pid":null,
            "last_poll":null,"remote_marker":null}"#,
        )
        .unwrap();
        assert_eq!(st.queue, QueueState::default());
    }
}
