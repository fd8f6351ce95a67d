//! Deterministic generator of synthetic files in the dataset's exact schema (owned by the synth work).
