//! The code-rlvr-15k dataset: a Python-compatible JSON parser, the record model, a streaming
//! parallel reader that keeps line numbers and byte offsets, validation, statistics and a
//! generator of synthetic files with the same shape.

pub mod synth;
