//! The watcher's event channel: the process's signals (`crate::signals`) and
//! a stdin reader thread post to one tokio channel, so a signal ends a sleep
//! or a prompt at once. Between polls the watcher awaits a tokio timer or the
//! next event (no CPU while idle).
use anyhow::{Context, Result};
use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{
    unbounded_channel, UnboundedReceiver as Receiver, UnboundedSender as Sender,
};

/// Something that wakes the watcher.
enum Event {
    Signal,
    Line(Option<String>),
}

/// What a read at the prompt gave.
pub(super) enum Answer {
    Line(String),
    Eof,
    Signal,
}

/// The channel shared by the signal handler and the stdin reader.
pub(crate) struct Io {
    rt: tokio::runtime::Runtime,
    rx: Receiver<Event>,
    tx: Sender<Event>,
    stdin_started: bool,
    queued: VecDeque<Option<String>>,
    /// Where the task being prompted stands in the queue (shown in the prompt).
    pub(super) queue_note: Option<String>,
}

impl Io {
    /// Subscribe to the process's signals (`crate::signals`) and make the channel.
    pub(crate) fn new() -> Result<Io> {
        let (tx, rx) = unbounded_channel();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .context("cannot start the watcher's event loop")?;
        let to_loop = tx.clone();
        crate::signals::subscribe(move || to_loop.send(Event::Signal).is_ok())
            .map_err(|e| anyhow::anyhow!(e))
            .context("cannot install the signal handler")?;
        Ok(Io {
            rt,
            rx,
            tx,
            stdin_started: false,
            queued: VecDeque::new(),
            queue_note: None,
        })
    }

    /// Whether a stop signal arrived.
    pub(crate) fn stopping(&self) -> bool {
        crate::signals::received()
    }

    /// Set (or clear) the queue line shown with the next prompts.
    pub(crate) fn set_queue_note(&mut self, note: Option<String>) {
        self.queue_note = note;
    }

    /// The process's stop flag, to cancel a fetch in progress.
    pub(super) fn flag(&self) -> &'static AtomicBool {
        crate::signals::flag()
    }

    /// Sleep, waking early on a signal (returns `true` then).
    pub(super) fn sleep(&mut self, d: Duration) -> bool {
        if self.stopping() {
            return true;
        }
        let end = Instant::now() + d;
        loop {
            let now = Instant::now();
            if now >= end {
                return false;
            }
            let Io { rt, rx, .. } = self;
            match rt.block_on(async { tokio::time::timeout(end - now, rx.recv()).await }) {
                Ok(Some(Event::Signal)) => return true,
                Ok(Some(Event::Line(l))) => self.queued.push_back(l),
                Err(_elapsed) => return false,
                Ok(None) => return self.stopping(),
            }
        }
    }

    pub(super) fn read_answer(&mut self) -> Answer {
        if self.stopping() {
            return Answer::Signal;
        }
        if let Some(l) = self.queued.pop_front() {
            return l.map(Answer::Line).unwrap_or(Answer::Eof);
        }
        if !self.stdin_started {
            self.stdin_started = true;
            let tx = self.tx.clone();
            std::thread::spawn(move || {
                let stdin = std::io::stdin();
                let mut lock = stdin.lock();
                loop {
                    // Non-UTF-8 bytes are an unknown answer, not end of input.
                    match crate::term::read_line_lossy(&mut lock) {
                        Ok(None) | Err(_) => {
                            let _ = tx.send(Event::Line(None));
                            break;
                        }
                        Ok(Some(l)) => {
                            if tx.send(Event::Line(Some(l))).is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        }
        let Io { rt, rx, .. } = self;
        match rt.block_on(rx.recv()) {
            Some(Event::Signal) => Answer::Signal,
            Some(Event::Line(Some(l))) => Answer::Line(l),
            Some(Event::Line(None)) | None => Answer::Eof,
        }
    }
}
