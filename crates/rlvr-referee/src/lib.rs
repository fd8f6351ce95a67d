//! The judge's referee: the trusted side of functional tests. One warm Python process per
//! worker, in its own sandbox, that runs each test's code whole while the solution answers its
//! calls one at a time from a child in the runner's sandbox (`referee/live.py`; the child's end
//! is the runner's `runner/live.py`). No expected value, test text or later argument ever
//! reaches the solution's process.
//!
//! This crate holds the Python side (`referee/*.py`, a package whose modules include the
//! runner's framing and value codec) and the Rust end of its framed protocol; starting the interpreter in
//! a sandbox and relaying messages are the caller's business.

#![forbid(unsafe_code)]

mod client;
mod program;

pub use client::{Event, Judgement, MAX_MESSAGE, Referee, RefereeOutcome};
pub use program::{REFEREE_ENTRY, REFEREE_MODULES, interpreter_arguments};
