//! `rlvr stats`: not built yet; the owner of this module replaces this file.

use crate::exit::{Failure, Status, USAGE};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: Args) -> anyhow::Result<Status> {
    Err(Failure::new(USAGE, "rlvr stats is not built yet").into())
}
