//! Starting the sandbox for the commands that run programs (`verify`, `serve`), with the one
//! exit status for "this machine cannot provide the protections asked for".

use crate::exit::{Failure, SANDBOX_UNAVAILABLE};

/// Starts the sandbox, mapping a failure to [`SANDBOX_UNAVAILABLE`].
pub(crate) fn start_sandbox(allow_degraded: bool) -> anyhow::Result<rlvr_sandbox::Sandbox> {
    let config = crate::command::run::sandbox_config(allow_degraded)?;
    rlvr_sandbox::Sandbox::new(config).map_err(|error| {
        Failure::new(
            SANDBOX_UNAVAILABLE,
            format!("the sandbox cannot start: {error}"),
        )
        .into()
    })
}
