//! The verify engine: runs plans from `rlvr-verify` through `rlvr-sandbox` with the warm
//! runner of `rlvr-runner`, on every core, and hands results back in job order when asked.
//! `rlvr verify` and `rlvr serve` both run on it.

#![forbid(unsafe_code)]

mod checking;
mod compiled;
mod engine;
mod executor;
mod fault_injection;
mod help_board;
mod in_order;
mod job_line;
mod live;
mod referee_pool;
mod result_line;
mod runner_start;

pub use checking::{CheckerJudge, CheckerLimits, CheckersInSandbox, with_testlib_header};
pub use engine::{Engine, EngineConfig, EngineStatistics, Job, QueueFull, Reply};
pub use in_order::InOrder;
pub use job_line::{JobLine, JobLineError, JobTests, parse_job_line, parse_job_value};
pub use result_line::result_line;
pub use runner_start::{RunnerProcess, runner_memory_bytes, start_runner};

/// Test-only fault injection (debug builds only): see `RLVR_TEST_FAULT` in docs/runner.md.
#[cfg(debug_assertions)]
#[doc(hidden)]
pub use fault_injection::arm as arm_test_faults;
