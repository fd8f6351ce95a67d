//! The rlvr binary end to end: one test binary (one link, one process start per test under
//! nextest) with a module per command or concern and a shared [`support`] module (running
//! rlvr, a served instance, job builders; callers in every sandbox mode and waiting on a
//! condition come from the `rlvr-test-support` crate).

mod support;

mod answer_variety;
mod checkers;
mod code_size;
mod dataset;
mod demo_unprivileged;
mod differential_plain;
mod edge_inputs;
mod export_data_source;
mod fetch;
mod fresh_state;
mod languages;
mod languages_fresh;
mod languages_hostile;
mod outputs;
mod products;
mod products_python;
mod redteam;
mod reference;
mod reference_differential;
mod reward_integrity_serve;
mod reward_integrity_verify;
mod sandbox_hostile;
mod serve;
mod serve_abuse;
mod serve_dataset;
mod serve_metrics;
mod serve_python;
mod serve_robustness;
mod serve_sandbox_fusion;
mod serve_sandbox_fusion_replay;
mod snapshots;
mod synth;
mod verify;
mod verify_every_mode;
mod verify_robustness;
