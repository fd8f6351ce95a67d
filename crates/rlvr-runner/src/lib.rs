//! The warm Python runner: one interpreter per job, started inside the sandbox, that compiles
//! the solution once, pre-imports what the profile's environment imports, and forks a fresh child
//! per test with stdin, stdout and stderr on memory files. This crate holds the Python side
//! (`runner/*.py`, embedded as one program) and the Rust side of the framed protocol; starting the interpreter
//! inside the sandbox is the caller's business (it only needs the process's stdin and stdout).
//!
//! Expected outputs never enter the sandbox: a test report carries what the program printed and
//! how it ended, and the verifier compares in Rust.

#![forbid(unsafe_code)]

mod client;
mod protocol;
pub mod transport;

pub use client::Runner;
pub use protocol::{ChildEnding, ChildReport, Harness, JudgeOptions, LoadReport, TestLimits};
pub use transport::PipeError;

/// The Python side of the protocol, one file per concern under `runner/`, joined in this order
/// into one program. Start it with [`interpreter_arguments`].
pub const RUNNER_SOURCE: &str = concat!(
    include_str!("runner/header.py"),
    include_str!("runner/protocol.py"),
    include_str!("runner/process.py"),
    include_str!("runner/harness.py"),
    include_str!("runner/codec.py"),
    include_str!("runner/sensor.py"),
    include_str!("runner/live.py"),
    include_str!("runner/isolation.py"),
    include_str!("runner/test.py"),
    include_str!("runner/main.py"),
);

/// RUNNER_SOURCE in two pieces, each one argument of the command line: the kernel refuses a
/// single argument over 128 KiB (`MAX_ARG_STRLEN`), and the bootstrap joins them.
const RUNNER_SOURCE_HEAD: &str = concat!(
    include_str!("runner/header.py"),
    include_str!("runner/protocol.py"),
    include_str!("runner/process.py"),
    include_str!("runner/harness.py"),
    include_str!("runner/codec.py"),
);
const RUNNER_SOURCE_TAIL: &str = concat!(
    include_str!("runner/sensor.py"),
    include_str!("runner/live.py"),
    include_str!("runner/isolation.py"),
    include_str!("runner/test.py"),
    include_str!("runner/main.py"),
);

/// The framing of the runner protocol (`runner/protocol.py`), which the referee speaks too.
pub const FRAMING_SOURCE: &str = include_str!("runner/protocol.py");

/// The value codec (`runner/codec.py`): the plain-data encoding of values that cross between a
/// test child and the referee, which includes it too so both sides speak one format.
pub const CODEC_SOURCE: &str = include_str!("runner/codec.py");

/// The program the interpreter is started with (`runner/bootstrap.py`): it compiles
/// RUNNER_SOURCE, its first argument, in a short-lived child and runs the result, so that the
/// compiler's peak memory is not in the runner that every test child is forked from.
pub const BOOTSTRAP_SOURCE: &str = include_str!("runner/bootstrap.py");

/// Arguments for the interpreter that make it a runner: isolated mode, no `site`, the bootstrap
/// program and the runner's source (in two pieces the bootstrap joins).
pub fn interpreter_arguments() -> [&'static str; 6] {
    [
        "-I",
        "-S",
        "-c",
        BOOTSTRAP_SOURCE,
        RUNNER_SOURCE_HEAD,
        RUNNER_SOURCE_TAIL,
    ]
}

/// The runner's command line for the sandbox: `python` (the sandbox's interpreter) and
/// [`interpreter_arguments`].
pub fn runner_command() -> Vec<String> {
    std::iter::once("python")
        .chain(interpreter_arguments())
        .map(str::to_owned)
        .collect()
}
