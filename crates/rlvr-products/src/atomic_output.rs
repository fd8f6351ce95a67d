//! Output files that appear only when complete: written to `OUT.partial`, renamed at the end.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::ProductsError;

/// A JSON Lines output being written next to its final path.
pub(crate) struct AtomicOutput {
    temporary: PathBuf,
    output: PathBuf,
    /// Where the lines go.
    pub(crate) writer: BufWriter<fs_err::File>,
}

impl AtomicOutput {
    /// Creates `output` with the extension `jsonl.partial`.
    pub(crate) fn create(output: &Path) -> Result<Self, ProductsError> {
        let temporary = output.with_extension("jsonl.partial");
        let file = fs_err::File::create(&temporary)
            .map_err(|source| ProductsError::io(&temporary, source))?;
        Ok(Self {
            writer: BufWriter::with_capacity(1 << 20, file),
            temporary,
            output: output.to_path_buf(),
        })
    }

    /// The path being written, for error messages.
    pub(crate) fn temporary(&self) -> &Path {
        &self.temporary
    }

    /// Flushes and moves the file into place.
    pub(crate) fn commit(self) -> Result<(), ProductsError> {
        let Self {
            temporary,
            output,
            mut writer,
        } = self;
        writer
            .flush()
            .map_err(|source| ProductsError::io(&temporary, source))?;
        drop(writer);
        fs_err::rename(&temporary, &output).map_err(|source| ProductsError::io(&output, source))
    }
}
