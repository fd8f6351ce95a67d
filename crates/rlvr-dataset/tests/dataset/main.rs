//! The rlvr-dataset crate's integration tests: one test binary, a module per concern.

mod python_parity;
mod reader_and_stats;
