//! Starting the sandbox for the commands that run programs (`verify`, `serve`), with the one
//! exit status for "this machine cannot provide the protections asked for".

use crate::exit::Error;

/// Starts the sandbox; a failure is [`Error::SandboxUnavailable`] (exit 3).
pub(crate) fn start_sandbox(allow_degraded: bool) -> Result<rlvr_sandbox::Sandbox, Error> {
    let config = crate::command::run::sandbox_config(allow_degraded)?;
    rlvr_sandbox::Sandbox::new(config)
        .map_err(|error| Error::sandbox_unavailable("the sandbox cannot start", error))
}
