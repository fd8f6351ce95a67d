//! What can go wrong with an output, and how the binary finds it in an error chain to choose
//! the exit status (a write failure and a refused output are told apart).

use std::error::Error;
use std::path::PathBuf;

/// A problem with an output file.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Creating, writing, syncing or moving the output into place failed (ENOSPC, EIO, ...).
    /// Nothing appeared under the output's name and a previous file there is untouched.
    #[error("could not write `{}`", path.display())]
    Write {
        /// The output (its final name, not the temporary's).
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The output (or a directory for it) could not be created before any work: a missing
    /// directory, no permission, a read-only filesystem. A usage error, unless the disk is full
    /// or failing ([`OutputError::is_write_failure`]).
    #[error("could not create `{}`", path.display())]
    Create {
        /// The output or directory.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The output is one of the command's inputs, or would replace one.
    #[error(
        "refusing to write `{}`: it {relation} the input `{}`; choose another output",
        output.display(),
        input.display()
    )]
    WouldReplaceInput {
        /// The output path as given.
        output: PathBuf,
        /// The input path as given.
        input: PathBuf,
        /// How the two are the same file: "is", "is a hard link to", "is a symlink to".
        relation: &'static str,
    },
    /// The output path cannot be used (a directory where a file is needed, a file where a directory is, no file name).
    #[error("`{}` {reason}", path.display())]
    UnusablePath {
        /// The path given.
        path: PathBuf,
        /// Why it cannot be written.
        reason: &'static str,
    },
}

impl OutputError {
    /// Wraps an I/O error on the output `path`.
    pub fn write(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Write {
            path: path.into(),
            source,
        }
    }

    /// An I/O error on the output `path`; one that already carries an [`OutputError`] (as
    /// [`crate::AtomicFile`]'s writes return) is unwrapped rather than wrapped twice.
    pub fn from_io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        if !source.get_ref().is_some_and(|inner| inner.is::<Self>()) {
            return Self::write(path, source);
        }
        let kind = source.kind();
        match source.into_inner().map(|inner| inner.downcast::<Self>()) {
            Some(Ok(carried)) => *carried,
            // Not reached: the check above saw an `OutputError` inside.
            _ => Self::write(path, std::io::Error::from(kind)),
        }
    }

    /// An error creating the output `path`.
    pub fn create(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Create {
            path: path.into(),
            source,
        }
    }

    /// True for a failure of the disk (full, over quota, I/O error) or while writing: exit
    /// status "output not written". False for an output refused or impossible to create before
    /// any work (a usage error: fix the path).
    pub fn is_write_failure(&self) -> bool {
        match self {
            Self::Write { .. } => true,
            Self::Create { source, .. } => {
                matches!(
                    source.kind(),
                    std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
                ) || source.raw_os_error() == Some(rustix::io::Errno::IO.raw_os_error())
            }
            Self::WouldReplaceInput { .. } | Self::UnusablePath { .. } => false,
        }
    }

    /// This error inside an `std::io::Error`, as [`crate::AtomicFile`]'s `Write` returns it.
    pub(crate) fn into_io(self) -> std::io::Error {
        let kind = match &self {
            Self::Write { source, .. } | Self::Create { source, .. } => source.kind(),
            Self::WouldReplaceInput { .. } | Self::UnusablePath { .. } => {
                std::io::ErrorKind::InvalidInput
            }
        };
        std::io::Error::new(kind, self)
    }
}

/// The first [`OutputError`] in an error chain, whether it is a link of the chain itself or is
/// carried inside an `std::io::Error` (as [`crate::AtomicFile`]'s writes return it, and as
/// libraries such as `parquet` pass it on).
pub fn find_output_error<'a>(
    chain: impl IntoIterator<Item = &'a (dyn Error + 'static)>,
) -> Option<&'a OutputError> {
    chain.into_iter().find_map(|error| {
        error.downcast_ref::<OutputError>().or_else(|| {
            error
                .downcast_ref::<std::io::Error>()
                .and_then(std::io::Error::get_ref)
                .and_then(|inner| inner.downcast_ref::<OutputError>())
        })
    })
}
