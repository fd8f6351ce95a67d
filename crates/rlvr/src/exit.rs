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

/// What a cause in an error's chain is where several types can be (kept whole, not as text).
pub(crate) type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Every error a command ends with, by what went wrong. [`Error::exit_status`] ties each to its
/// status in one `match` the compiler checks, and commands return this type: an error of a
/// type no variant claims does not compile, so none falls back to "usage" unseen. Causes stay
/// in the `source` chain, and [`message`] prints them.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A flag or an argument the command cannot use (2).
    #[error("{0}")]
    Usage(String),
    /// An input that cannot be read, or holds nothing to work on (2); the cause, if any, is
    /// printed after the message.
    #[error("{message}")]
    Input {
        /// What could not be read, naming it.
        message: String,
        /// Why.
        #[source]
        source: Option<Cause>,
    },
    /// A file given as input could not be opened or read (2); its message names the path.
    #[error(transparent)]
    Unreadable(std::io::Error),
    /// A dataset file could not be read (2).
    #[error(transparent)]
    Read(#[from] rlvr_dataset::ReadError),
    /// A dataset product failed: an output it could not write (6), else its input or options (2).
    #[error(transparent)]
    Products(#[from] rlvr_products::ProductsError),
    /// An output could not be written (6), or is refused before any work (2).
    #[error(transparent)]
    Output(#[from] rlvr_output::OutputError),
    /// Writing a command's output stream (standard output, the results) failed (6); a closed
    /// standard output ends the command by SIGPIPE instead ([`to_exit_code`]).
    #[error("writing {stream}")]
    Write {
        /// Which stream.
        stream: &'static str,
        /// What the system said (for a file, the [`rlvr_output::OutputError`] inside).
        #[source]
        source: std::io::Error,
    },
    /// The sandbox cannot provide the protections asked for (3).
    #[error("{message}")]
    SandboxUnavailable {
        /// What cannot be had.
        message: String,
        /// Why, when a lower layer said.
        #[source]
        source: Option<Cause>,
    },
    /// The sandbox cannot start or provide the protections asked for (3).
    #[error(transparent)]
    Sandbox(#[from] rlvr_sandbox::SandboxError),
    /// A language other than Python cannot be compiled or run here: its toolchain is missing,
    /// or the sandbox failed (3).
    #[error(transparent)]
    Language(#[from] rlvr_languages::OnceError),
    /// A download failed (4), its file did not match its checksum (5), or its file on disk
    /// could not be written (6).
    #[error(transparent)]
    Download(#[from] rlvr_hub::DownloadError),
    /// A download's file on disk could not be written (6); the bytes so far stay in OUT.part
    /// for the next fetch to resume, and OUT is untouched. (The cause is in the message.)
    #[error("{error} (the bytes so far are kept in the .part file to resume)")]
    DownloadInterrupted {
        /// What the system said.
        error: std::io::Error,
    },
    /// `serve` refused to listen beyond loopback without a token (7).
    #[error(transparent)]
    UnauthenticatedExposure(#[from] rlvr_server::UnauthenticatedExposure),
    /// `serve` could not listen or run (2).
    #[error(transparent)]
    Server(#[from] rlvr_server::ServerError),
    /// A command's JSON could not be written (6): the stream failed, or (a bug) a value has no
    /// JSON form.
    #[error("writing JSON")]
    Json(#[from] serde_json::Error),
    /// `verify --dataset`: the dataset file cannot be read or indexed (2).
    #[error(transparent)]
    Dataset(Cause),
    /// `verify --reward binary` with a profile whose reward is fixed (2).
    #[error(transparent)]
    Profile(#[from] rlvr_verify::ProfileError),
    /// `synth` could not generate its file: a size out of range (2), or writing it failed (6).
    #[error("could not generate {}", path.display())]
    Synth {
        /// The output.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: rlvr_synth::SynthError,
    },
    /// `verify` wrote fewer results than it read jobs (6): its output is incomplete.
    #[error("{written} results were written for {jobs} jobs")]
    ResultsMissing {
        /// Results written.
        written: u64,
        /// Jobs read.
        jobs: u64,
    },
    /// A signal handler could not be installed (2, as for every command before it runs).
    #[error("installing the {signal} handler")]
    SignalHandler {
        /// Which signal's.
        signal: &'static str,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A time or memory limit given as a flag is out of range (2).
    #[error(transparent)]
    Limit(#[from] rlvr_verify::LimitError),
    /// `redteam --catalogue-version` names no version of the catalogue (2).
    #[error(transparent)]
    Catalogue(#[from] rlvr_redteam::CatalogueError),
    /// `redteam`'s target could not be reached or failed to answer (8).
    #[error("{0}")]
    TargetFailed(String),
}

/// Exit status for usage errors and unreadable inputs (also when the signal handler cannot be
/// installed, before any command runs).
pub(crate) const USAGE: u8 = 2;
const SANDBOX_UNAVAILABLE: u8 = 3;
const DOWNLOAD_FAILED: u8 = 4;
const CHECKSUM_MISMATCH: u8 = 5;
const OUTPUT_FAILED: u8 = 6;
const UNAUTHENTICATED_EXPOSURE: u8 = 7;
const TARGET_FAILED: u8 = 8;

impl Error {
    /// The process's exit status for this error (the table above).
    pub(crate) fn exit_status(&self) -> u8 {
        use rlvr_hub::DownloadError;
        use rlvr_products::ProductsError;
        use rlvr_server::ServerError;
        match self {
            Error::Usage(_)
            | Error::Input { .. }
            | Error::Unreadable(_)
            | Error::Read(_)
            | Error::Limit(_)
            | Error::Dataset(_)
            | Error::Profile(_)
            | Error::SignalHandler { .. }
            | Error::Catalogue(_) => USAGE,
            Error::Products(error) => match error {
                ProductsError::Output(output) => output_status(output),
                // A product written through `std::io::Write` carries its OutputError inside
                // the I/O (or Parquet) error: that is what failed.
                ProductsError::Io { .. } | ProductsError::Parquet { .. } => {
                    rlvr_output::find_output_error(chain(error)).map_or(USAGE, output_status)
                }
                ProductsError::Read(_)
                | ProductsError::NoRecords { .. }
                | ProductsError::Arrow { .. }
                | ProductsError::NotParquet { .. }
                | ProductsError::UnknownLayout { .. }
                | ProductsError::BadParquetRow { .. }
                | ProductsError::InvalidOption { .. }
                | ProductsError::OutputExists { .. }
                | ProductsError::Chart { .. } => USAGE,
            },
            Error::Output(output) => output_status(output),
            Error::Write { source, .. } => {
                rlvr_output::find_output_error(chain(source)).map_or(OUTPUT_FAILED, output_status)
            }
            Error::Json(_) | Error::ResultsMissing { .. } => OUTPUT_FAILED,
            Error::Synth { source, .. } => match source {
                rlvr_synth::SynthError::TooManyRows { .. }
                | rlvr_synth::SynthError::AverageRecordBytes { .. } => USAGE,
                rlvr_synth::SynthError::Write(output) => output_status(output),
                rlvr_synth::SynthError::Stream(_) | rlvr_synth::SynthError::Encode(_) => {
                    OUTPUT_FAILED
                }
            },
            Error::SandboxUnavailable { .. } | Error::Sandbox(_) | Error::Language(_) => {
                SANDBOX_UNAVAILABLE
            }
            Error::Download(error) => match error {
                DownloadError::ChecksumMismatch { .. } => CHECKSUM_MISMATCH,
                // The bytes so far stay in OUT.part; OUT is untouched.
                DownloadError::Io(_) => OUTPUT_FAILED,
                DownloadError::Status { .. }
                | DownloadError::AttemptsExhausted { .. }
                | DownloadError::Protocol { .. } => DOWNLOAD_FAILED,
            },
            Error::DownloadInterrupted { .. } => OUTPUT_FAILED,
            Error::UnauthenticatedExposure(_) => UNAUTHENTICATED_EXPOSURE,
            Error::Server(ServerError::Bind { .. } | ServerError::Io { .. }) => USAGE,
            Error::TargetFailed(_) => TARGET_FAILED,
        }
    }

    /// A flag or an argument the command cannot use.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    /// An input, named by `message`, that cannot be read because of `source`.
    pub(crate) fn input(message: impl Into<String>, source: impl Into<Cause>) -> Self {
        Error::Input {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// An input, named by `message`, that holds nothing to work on (or is not a file).
    pub(crate) fn empty_input(message: impl Into<String>) -> Self {
        Error::Input {
            message: message.into(),
            source: None,
        }
    }

    /// The sandbox cannot provide what `message` says, because of `source`.
    pub(crate) fn sandbox_unavailable(
        message: impl Into<String>,
        source: impl Into<Cause>,
    ) -> Self {
        Error::SandboxUnavailable {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// Writing `stream` failed: for `map_err`.
    pub(crate) fn write(stream: &'static str) -> impl FnOnce(std::io::Error) -> Self {
        move |source| Error::Write { stream, source }
    }
}

/// 6 for an output that could not be written, 2 for one refused before any work.
fn output_status(output: &rlvr_output::OutputError) -> u8 {
    if output.is_write_failure() {
        OUTPUT_FAILED
    } else {
        USAGE
    }
}

/// `error` and its causes, outermost first.
fn chain<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error), |error| error.source())
}

pub(crate) fn to_exit_code(outcome: Result<Status, Error>) -> ExitCode {
    match outcome {
        Ok(Status::Success) => ExitCode::SUCCESS,
        Ok(Status::ProblemsFound) => ExitCode::from(1),
        Ok(Status::Interrupted) => ExitCode::from(130),
        Err(error) => {
            if is_broken_pipe(&error) {
                rlvr_output::terminate_by_signal(signal_hook::consts::SIGPIPE);
            }
            eprintln!("rlvr: error: {}", message(&error));
            ExitCode::from(error.exit_status())
        }
    }
}

/// The error and its causes on one line, each once. Error types here either state their cause
/// in their own message (and keep it out of the chain) or leave it to the chain, never both;
/// the one link skipped is a wrapper that shows its inner error's message as its own (kept in
/// the chain so that [`Error::exit_status`] finds an output error under it).
pub(crate) fn message(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = String::new();
    let mut previous = String::new();
    for cause in chain(error) {
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

/// Standard output (or error) was closed by the reader: nothing in `rlvr` writes to a pipe of
/// its own that could fail this way.
fn is_broken_pipe(error: &Error) -> bool {
    let broken_pipe = Some(std::io::ErrorKind::BrokenPipe);
    chain(error).any(|cause| {
        // serde_json keeps the I/O error it hit out of its chain, but tells its kind.
        cause
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            == broken_pipe
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == broken_pipe
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

    fn io(kind: std::io::ErrorKind) -> std::io::Error {
        std::io::Error::from(kind)
    }

    #[test]
    fn every_cause_is_printed_once_even_when_a_message_happens_to_contain_it() {
        let error = Error::input("cannot read `denied`", std::io::Error::other("denied"));
        assert_eq!(message(&error), "cannot read `denied`: denied");
        assert_eq!(error.exit_status(), USAGE);
    }

    #[test]
    fn a_wrapper_showing_its_inner_message_prints_it_once() {
        let inner = rlvr_output::OutputError::Write {
            path: "out.jsonl".into(),
            source: std::io::Error::other("no space left on device"),
        };
        let error = Error::from(rlvr_products::ProductsError::Output(inner));
        assert_eq!(
            message(&error),
            "could not write `out.jsonl`: no space left on device"
        );
        assert_eq!(error.exit_status(), OUTPUT_FAILED);
    }

    #[test]
    fn an_error_that_leaves_its_cause_to_the_chain_has_it_printed_after() {
        let error = Error::from(rlvr_server::ServerError::Bind {
            address: ([127, 0, 0, 1], 80).into(),
            source: io(std::io::ErrorKind::AddrInUse),
        });
        assert_eq!(
            message(&error),
            "cannot listen on 127.0.0.1:80: address in use"
        );
        assert_eq!(error.exit_status(), USAGE);
    }

    #[test]
    fn each_kind_of_failure_has_its_documented_status() {
        let refused = rlvr_output::OutputError::WouldReplaceInput {
            output: "in.jsonl".into(),
            input: "in.jsonl".into(),
            relation: "is",
        };
        let cases: Vec<(Error, u8)> = vec![
            (Error::usage("--rows must be positive"), 2),
            (Error::from(refused), 2),
            (
                Error::SandboxUnavailable {
                    message: "no user namespaces".into(),
                    source: None,
                },
                3,
            ),
            (
                Error::from(rlvr_hub::DownloadError::Status {
                    url: "https://example.invalid/file".into(),
                    status: 404,
                }),
                4,
            ),
            (
                Error::from(rlvr_hub::DownloadError::ChecksumMismatch {
                    path: "out.jsonl".into(),
                    expected: "a".into(),
                    actual: "b".into(),
                }),
                5,
            ),
            (
                Error::DownloadInterrupted {
                    error: io(std::io::ErrorKind::StorageFull),
                },
                6,
            ),
            (
                Error::write(crate::stdout::STANDARD_OUTPUT)(io(std::io::ErrorKind::Other)),
                6,
            ),
            (
                Error::from(rlvr_server::UnauthenticatedExposure {
                    address: ([0, 0, 0, 0], 8080).into(),
                }),
                7,
            ),
            (Error::TargetFailed("2 cases failed".into()), 8),
        ];
        for (error, status) in cases {
            assert_eq!(error.exit_status(), status, "{error:?}");
        }
    }

    #[test]
    fn an_output_error_inside_a_stream_error_decides_the_status() {
        // A results file written through `std::io::Write`: refused before any work is usage.
        let refused = rlvr_output::OutputError::WouldReplaceInput {
            output: "in.jsonl".into(),
            input: "in.jsonl".into(),
            relation: "is",
        };
        let error = Error::write("results")(std::io::Error::other(refused));
        assert_eq!(error.exit_status(), USAGE);
    }

    #[test]
    fn a_closed_pipe_is_recognised_through_serde_json() {
        let closed = serde_json::Error::io(io(std::io::ErrorKind::BrokenPipe));
        assert!(is_broken_pipe(&Error::from(closed)));
        let closed =
            Error::write(crate::stdout::STANDARD_OUTPUT)(io(std::io::ErrorKind::BrokenPipe));
        assert!(is_broken_pipe(&closed));
        assert!(!is_broken_pipe(&Error::usage("no")));
    }
}
