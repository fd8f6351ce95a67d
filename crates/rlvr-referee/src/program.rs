//! The referee program: its own files plus the runner's framing and value codec, so that both
//! ends of a live call speak one format.

/// The Python source of the referee, in load order.
pub fn referee_program() -> String {
    [
        include_str!("referee/header.py"),
        rlvr_runner::FRAMING_SOURCE,
        rlvr_runner::CODEC_SOURCE,
        include_str!("referee/live.py"),
        include_str!("referee/test.py"),
        include_str!("referee/main.py"),
    ]
    .join("\n")
}

/// Arguments that make the interpreter a referee: isolated mode, no `site`, the program through
/// the runner's bootstrap (compiled in a short-lived child; the program crosses in pieces, as
/// one argument may not exceed 128 KiB).
pub fn interpreter_arguments(program: &str) -> Vec<&str> {
    rlvr_runner::bootstrapped_arguments(program)
}
