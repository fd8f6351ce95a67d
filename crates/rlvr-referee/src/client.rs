//! The Rust end of the referee protocol (see `referee/header.py`), on the runner's framed pipe
//! (`rlvr_runner::transport`, frames of `rlvr-frame`): requests on the referee's stdin, answers on its stdout, never
//! blocking past a deadline. Any error means the referee can no longer be trusted to be in
//! step: the caller kills it and starts another.
//!
//! During a test the referee and the engine exchange messages for the solution's child
//! ([`Referee::next_event`], [`Referee::deliver`]); the engine relays them on the live pipes.

use std::os::fd::{BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use rlvr_frame::encode as frame;
use rlvr_runner::transport::{FramedPipe, PipeError};
use serde::Deserialize;

/// How long starting (running the prelude) may take.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long compiling one job's tests may take, on top of a second per test.
const OPEN_TIMEOUT: Duration = Duration::from_secs(30);
/// How long closing a job may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest header the referee may send.
const MAX_HEADER: usize = 16 << 20;
/// Largest message the referee may send to the solution's child in one frame.
pub const MAX_MESSAGE: usize = 1 << 30;

/// The referee's verdict on one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefereeOutcome {
    /// The test's code ran to its end.
    Pass,
    /// An assertion failed, or the test needed plain data where the solution gave an object
    /// of its own.
    Fail,
    /// An exception: raised by the solution in a call, or by the test.
    Error,
    /// The solution raised MemoryError and the test did not catch it.
    Memory,
    /// The solution's process ended, or broke the protocol, while the test needed it.
    Ended,
}

/// The referee's answer for one test.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Judgement {
    /// What happened.
    pub outcome: RefereeOutcome,
    /// Why it did not pass ("" when it passed).
    #[serde(default)]
    pub detail: String,
    /// Comparisons between two of the solution's own objects: the solution's word.
    #[serde(default)]
    pub untrusted_comparisons: u64,
    /// The solution's child sent what no honest child sends (a malformed message or value, an
    /// answer to a request never asked): reported as `forged_report`.
    #[serde(default)]
    pub forged: bool,
}

/// What the referee said during a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A message for the solution's child (JSON).
    Send(Vec<u8>),
    /// The test is over.
    Verdict(Judgement),
}

#[derive(Debug, Deserialize)]
struct EventHeader {
    op: String,
    #[serde(default)]
    size: usize,
    #[serde(flatten)]
    rest: serde_json::Value,
}

/// A connection to one running referee.
#[derive(Debug)]
pub struct Referee {
    pipe: FramedPipe,
}

impl Referee {
    /// Wraps the referee process's stdin (`requests`) and stdout (`responses`).
    pub fn new(requests: OwnedFd, responses: OwnedFd) -> Self {
        Self {
            pipe: FramedPipe::new(requests, responses, MAX_HEADER),
        }
    }

    /// Runs the prelude (the names every test sees) once.
    pub fn start(&mut self, prelude: &str) -> Result<(), PipeError> {
        let deadline = Instant::now() + START_TIMEOUT;
        self.pipe.send_frame(
            &serde_json::json!({"op": "start", "prelude": prelude.len()}),
            &[prelude.as_bytes()],
            deadline,
        )?;
        let answer: serde_json::Value = self.pipe.receive_json(deadline)?;
        ok_or_refused(&answer)
    }

    /// Opens a job: its process in the referee compiles every test once.
    pub fn open(&mut self, tests: &[&str]) -> Result<(), PipeError> {
        let seconds = u64::try_from(tests.len()).unwrap_or(u64::MAX);
        let deadline = Instant::now() + OPEN_TIMEOUT + Duration::from_secs(seconds.min(3600));
        let sizes: Vec<usize> = tests.iter().map(|test| test.len()).collect();
        let payloads: Vec<&[u8]> = tests.iter().map(|test| test.as_bytes()).collect();
        self.pipe.send_frame(
            &serde_json::json!({"op": "open", "tests": sizes}),
            &payloads,
            deadline,
        )?;
        let answer: serde_json::Value = self.pipe.receive_json(deadline)?;
        ok_or_refused(&answer)
    }

    /// Starts test `index` of the open job. The referee first waits for the child's list of
    /// names, relayed with [`Referee::deliver`].
    pub fn begin_test(&mut self, index: usize, deadline: Instant) -> Result<(), PipeError> {
        self.pipe.send_frame(
            &serde_json::json!({"op": "test", "test": index}),
            &[],
            deadline,
        )
    }

    /// The next thing the referee says during a test.
    pub fn next_event(&mut self, deadline: Instant) -> Result<Event, PipeError> {
        let header: EventHeader = self.pipe.receive_json(deadline)?;
        match header.op.as_str() {
            "send" if header.size <= MAX_MESSAGE => {
                Ok(Event::Send(self.pipe.receive_exact(header.size, deadline)?))
            }
            "verdict" => serde_json::from_value(header.rest)
                .map(Event::Verdict)
                .map_err(|error| PipeError::Protocol(format!("a verdict: {error}"))),
            other => Err(PipeError::Protocol(format!(
                "{other:?} (size {}) during a test",
                header.size
            ))),
        }
    }

    /// The frame that hands the referee one message of the child's.
    pub fn message_frame(message: &[u8]) -> Vec<u8> {
        frame(
            &serde_json::json!({"op": "message", "size": message.len()}),
            &[message],
        )
    }

    /// The frame that tells the referee the child is gone (or broke the protocol).
    pub fn ended_frame(reason: &str) -> Vec<u8> {
        frame(&serde_json::json!({"op": "ended", "reason": reason}), &[])
    }

    /// Writes bytes already framed (see [`Referee::message_frame`]) before `deadline`.
    pub fn deliver(&mut self, framed: &[u8], deadline: Instant) -> Result<(), PipeError> {
        self.pipe.send(framed, deadline)
    }

    /// The pipe the referee's events arrive on; check [`Referee::event_started`] first.
    pub fn events(&self) -> BorrowedFd<'_> {
        self.pipe.responses()
    }

    /// The pipe the referee reads.
    pub fn requests(&self) -> BorrowedFd<'_> {
        self.pipe.requests()
    }

    /// Whether bytes of the next event were read already.
    pub fn event_started(&self) -> bool {
        self.pipe.has_pending()
    }

    /// Closes the job (its process in the referee exits).
    pub fn close(&mut self) -> Result<(), PipeError> {
        let deadline = Instant::now() + CLOSE_TIMEOUT;
        self.pipe
            .send_frame(&serde_json::json!({"op": "close"}), &[], deadline)?;
        let answer: serde_json::Value = self.pipe.receive_json(deadline)?;
        ok_or_refused(&answer)
    }

    /// Asks the referee to exit.
    pub fn exit(mut self) -> Result<(), PipeError> {
        let deadline = Instant::now() + CLOSE_TIMEOUT;
        self.pipe
            .send_frame(&serde_json::json!({"op": "exit"}), &[], deadline)
    }
}

fn ok_or_refused(answer: &serde_json::Value) -> Result<(), PipeError> {
    if answer.get("ok") == Some(&serde_json::Value::Bool(true)) {
        return Ok(());
    }
    let reason = answer
        .get("error")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("no reason given");
    Err(PipeError::Refused(reason.to_owned()))
}
