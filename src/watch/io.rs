//! The watcher's event channel: the process's signals (`crate::signals`) and
//! a stdin reader thread post to one tokio channel, so a signal ends a sleep
//! or a prompt at once. Between polls the watcher awaits a tokio timer or the
//! next event (no CPU while idle).
//!
//! The reader thread reads a line only when a prompt asks for one, after the
//! prompt was drawn and (on a terminal) earlier input discarded
//! ([`crate::term::draw_prompt`]): nothing typed while the watcher is idle is
//! kept to answer a later prompt (docs/safety.md#typed-ahead-input).
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
    /// stdin gave no line that can be an answer (longer than the bound, or a read error).
    Unreadable(String),
}

/// What a read at the prompt gave.
pub(super) enum Answer {
    Line(String),
    Eof,
    Signal,
    /// No answer can be read from stdin any more; why.
    Unreadable(String),
}

/// The channel shared by the signal handler and the stdin reader.
pub(crate) struct Io {
    rt: tokio::runtime::Runtime,
    rx: Receiver<Event>,
    tx: Sender<Event>,
    /// Asks the reader thread for one line (started at the first prompt).
    want_line: Option<std::sync::mpsc::Sender<()>>,
    /// A line was asked for and has not arrived yet.
    asked: bool,
    /// Answers read before they were asked for (a line, end of input, or why
    /// stdin gave no answer).
    queued: VecDeque<Answer>,
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
            want_line: None,
            asked: false,
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
                Ok(Some(Event::Line(l))) => {
                    // The answer to a request made earlier: none is outstanding now.
                    self.asked = false;
                    self.queued.push_back(l.map_or(Answer::Eof, Answer::Line));
                }
                Ok(Some(Event::Unreadable(why))) => {
                    self.asked = false;
                    self.queued.push_back(Answer::Unreadable(why));
                }
                Err(_elapsed) => return false,
                Ok(None) => return self.stopping(),
            }
        }
    }

    /// Draw `prompt` and read the operator's answer. On a terminal whatever was
    /// typed before the prompt was fully drawn is discarded, in the kernel and
    /// here; from a pipe every line counts, in order.
    pub(super) fn ask(&mut self, prompt: &str, to: crate::term::To) -> Answer {
        if self.stopping() {
            return Answer::Signal;
        }
        let tty = match crate::term::draw_prompt(prompt, to) {
            Ok(tty) => tty,
            Err(e) => return Answer::Unreadable(e.to_string()),
        };
        if tty {
            // Lines a reader delivered before the prompt was drawn are not answers to it.
            self.queued.clear();
            while let Ok(ev) = self.rx.try_recv() {
                match ev {
                    Event::Signal => return Answer::Signal,
                    Event::Line(_) | Event::Unreadable(_) => self.asked = false,
                }
            }
        }
        if let Some(a) = self.queued.pop_front() {
            return a;
        }
        if !self.asked {
            if self.ask_reader().is_err() {
                return Answer::Eof;
            }
            self.asked = true;
        }
        let Io { rt, rx, .. } = self;
        let ev = rt.block_on(rx.recv());
        if matches!(ev, Some(Event::Line(_) | Event::Unreadable(_)) | None) {
            self.asked = false;
        }
        match ev {
            Some(Event::Signal) => Answer::Signal,
            Some(Event::Line(Some(l))) => Answer::Line(l),
            Some(Event::Unreadable(why)) => Answer::Unreadable(why),
            Some(Event::Line(None)) | None => Answer::Eof,
        }
    }

    /// Ask the reader thread (started on first use) for one line.
    fn ask_reader(&mut self) -> Result<(), ()> {
        if self.want_line.is_none() {
            let (want, wanted) = std::sync::mpsc::channel::<()>();
            let tx = self.tx.clone();
            std::thread::spawn(move || {
                // One line per request: until a prompt asks, input stays where the
                // next prompt's discard reaches it (on a terminal no byte past the
                // line is taken from it: `crate::term::read_answer`).
                while wanted.recv().is_ok() {
                    // Non-UTF-8 bytes are an unknown answer, not end of input.
                    match crate::term::read_answer() {
                        Ok(None) => {
                            let _ = tx.send(Event::Line(None));
                            break;
                        }
                        // No later line can be told apart from the rest of this one.
                        Err(e) => {
                            let _ = tx.send(Event::Unreadable(e.to_string()));
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
            self.want_line = Some(want);
        }
        match &self.want_line {
            Some(w) => w.send(()).map_err(|_| ()),
            None => Err(()),
        }
    }
}
