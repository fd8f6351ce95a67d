//! The warm Python runner: an interpreter started inside the sandbox that pre-imports what the
//! profile's environment imports, forks a process per job (which compiles the solution once) and
//! from it a fresh child per test with stdin, stdout and stderr on memory files. This crate holds the Python side
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
    include_str!("runner/job.py"),
    include_str!("runner/main.py"),
);

/// The framing of the runner protocol (`runner/protocol.py`), which the referee speaks too.
pub const FRAMING_SOURCE: &str = include_str!("runner/protocol.py");

/// The value codec (`runner/codec.py`): the plain-data encoding of values that cross between a
/// test child and the referee, which includes it too so both sides speak one format.
pub const CODEC_SOURCE: &str = include_str!("runner/codec.py");

/// The program the interpreter is started with (`runner/bootstrap.py`): it compiles the source
/// its arguments hold, joined, in a short-lived child and runs the result, so that the compiler's
/// peak memory is not in the process every test child is forked from.
pub const BOOTSTRAP_SOURCE: &str = include_str!("runner/bootstrap.py");

/// Linux refuses a command-line argument longer than `MAX_ARG_STRLEN` (32 pages: 128 KiB with
/// its terminating NUL) with `E2BIG`; a program's source crosses in pieces no longer than this.
const ARGUMENT_PIECE_BYTES: usize = 64 * 1024;

/// `source` in pieces of at most 64 KiB, each ending at a line break where
/// one is in reach (a longer line is cut at a character boundary): joined, they are `source`.
pub fn argument_pieces(source: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = source;
    while rest.len() > ARGUMENT_PIECE_BYTES {
        let mut end = ARGUMENT_PIECE_BYTES;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        if let Some(line_end) = rest[..end].rfind('\n') {
            end = line_end + 1;
        }
        let (piece, after) = rest.split_at(end);
        pieces.push(piece);
        rest = after;
    }
    pieces.push(rest);
    pieces
}

/// Arguments that make the interpreter run `source` through the bootstrap: isolated mode, no
/// `site`, the bootstrap program, then `source` in pieces ([`argument_pieces`]).
pub fn bootstrapped_arguments(source: &str) -> Vec<&str> {
    let mut arguments = vec!["-I", "-S", "-c", BOOTSTRAP_SOURCE];
    arguments.extend(argument_pieces(source));
    arguments
}

/// Arguments for the interpreter that make it a runner ([`bootstrapped_arguments`] of
/// [`RUNNER_SOURCE`]).
pub fn interpreter_arguments() -> Vec<&'static str> {
    bootstrapped_arguments(RUNNER_SOURCE)
}

/// The runner's command line for the sandbox: `python` (the sandbox's interpreter) and
/// [`interpreter_arguments`].
pub fn runner_command() -> Vec<String> {
    std::iter::once("python")
        .chain(interpreter_arguments())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{ARGUMENT_PIECE_BYTES, RUNNER_SOURCE, argument_pieces};

    #[test]
    fn a_source_crosses_in_pieces_linux_accepts_that_join_to_it() {
        let long_line = format!("x = '{}'\n", "é".repeat(ARGUMENT_PIECE_BYTES));
        for source in [
            RUNNER_SOURCE.to_owned(),
            long_line,
            String::new(),
            "a\nb".to_owned(),
        ] {
            let pieces = argument_pieces(&source);
            assert_eq!(pieces.concat(), source);
            assert!(
                pieces
                    .iter()
                    .all(|piece| piece.len() <= ARGUMENT_PIECE_BYTES)
            );
        }
        // Whole lines where a line break is in reach.
        assert!(
            argument_pieces(RUNNER_SOURCE)
                .iter()
                .all(|piece| piece.ends_with('\n'))
        );
    }
}
