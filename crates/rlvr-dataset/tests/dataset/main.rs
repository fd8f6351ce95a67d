//! The rlvr-dataset crate's integration tests: one test binary, a module per concern.

mod answer_variety_corpus;
mod ground_truth_rule;
mod python_parity;
mod reader_and_stats;
