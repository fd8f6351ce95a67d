//! One module per subcommand; each exposes `Args` (its clap flags) and `run`.

pub(crate) mod audit;
pub(crate) mod card;
pub(crate) mod check_checker;
pub(crate) mod convert;
pub(crate) mod dedup;
pub(crate) mod doctor;
pub(crate) mod export;
pub(crate) mod fetch;
pub(crate) mod import;
pub(crate) mod products_common;
pub(crate) mod redteam;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod show;
pub(crate) mod split;
pub(crate) mod stats;
pub(crate) mod synth;
pub(crate) mod testlib_header;
pub(crate) mod validate;
pub(crate) mod verify;
