//! The engine through the real sandbox: one test binary with a module per concern and a
//! shared [`common`] module (engines, jobs, scoring helpers).

mod common;

mod checkers;
mod cross_job;
mod fresh_equivalence;
mod languages;
mod live_functional;
mod robustness;
mod scoring;
