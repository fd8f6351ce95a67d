//! The warm Python runner: an interpreter started inside the sandbox that pre-imports what the
//! profile's environment imports, forks a process per job (which compiles the solution once) and
//! from it a fresh child per test with stdin, stdout and stderr on memory files. This crate holds the Python side
//! (`runner/*.py`, embedded as a package of modules) and the Rust side of the framed protocol; starting the interpreter
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

/// The runner's Python side, one module per concern under `runner/`: the package `rlvr_runner`
/// (`runner/__init__.py`, the protocol's description) and its modules, each with its source.
/// The interpreter imports them from memory ([`bootstrapped_arguments`]); `rlvr_runner.main`
/// starts the runner. Start it with [`interpreter_arguments`].
pub const RUNNER_MODULES: &[(&str, &str)] = &[
    ("rlvr_runner", include_str!("runner/__init__.py")),
    ("rlvr_runner.batch", include_str!("runner/batch.py")),
    ("rlvr_runner.children", include_str!("runner/children.py")),
    ("rlvr_runner.codec", CODEC_SOURCE),
    ("rlvr_runner.decoder", DECODER_SOURCE),
    ("rlvr_runner.encoder", ENCODER_SOURCE),
    ("rlvr_runner.harness", include_str!("runner/harness.py")),
    ("rlvr_runner.isolation", include_str!("runner/isolation.py")),
    ("rlvr_runner.job", include_str!("runner/job.py")),
    ("rlvr_runner.live", include_str!("runner/live.py")),
    ("rlvr_runner.loading", include_str!("runner/loading.py")),
    ("rlvr_runner.main", include_str!("runner/main.py")),
    ("rlvr_runner.process", include_str!("runner/process.py")),
    ("rlvr_runner.protocol", FRAMING_SOURCE),
    ("rlvr_runner.sensor", include_str!("runner/sensor.py")),
    ("rlvr_runner.test", include_str!("runner/test.py")),
    (
        "rlvr_runner.work_directory",
        include_str!("runner/work_directory.py"),
    ),
];

/// The module whose `main()` starts the runner.
pub const RUNNER_ENTRY: &str = "rlvr_runner.main";

/// The one module of the runner that is not a file: `rlvr_runner.test_child_steps`, the steps
/// of a test child ([`rlvr_sandbox::test_child_steps`], the list the exec supervisor follows
/// too) as the tuple `TEST_CHILD_STEPS`, which `runner/isolation.py` imports.
pub const TEST_CHILD_STEPS_MODULE: &str = "rlvr_runner.test_child_steps";

/// The source of [`TEST_CHILD_STEPS_MODULE`].
pub fn test_child_steps_source() -> String {
    let steps: Vec<String> = rlvr_sandbox::test_child_steps()
        .map(|step| format!("{step:?},"))
        .collect();
    format!(
        "# The steps of a test child (crates/rlvr-sandbox/src/test_child_steps.txt).\nTEST_CHILD_STEPS = ({})\n",
        steps.join(" ")
    )
}

/// The framing of the runner protocol (`runner/protocol.py`), which the referee speaks too: a
/// module of both packages, which import it as `.protocol`.
pub const FRAMING_SOURCE: &str = include_str!("runner/protocol.py");

/// The value codec (`runner/codec.py`): the plain-data encoding of values that cross between a
/// test child and the referee, a module of both packages (`.codec`) so both sides speak one
/// format. It holds what both directions share; [`ENCODER_SOURCE`] and [`DECODER_SOURCE`] are
/// its two directions, modules of both packages too (`.encoder`, `.decoder`).
pub const CODEC_SOURCE: &str = include_str!("runner/codec.py");

/// The codec's encoder (`runner/encoder.py`, `encode_values`).
pub const ENCODER_SOURCE: &str = include_str!("runner/encoder.py");

/// The codec's decoder (`runner/decoder.py`, `decode_values`).
pub const DECODER_SOURCE: &str = include_str!("runner/decoder.py");

/// The program the interpreter is started with (`runner/bootstrap.py`): it compiles the
/// package's modules, whose sources its arguments hold, in a short-lived child (so that the
/// compiler's peak memory is not in the process every test child is forked from), imports them
/// from those code objects and calls the entry module's `main()`.
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

