//! The rlvr-python-compat crate's integration tests: one test binary, a module per concern.

mod json_compat;
mod python_parity;
