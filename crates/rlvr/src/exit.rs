//! Exit statuses and the one place where outcomes and errors become them.
//!
//! | status | meaning |
//! |---|---|
//! | 0 | success; every check passed |
//! | 1 | the command ran to the end but found problems (a failed check, failed tests) |
//! | 2 | usage error, or an input that cannot be read (missing file, directory, bad profile) |
//! | 3 | the sandbox cannot provide the protections asked for |
//! | 4 | a download failed (network, HTTP status) after its retries |
//! | 5 | a downloaded file did not match its checksum (it was deleted) |
//! | 130 | interrupted (Ctrl-C) after writing every finished result |

use std::process::ExitCode;

/// What a subcommand reports when it ran to completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Everything passed.
    Success,
    /// The command finished but found problems (exit 1).
    ProblemsFound,
    /// The command stopped early on Ctrl-C after flushing its output (exit 130).
    Interrupted,
}

/// An error that carries its exit status; any other error maps to [`USAGE`].
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
}

/// Exit status for usage errors and unreadable inputs.
pub(crate) const USAGE: u8 = 2;
/// Exit status when the sandbox cannot provide the protections asked for.
pub(crate) const SANDBOX_UNAVAILABLE: u8 = 3;
/// Exit status when a download failed after its retries.
pub(crate) const DOWNLOAD_FAILED: u8 = 4;
/// Exit status when a downloaded file did not match its checksum.
pub(crate) const CHECKSUM_MISMATCH: u8 = 5;

impl Failure {
    pub(crate) fn new(code: u8, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

pub(crate) fn to_exit_code(outcome: anyhow::Result<Status>) -> ExitCode {
    match outcome {
        Ok(Status::Success) => ExitCode::SUCCESS,
        Ok(Status::ProblemsFound) => ExitCode::from(1),
        Ok(Status::Interrupted) => ExitCode::from(130),
        Err(error) => {
            eprintln!("rlvr: error: {error:#}");
            match error.downcast_ref::<Failure>() {
                Some(failure) => ExitCode::from(failure.code),
                None => ExitCode::from(USAGE),
            }
        }
    }
}

/// Logs go to stderr, filtered by `RLVR_LOG` (default: warnings).
pub(crate) fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RLVR_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// Starts the sandbox for a command, mapping a failure to [`SANDBOX_UNAVAILABLE`].
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
