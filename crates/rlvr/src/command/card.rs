//! `rlvr card`: not built yet.

use crate::exit::{Failure, Status, USAGE};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: Args) -> anyhow::Result<Status> {
    Err(Failure::new(USAGE, "rlvr card is not built yet").into())
}
