//! Watching a running test: until it is done, its wall clock runs out, or its output reaches
//! the cap (a program whose writes fail at the cap may go on looping: the cap is its verdict,
//! reached now, as the sandbox kills a Python program's tree the moment a stream passes it).

use std::fs::File;
use std::io;
use std::time::Instant;

/// How watching a test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Watched {
    /// `done` said so.
    Done,
    /// The deadline passed first.
    TimedOut,
    /// Its stdout reached `output_bytes` first.
    OutputCapped,
}

/// How long one wait lasts at most between two looks at the output's size.
const OUTPUT_CHECK_MS: u128 = 20;

/// Calls `done(milliseconds)`, which waits at most that long and says whether the test is
/// done, until it is, `deadline` passes, or `stdout` holds `output_bytes` (0: no cap).
pub(crate) fn watch(
    deadline: Instant,
    stdout: &File,
    output_bytes: u64,
    mut done: impl FnMut(i32) -> io::Result<bool>,
) -> io::Result<Watched> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Watched::TimedOut);
        }
        let slice = i32::try_from(left.as_millis().clamp(1, OUTPUT_CHECK_MS)).unwrap_or(1);
        if done(slice)? {
            return Ok(Watched::Done);
        }
        if output_bytes > 0 && stdout.metadata()?.len() >= output_bytes {
            return Ok(Watched::OutputCapped);
        }
    }
}
