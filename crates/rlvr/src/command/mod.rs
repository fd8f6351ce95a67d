//! One module per subcommand; each exposes `Args` (its clap flags) and `run`.

pub(crate) mod doctor;
pub(crate) mod fetch;
pub(crate) mod run;
pub(crate) mod show;
pub(crate) mod stats;
pub(crate) mod synth;
pub(crate) mod validate;
pub(crate) mod verify;
