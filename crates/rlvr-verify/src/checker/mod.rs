//! Checkers (issues 25 and 32): how a test's output is judged when the ground truth names a
//! checker instead of leaving it to the profile's comparison. Everything about them is here,
//! behind one entry point, [`judge`]:
//!
//! * what a checker is ([`Checker`]: a built-in rule, or Python or C++ source), read from the
//!   ground truth's `checker`/`checker_cpp` key (`kind`);
//! * the built-in rules, pure comparisons run here (`rules`);
//! * what a checker made of an output ([`CheckerOutcome`]) and when the executor must run a
//!   sandboxed one ([`checker_needed`]) (`outcome`);
//! * whose fault a checker's failure is: the output's when the checker accepts the expected
//!   output in its place, else the checker's (`fault`);
//! * the probes `rlvr check-checker` runs a checker through ([`assurance`]).
//!
//! Sandboxed checkers run in a sandbox of their own, which this crate never starts: [`judge`]
//! reaches them through [`SandboxedCheckers`], which `rlvr_engine::CheckerJudge` implements
//! (its `sandboxed(sandbox, limits)`). The engine's executor and `rlvr check-checker` both
//! call [`judge`], so a checker is asked, and its failure attributed, the same way in both.

pub mod assurance;
mod fault;
mod judge;
mod kind;
mod outcome;
mod rules;

pub use judge::{CheckedTest, NoSandbox, SandboxedCheckers, judge};
pub use kind::{BUILT_IN_CHECKERS, BuiltInChecker, Checker, Tolerance};
pub use outcome::{CheckerOutcome, CheckerScore, checker_needed};
