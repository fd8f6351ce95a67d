//! The judge's referee: the trusted side of functional tests. One warm Python process per
//! worker, in its own sandbox, that splits each test with `ast` into the solution's calls
//! (probes, run by the test child next to the solution) and the rest (the expected side), and
//! finishes each test from the plain-data values the child reported. The expected side of a
//! test never enters the sandbox that runs the solution, nor the runner that forks it.
//!
//! This crate holds the Python side (`referee/*.py`, joined with the runner's framing and value
//! codec into one program) and the Rust end of its framed protocol; starting the interpreter in
//! a sandbox is the caller's business.

mod client;
mod program;

pub use client::{Judgement, Outcome, Referee, RefereeError, TestSplit};
pub use program::{interpreter_arguments, referee_program};
