//! Exit statuses and the one place where outcomes and errors become them.
//!
//! | status | meaning |
//! |---|---|
//! | 0 | success; every check passed |
//! | 1 | the command ran to the end but found problems (a failed check, bad lines in the input, an invalid job) |
//! | 2 | usage error, an input that cannot be read (missing file, directory, no records), an output refused because it is an input |
//! | 3 | the sandbox cannot provide the protections asked for |
//! | 4 | a download failed (network, HTTP status) after its retries |
//! | 5 | a downloaded file did not match its checksum (it was deleted) |
//! | 6 | an output could not be written (disk full, I/O error); nothing appeared under its name and the previous file is untouched |
//! | 7 | `serve` refused to listen beyond loopback without a token (`--token-file`, or `--insecure-no-auth`) |
//! | 8 | `redteam`: the target could not be reached or failed to answer for some response |
//! | 130 | `verify` interrupted (Ctrl-C, SIGTERM) after writing every finished result |
//!
//! Other commands stopped by SIGINT, SIGTERM or SIGHUP remove their unfinished outputs and die
//! by that signal (a shell shows 130, 143, 129); a closed standard output ends the command by
//! SIGPIPE (141), quietly. `docs/cli.md` lists the statuses of each command.

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
/// Exit status when an output could not be written.
pub(crate) const OUTPUT_FAILED: u8 = 6;
/// Exit status when `serve` would listen beyond loopback without a token.
pub(crate) const UNAUTHENTICATED_EXPOSURE: u8 = 7;
/// Exit status when `redteam`'s target could not be reached or failed to answer.
pub(crate) const TARGET_FAILED: u8 = 8;

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
            if is_broken_pipe(&error) {
                rlvr_output::terminate_by_signal(signal_hook::consts::SIGPIPE);
            }
            eprintln!("rlvr: error: {}", message(&error));
            ExitCode::from(code(&error))
        }
    }
}

/// The error and its causes on one line, each once. Error types here either state their cause
/// in their own message (and keep it out of the chain) or leave it to the chain, never both;
/// the one link skipped is a wrapper that shows its inner error's message as its own (kept in
/// the chain so that [`code`] finds an output error under it).
pub(crate) fn message(error: &anyhow::Error) -> String {
    let mut message = String::new();
    let mut previous = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if text.is_empty() || text == previous {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
        previous = text;
    }
    message
}

fn code(error: &anyhow::Error) -> u8 {
    if let Some(failure) = error.downcast_ref::<Failure>() {
        return failure.code;
    }
    match rlvr_output::find_output_error(error.chain()) {
        Some(output) if output.is_write_failure() => OUTPUT_FAILED,
        _ => USAGE,
    }
}

/// Standard output (or error) was closed by the reader: nothing in `rlvr` writes to a pipe of
/// its own that could fail this way.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_is_printed_once_even_when_a_message_happens_to_contain_it() {
        let error =
            anyhow::Error::new(std::io::Error::other("denied")).context("cannot read `denied`");
        assert_eq!(message(&error), "cannot read `denied`: denied");
    }

    #[test]
    fn a_wrapper_showing_its_inner_message_prints_it_once() {
        let inner = rlvr_output::OutputError::Write {
            path: "out.jsonl".into(),
            source: std::io::Error::other("no space left on device"),
        };
        let error = anyhow::Error::new(rlvr_products::ProductsError::Output(inner));
        assert_eq!(
            message(&error),
            "could not write `out.jsonl`: no space left on device"
        );
        assert_eq!(code(&error), OUTPUT_FAILED);
    }

    #[test]
    fn an_error_that_leaves_its_cause_to_the_chain_has_it_printed_after() {
        let error = anyhow::Error::new(rlvr_server::ServerError::Bind {
            address: ([127, 0, 0, 1], 80).into(),
            source: std::io::Error::from(std::io::ErrorKind::AddrInUse),
        });
        assert_eq!(
            message(&error),
            "cannot listen on 127.0.0.1:80: address in use"
        );
    }
}
