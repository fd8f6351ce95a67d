//! Where `rlvr verify` writes result lines: standard output, streamed as results become final,
//! or `--out FILE` through [`rlvr_output::AtomicFile`], moved into place by [`ResultsOutput::finish`]
//! (a failure before that leaves any previous file untouched).

use crate::exit::Error;
use std::io::Write;
use std::path::Path;

/// The results' destination.
pub(crate) enum ResultsOutput {
    Stdout(std::io::Stdout),
    File(rlvr_output::AtomicFile),
}

impl ResultsOutput {
    /// Standard output without a path; else the file, not yet visible.
    pub(crate) fn open(path: Option<&Path>) -> Result<Self, Error> {
        Ok(match path {
            None => Self::Stdout(std::io::stdout()),
            Some(path) => Self::File(rlvr_output::AtomicFile::create(path)?),
        })
    }

    /// Moves a file output into place.
    pub(crate) fn finish(self) -> Result<(), Error> {
        match self {
            Self::Stdout(mut stdout) => stdout
                .flush()
                .map_err(Error::write(crate::stdout::STANDARD_OUTPUT))?,
            Self::File(file) => file.commit()?,
        }
        Ok(())
    }
}

impl Write for ResultsOutput {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self {
            Self::Stdout(stdout) => stdout.write(bytes),
            Self::File(file) => file.write(bytes),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            // A file output is flushed once, when committed: result lines reach standard
            // output as they become final, and a file only when it is whole.
            Self::Stdout(stdout) => stdout.flush(),
            Self::File(_) => Ok(()),
        }
    }
}