/// Arguments that make the interpreter run an embedded package through the bootstrap: isolated
/// mode, no `site`, the bootstrap program, the entry module's name, the manifest (each module's
/// name and how many pieces its source takes), then every module's source in pieces
/// ([`argument_pieces`]), in the manifest's order. Nothing is written to a disk: the modules are
/// imported from memory.
pub fn bootstrapped_arguments(entry: &str, modules: &[(&str, &str)]) -> Vec<String> {
    let pieces: Vec<(&str, Vec<&str>)> = modules
        .iter()
        .map(|(name, source)| (*name, argument_pieces(source)))
        .collect();
    let manifest = pieces
        .iter()
        .map(|(name, pieces)| format!("{name} {}", pieces.len()))
        .collect::<Vec<_>>()
        .join(" ");
    let mut arguments: Vec<String> = ["-I", "-S", "-c", BOOTSTRAP_SOURCE, entry]
        .into_iter()
        .map(str::to_owned)
        .collect();
    arguments.push(manifest);
    arguments.extend(
        pieces
            .into_iter()
            .flat_map(|(_, pieces)| pieces)
            .map(str::to_owned),
    );
    arguments
}

/// Arguments for the interpreter that make it a runner ([`bootstrapped_arguments`] of
/// [`RUNNER_MODULES`] and [`TEST_CHILD_STEPS_MODULE`]).
pub fn interpreter_arguments() -> Vec<String> {
    let steps = test_child_steps_source();
    let mut modules = RUNNER_MODULES.to_vec();
    modules.push((TEST_CHILD_STEPS_MODULE, &steps));
    bootstrapped_arguments(RUNNER_ENTRY, &modules)
}

/// The runner's command line for the sandbox: `python` (the sandbox's interpreter) and
/// [`interpreter_arguments`].
pub fn runner_command() -> Vec<String> {
    std::iter::once("python".to_owned())
        .chain(interpreter_arguments())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{
        ARGUMENT_PIECE_BYTES, CODEC_SOURCE, RUNNER_MODULES, argument_pieces, interpreter_arguments,
    };

    #[test]
    fn a_source_crosses_in_pieces_linux_accepts_that_join_to_it() {
        let long_line = format!("x = '{}'\n", "é".repeat(ARGUMENT_PIECE_BYTES));
        // A real module, repeated until it needs more than two pieces.
        let long_module = CODEC_SOURCE.repeat(2 * ARGUMENT_PIECE_BYTES / CODEC_SOURCE.len() + 1);
        for source in [long_module.as_str(), &long_line, "", "a\nb"] {
            let pieces = argument_pieces(source);
            assert_eq!(pieces.concat(), source);
            assert!(
                pieces
                    .iter()
                    .all(|piece| piece.len() <= ARGUMENT_PIECE_BYTES)
            );
        }
        // Whole lines where a line break is in reach.
        assert!(argument_pieces(&long_module).len() > 1);
        assert!(
            argument_pieces(&long_module)
                .iter()
                .all(|piece| piece.ends_with('\n'))
        );
    }

    #[test]
    fn every_argument_of_the_runner_fits_linux_s_limit() {
        // MAX_ARG_STRLEN: 128 KiB with the terminating NUL.
        let arguments = interpreter_arguments();
        assert!(arguments.iter().all(|argument| argument.len() < 128 * 1024));
        let sources: usize = RUNNER_MODULES.iter().map(|(_, source)| source.len()).sum();
        assert!(arguments.iter().map(String::len).sum::<usize>() > sources);
    }

    #[test]
    fn every_file_of_the_runner_is_one_of_its_modules() {
        let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runner");
        let mut files: Vec<String> = std::fs::read_dir(directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".py") && name != "bootstrap.py")
            .collect();
        files.sort();
        let mut modules: Vec<String> = RUNNER_MODULES
            .iter()
            .map(|(name, _)| match name.strip_prefix("rlvr_runner.") {
                Some(module) => format!("{module}.py"),
                None => "__init__.py".to_owned(),
            })
            .collect();
        modules.sort();
        assert_eq!(files, modules);
    }
}
