//! Standard output for every command. `println!` panics when stdout is gone (`rlvr stats FILE |
//! head`); [`outln!`] and [`out!`] return the error instead, so it travels up like any other
//! and `exit.rs` turns a closed pipe into the conventional quiet end (death by SIGPIPE, which
//! a shell reports as 141). Every command prints through these; `print_stdout` is denied in
//! this crate so a new `println!` cannot slip in.

use std::io::Write;

/// Writes formatted text and a newline to standard output.
macro_rules! outln {
    () => {
        $crate::stdout::write_text(format_args!("\n"))
    };
    ($($argument:tt)*) => {
        $crate::stdout::write_text(format_args!("{}\n", format_args!($($argument)*)))
    };
}

/// Writes formatted text to standard output.
macro_rules! out {
    ($($argument:tt)*) => {
        $crate::stdout::write_text(format_args!($($argument)*))
    };
}

pub(crate) use {out, outln};

/// Writes `text` to standard output and flushes it (stdout is line-buffered anyway; flushing
/// here makes a closed pipe show up at the write that hit it).
pub(crate) fn write_text(text: std::fmt::Arguments<'_>) -> Result<(), crate::exit::Error> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_fmt(text)
        .and_then(|()| stdout.flush())
        .map_err(crate::exit::Error::write(STANDARD_OUTPUT))
}

/// The stream's name in an error message.
pub(crate) const STANDARD_OUTPUT: &str = "standard output";
